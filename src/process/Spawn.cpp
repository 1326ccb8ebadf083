#include "process/Spawn.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <utility>

namespace switchboard::process {

namespace {

ProcessError system_error(std::string what, int error) {
  ProcessError::Code code = ProcessError::Code::SpawnFailed;
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      code = ProcessError::Code::ExecutableNotFound;
      break;
    case EACCES:
    case EPERM:
    case ENOEXEC:
    case EISDIR:
    case ETXTBSY:
      code = ProcessError::Code::NotExecutable;
      break;
    case EMFILE:
    case ENFILE:
    case EAGAIN:
    case ENOMEM:
      code = ProcessError::Code::ResourceExhausted;
      break;
    default:
      break;
  }
  return ProcessError{code, std::move(what) + ": " + std::strerror(error), error};
}

// Moves `fd` to a number ≥ 3 (keeping close-on-exec). If the daemon was started with 0, 1 or 2 closed, pipe2
// may hand those out, and a dup2 onto the same number would be a no-op that leaves close-on-exec set (and a
// later dup2 of another pipe could overwrite it).
bool move_above_stdio(UniqueFd& fd) {
  if (fd.get() > 2) return true;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, 3);
  if (moved < 0) return false;
  fd.reset(moved);
  return true;
}

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

ProcessResult<Pipe> make_pipe(const char* which) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return system_error(std::string("cannot create the ") + which + " pipe", errno);
  Pipe pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
  if (!move_above_stdio(pipe.read) || !move_above_stdio(pipe.write))
    return system_error(std::string("cannot create the ") + which + " pipe", errno);
  return pipe;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  // execve's prototype takes char* const[] for historical reasons; it does not write through them.
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// What the child reads between clone and execve, and where it leaves the errno of a step that failed. The parent
// waits (CLONE_VFORK) until the child has exec'd or exited, so the child may read this from the parent's stack.
struct ChildSetup {
  const char* executable = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* working_directory = nullptr;  // nullptr: stay where the daemon is
  int pipe_ends[3] = {-1, -1, -1};          // onto 0, 1, 2; each above 2 (make_pipe)
  bool dies_with_parent = false;
  pid_t parent = 0;
  int descriptor_limit = 0;  // above every open descriptor: for closing them one by one without close_range
  // Written by the child only: the failed step's errno and what the step was.
  int error = 0;
  const char* failed_step = nullptr;
};

// The kernel's struct sigaction for rt_sigaction (not glibc's, which has a larger mask).
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  std::uint64_t mask;
};

constexpr std::size_t kKernelSigsetBytes = sizeof(std::uint64_t);
constexpr std::size_t kChildStackBytes = 64 * 1024;

// The child shares the daemon's memory until it execs: it makes raw system calls only (no allocation, no lock,
// nothing a sanitizer intercepts) and is not instrumented. syscall() reports failures through errno, which here
// is the suspended parent thread's; the child copies it into the setup at once.
[[noreturn]] __attribute__((no_sanitize("address", "undefined"))) void fail_in_child(ChildSetup& setup, const char* step) {
  setup.error = errno;
  setup.failed_step = step;
  ::syscall(SYS_exit_group, 127);
  __builtin_unreachable();
}

__attribute__((no_sanitize("address", "undefined"))) int child_main(void* argument) {
  ChildSetup& setup = *static_cast<ChildSetup*>(argument);
  KernelSigaction default_action;
  default_action.handler = SIG_DFL;
  default_action.flags = 0;
  default_action.restorer = nullptr;
  default_action.mask = 0;
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal == SIGKILL || signal == SIGSTOP) continue;
    ::syscall(SYS_rt_sigaction, signal, &default_action, nullptr, kKernelSigsetBytes);
  }
  if (::syscall(SYS_setpgid, 0, 0) != 0) fail_in_child(setup, "setpgid");
  for (int target = 0; target < 3; ++target) {
    if (::syscall(SYS_dup2, setup.pipe_ends[target], target) != target) fail_in_child(setup, "dup2");
  }
  if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
    // A kernel older than 5.9 (a Debian 12 container on an older host): one close per possible descriptor.
    if (errno != ENOSYS) fail_in_child(setup, "close_range");
    for (int fd = 3; fd < setup.descriptor_limit; ++fd) ::syscall(SYS_close, fd);
  }
  if (setup.working_directory != nullptr && ::syscall(SYS_chdir, setup.working_directory) != 0) {
    fail_in_child(setup, "chdir");
  }
  if (setup.dies_with_parent) {
    if (::syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) fail_in_child(setup, "prctl(PR_SET_PDEATHSIG)");
    if (::syscall(SYS_getppid) != setup.parent) ::syscall(SYS_exit_group, 127);  // the parent is already gone
  }
  const std::uint64_t no_signals = 0;
  ::syscall(SYS_rt_sigprocmask, SIG_SETMASK, &no_signals, nullptr, kKernelSigsetBytes);
  ::syscall(SYS_execve, setup.executable, setup.argv, setup.envp);
  fail_in_child(setup, "execve");
}

// Every signal blocked in the calling thread for the lifetime of the object: the child starts with this mask.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &m_previous);
  }
  ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &m_previous, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t m_previous{};
};

}  // namespace

ProcessResult<SpawnedChild> spawn_with_pipes(const std::filesystem::path& executable,
                                             const std::vector<std::string>& argv,
                                             const std::vector<std::string>& envp, const SpawnOptions& options) {
  auto in = make_pipe("stdin");
  if (!in) return in.error();
  auto out = make_pipe("stdout");
  if (!out) return out.error();
  auto err = make_pipe("stderr");
  if (!err) return err.error();

  const auto arguments = c_strings(argv);
  const auto environment = c_strings(envp);
  ChildSetup setup;
  setup.executable = executable.c_str();
  setup.argv = arguments.data();
  setup.envp = environment.data();
  setup.working_directory = options.working_directory.empty() ? nullptr : options.working_directory.c_str();
  setup.pipe_ends[0] = in->read.get();
  setup.pipe_ends[1] = out->write.get();
  setup.pipe_ends[2] = err->write.get();
  setup.dies_with_parent = options.dies_with_parent;
  setup.parent = ::getpid();
  const long open_max = ::sysconf(_SC_OPEN_MAX);
  setup.descriptor_limit = open_max > 0 && open_max < (1 << 20) ? static_cast<int>(open_max) : (1 << 20);

  void* stack = ::mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return system_error("cannot run " + executable.string() + ": no stack for the child", errno);
  pid_t pid;
  int clone_errno = 0;
  {
    AllSignalsBlocked blocked;
    pid = ::clone(child_main, static_cast<char*>(stack) + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
    if (pid < 0) clone_errno = errno;
  }
  ::munmap(stack, kChildStackBytes);
  if (pid < 0) return system_error("cannot run " + executable.string(), clone_errno);
  if (setup.error != 0) {
    int ignored = 0;
    while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
    }
    // The usual failure, a missing or unrunnable executable, needs no step's name to be understood.
    const bool exec_failed = setup.failed_step == nullptr || std::strcmp(setup.failed_step, "execve") == 0;
    const std::string step = exec_failed ? "" : std::string(" (") + setup.failed_step + ")";
    return system_error("cannot run " + executable.string() + step, setup.error);
  }

  SpawnedChild child;
  child.pid = pid;
  child.stdin_write = std::move(in->write);
  child.stdout_read = std::move(out->read);
  child.stderr_read = std::move(err->read);
  // The child's ends close here, with the Pipes: the parent must not hold them, or it would never see EOF.
  return child;
}

}  // namespace switchboard::process
