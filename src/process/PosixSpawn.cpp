#include "process/PosixSpawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace switchboard::process {

namespace {

// posix_spawn_file_actions_addclosefrom_np appeared in glibc 2.34 (Debian 12 has 2.36).
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
#define SWITCHBOARD_HAVE_ADDCLOSEFROM 1
#endif

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

// Without addclosefrom_np: close every descriptor open now, as listed by /proc/self/fd. Best effort only: a
// descriptor another thread opens between the listing and the spawn is inherited (the daemon's own threads
// open theirs close-on-exec; the fallback exists for other C libraries, not for Debian 12).
[[maybe_unused]] int add_close_each_open_fd(posix_spawn_file_actions_t* actions) {
  DIR* directory = ::opendir("/proc/self/fd");
  if (directory == nullptr) return errno;
  const int own = ::dirfd(directory);
  int result = 0;
  while (const dirent* entry = ::readdir(directory)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end == entry->d_name || *end != '\0' || fd <= 2 || fd == own) continue;
    result = ::posix_spawn_file_actions_addclose(actions, static_cast<int>(fd));
    if (result != 0) break;
  }
  ::closedir(directory);
  return result;
}

class FileActions {
 public:
  FileActions() { m_status = ::posix_spawn_file_actions_init(&m_actions); }
  ~FileActions() {
    if (m_status == 0) ::posix_spawn_file_actions_destroy(&m_actions);
  }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  int status() const { return m_status; }
  posix_spawn_file_actions_t* get() { return &m_actions; }

 private:
  posix_spawn_file_actions_t m_actions{};
  int m_status = 0;
};

class SpawnAttributes {
 public:
  SpawnAttributes() { m_status = ::posix_spawnattr_init(&m_attributes); }
  ~SpawnAttributes() {
    if (m_status == 0) ::posix_spawnattr_destroy(&m_attributes);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;
  int status() const { return m_status; }
  posix_spawnattr_t* get() { return &m_attributes; }

 private:
  posix_spawnattr_t m_attributes{};
  int m_status = 0;
};

int configure_attributes(SpawnAttributes& attributes) {
  sigset_t all;
  sigfillset(&all);
  sigset_t none;
  sigemptyset(&none);
  int rc = attributes.status();
  if (rc == 0) rc = ::posix_spawnattr_setpgroup(attributes.get(), 0);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(attributes.get(), &all);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(attributes.get(), &none);
  if (rc == 0) {
    rc = ::posix_spawnattr_setflags(attributes.get(),
                                    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  }
  return rc;
}

int configure_file_actions(FileActions& actions, const Pipe& in, const Pipe& out, const Pipe& err,
                           const std::filesystem::path& working_directory) {
  int rc = actions.status();
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(actions.get(), in.read.get(), 0);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(actions.get(), out.write.get(), 1);
  if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(actions.get(), err.write.get(), 2);
  if (rc == 0) {
#ifdef SWITCHBOARD_HAVE_ADDCLOSEFROM
    rc = ::posix_spawn_file_actions_addclosefrom_np(actions.get(), 3);
#else
    rc = add_close_each_open_fd(actions.get());
#endif
  }
  if (rc == 0 && !working_directory.empty())
    rc = ::posix_spawn_file_actions_addchdir_np(actions.get(), working_directory.c_str());
  return rc;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  // posix_spawn's prototype takes char* const[] for historical reasons; it does not write through them.
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

ProcessResult<SpawnedChild> spawn_with_pipes(const std::filesystem::path& executable,
                                             const std::vector<std::string>& argv,
                                             const std::vector<std::string>& envp,
                                             const std::filesystem::path& working_directory) {
  auto in = make_pipe("stdin");
  if (!in) return in.error();
  auto out = make_pipe("stdout");
  if (!out) return out.error();
  auto err = make_pipe("stderr");
  if (!err) return err.error();

  SpawnAttributes attributes;
  if (const int rc = configure_attributes(attributes); rc != 0)
    return system_error("cannot set up spawn attributes", rc);
  FileActions actions;
  if (const int rc = configure_file_actions(actions, *in, *out, *err, working_directory); rc != 0)
    return system_error("cannot set up spawn file actions", rc);

  const auto arguments = c_strings(argv);
  const auto environment = c_strings(envp);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, executable.c_str(), actions.get(), attributes.get(), arguments.data(), environment.data());
  if (rc != 0) return system_error("cannot run " + executable.string(), rc);

  SpawnedChild child;
  child.pid = pid;
  child.stdin_write = std::move(in->write);
  child.stdout_read = std::move(out->read);
  child.stderr_read = std::move(err->read);
  // The child's ends close here, with the Pipes: the parent must not hold them, or it would never see EOF.
  return child;
}

}  // namespace switchboard::process
