#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/GroupMembers.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/process/ExecutableLookup.h"
#include "process/Spawn.h"
#include "process/ProcessGroupRegistry.h"
#include "process/StderrForwarder.h"
#include "process/StdinWriter.h"
#include "switchboard/support/RandomId.h"
#include "switchboard/transport/FdReader.h"
#include "switchboard/transport/LineFramer.h"

namespace switchboard::process {

namespace {

// How often the fallback without pidfd_open looks for the exit.
constexpr std::chrono::milliseconds kExitPollInterval{100};

ProcessError invalid_spec(std::string message) {
  return ProcessError{ProcessError::Code::InvalidSpec, std::move(message), 0};
}

// A write to the stdin of a child that has exited must come back as EPIPE, not kill the daemon. The daemon
// ignores SIGPIPE already; this makes the process layer correct on its own (tests, tools). Only a default
// disposition is changed: a handler someone installed on purpose is left alone. Children get the default back
// (POSIX_SPAWN_SETSIGDEF).
void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

std::optional<ProcessError> check_working_directory(const std::filesystem::path& directory) {
  if (directory.empty()) return std::nullopt;
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0) {
    const int error = errno;
    return ProcessError{ProcessError::Code::WorkingDirectoryInvalid,
                        "cannot use working directory " + directory.string() + ": " + std::strerror(error), error};
  }
  if (!S_ISDIR(info.st_mode)) {
    return ProcessError{ProcessError::Code::WorkingDirectoryInvalid,
                        "cannot use working directory " + directory.string() + ": not a directory", ENOTDIR};
  }
  return std::nullopt;
}

bool contains_nul(const std::string& text) { return text.find('\0') != std::string::npos; }

}  // namespace

// Everything asynchronous about one child. The ChildProcess handle owns it; its pending operations own it too
// (shared_from_this), so it outlives a handle destroyed mid-operation: detach() then turns every callback off
// and kills the group, and the pending exit watch finishes the reaping in the background.
class ChildProcess::State : public std::enable_shared_from_this<State> {
 public:
  State(boost::asio::io_context& io, const SpawnSpec& spec, Handlers handlers, SpawnedChild child,
        std::filesystem::path executable, std::string log_name)
      : m_io(io),
        m_pid(child.pid),
        m_origin(spec.environment.get(kOriginVariable).value_or("")),
        m_executable(std::move(executable)),
        m_log_name(std::move(log_name)),
        m_drain_timeout(spec.exit_drain_timeout),
        m_handlers(std::move(handlers)),
        m_pidfd(io),
        m_poll_timer(io),
        m_stop_timer(io),
        m_drain_timer(io),
        m_stdout_framer(spec.max_stdout_line_bytes,
                        transport::LineFramer::Handler{[this](std::string_view line) { on_stdout_line(line); },
                                                       [this](std::size_t limit) { on_stdout_overlong(limit); }}),
        m_stderr(spec.stderr_options, m_log_name),
        m_stdin(StdinWriter::create(io, std::move(child.stdin_write), spec.stdin_queue_limit_bytes)),
        m_stdout_fd(std::move(child.stdout_read)),
        m_stderr_fd(std::move(child.stderr_read)) {}

  ~State() {
    if (m_status) return;
    // The io_context went away before the child was reaped: make sure it dies, reap it if it already has, and
    // forget the group (SIGKILLed: nothing of it can run any more).
    ::kill(-m_pid, SIGKILL);
    int ignored = 0;
    ::waitpid(m_pid, &ignored, WNOHANG);
    ProcessGroupRegistry::the().remove(m_pid);
  }

  State(const State&) = delete;
  State& operator=(const State&) = delete;

  void start(bool force_exit_polling) {
    std::weak_ptr<State> weak = weak_from_this();
    // FdReader duplicates the descriptor; ours closes when m_*_fd goes.
    m_stdout_reader = transport::FdReader::create(
        m_io, m_stdout_fd.get(),
        [weak](std::string_view chunk) {
          if (auto self = weak.lock()) self->on_stdout_data(chunk);
        },
        [weak] {
          if (auto self = weak.lock()) self->on_stdout_end();
        });
    m_stderr_reader = transport::FdReader::create(
        m_io, m_stderr_fd.get(),
        [weak](std::string_view chunk) {
          if (auto self = weak.lock()) self->m_stderr.feed(chunk);
        },
        [weak] {
          if (auto self = weak.lock()) self->on_stderr_end();
        });
    m_stdout_fd.reset();
    m_stderr_fd.reset();
    m_stdout_reader->start();
    m_stderr_reader->start();
    watch_exit(force_exit_polling);
  }

  // The handle is going away.
  void detach() {
    m_detached = true;
    if (!m_status) send_to_group(SIGKILL);
    m_stdin->abort();
    stop_readers();
    m_stop_timer.cancel();
    m_drain_timer.cancel();
    // A callback may be running right now (it may be what destroyed the handle): free the callbacks, and what
    // they captured, only once it has returned.
    boost::asio::post(m_io, [self = shared_from_this()] {
      self->m_handlers = {};
      self->m_stop_callbacks.clear();
    });
  }

  void begin_stop(const StopPolicy& policy, bool graceful_step_taken, StopCallback on_stopped) {
    if (m_detached) return;
    if (m_finished) {
      if (on_stopped) boost::asio::post(m_io, [status = *m_status, done = std::move(on_stopped)] { done(status); });
      return;
    }
    if (on_stopped) m_stop_callbacks.push_back(std::move(on_stopped));
    if (m_status || m_escalation != Escalation::None) return;
    if (graceful_step_taken) {
      m_escalation = Escalation::Graceful;
      arm_stop_timer(policy.graceful_timeout, policy.terminate_timeout);
      return;
    }
    terminate(policy.terminate_timeout);
  }

  void kill_now() {
    if (m_status) return;
    m_escalation = Escalation::Killed;
    m_stop_timer.cancel();
    send_to_group(SIGKILL);
  }

  bool signal_group(int signal) {
    if (m_status) return false;
    return send_to_group(signal);
  }

  ProcessResult<void> write_stdin(std::string bytes) {
    if (m_status) {
      return ProcessError{ProcessError::Code::StdinClosed, "the child has exited (" + to_string(*m_status) + ")", 0};
    }
    return m_stdin->write(std::move(bytes));
  }

  boost::asio::io_context& m_io;
  const pid_t m_pid;
  const std::string m_origin;  // this child's kOriginVariable value, inherited by everything it starts
  const std::filesystem::path m_executable;
  const std::string m_log_name;
  const std::chrono::milliseconds m_drain_timeout;

  Handlers m_handlers;
  std::vector<StopCallback> m_stop_callbacks;
  std::optional<ExitStatus> m_status;
  bool m_finished = false;
  bool m_detached = false;
  Counters m_counters;

  boost::asio::posix::stream_descriptor m_pidfd;
  boost::asio::steady_timer m_poll_timer;
  boost::asio::steady_timer m_stop_timer;
  boost::asio::steady_timer m_drain_timer;

  enum class Escalation { None, Graceful, Terminated, Killed };
  Escalation m_escalation = Escalation::None;

  transport::LineFramer m_stdout_framer;
  StderrForwarder m_stderr;
  std::shared_ptr<StdinWriter> m_stdin;
  UniqueFd m_stdout_fd;
  UniqueFd m_stderr_fd;
  std::shared_ptr<transport::FdReader> m_stdout_reader;
  std::shared_ptr<transport::FdReader> m_stderr_reader;
  bool m_stdout_open = true;
  bool m_stderr_open = true;

 private:
  bool send_to_group(int signal) {
    // What escaped the group (tools an agent started with setsid) is found by parentage, so it is listed while the
    // child is alive to be their ancestor. It is signalled only after the group the child leads
    // (POSIX_SPAWN_SETPGROUP with pgid 0): killing the child's own children first would let a child that waits for
    // them see them die and exit by itself, with a status that hides the kill.
    std::vector<pid_t> started;
    if (signal == SIGTERM || signal == SIGKILL) started = processes_started_by(m_pid);
    const bool delivered = ::kill(-m_pid, signal) == 0;
    const int group_errno = errno;
    for (const pid_t pid : started) ::kill(pid, signal);
    if (delivered) return true;
    if (group_errno != ESRCH) {
      spdlog::warn("{}: cannot send signal {} to its group: {}", m_log_name, signal, std::strerror(group_errno));
    }
    return false;
  }

  void terminate(std::chrono::milliseconds terminate_timeout) {
    m_escalation = Escalation::Terminated;
    spdlog::debug("{}: stopping: SIGTERM to the process group", m_log_name);
    send_to_group(SIGTERM);
    m_stop_timer.expires_after(terminate_timeout);
    m_stop_timer.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (error || self->m_status || self->m_escalation != Escalation::Terminated) return;
      spdlog::info("{}: did not exit after SIGTERM, sending SIGKILL to the process group", self->m_log_name);
      self->kill_now();
    });
  }

  void arm_stop_timer(std::chrono::milliseconds graceful_timeout, std::chrono::milliseconds terminate_timeout) {
    m_stop_timer.expires_after(graceful_timeout);
    m_stop_timer.async_wait(
        [self = shared_from_this(), terminate_timeout](const boost::system::error_code& error) {
          if (error || self->m_status || self->m_escalation != Escalation::Graceful) return;
          self->terminate(terminate_timeout);
        });
  }

  // --- exit ---

  void watch_exit(bool force_polling) {
    const int pidfd = force_polling ? -1 : open_pidfd(m_pid);
    if (pidfd >= 0) {
      boost::system::error_code error;
      m_pidfd.assign(pidfd, error);
      if (!error) return wait_pidfd();
      ::close(pidfd);
      spdlog::warn("{}: cannot watch its pidfd ({}), polling for its exit", m_log_name, error.message());
    } else if (!force_polling) {
      spdlog::warn("{}: pidfd_open unavailable ({}), polling for its exit", m_log_name, std::strerror(errno));
    }
    poll_exit();
  }

  void wait_pidfd() {
    // A pidfd becomes readable when the process exits (it stays a zombie until our waitpid below).
    m_pidfd.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                       [self = shared_from_this()](const boost::system::error_code& error) {
                         if (error == boost::asio::error::operation_aborted) return;
                         if (!self->try_reap()) self->wait_pidfd();
                       });
  }

  void poll_exit() {
    m_poll_timer.expires_after(kExitPollInterval);
    m_poll_timer.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (error) return;
      if (!self->try_reap()) self->poll_exit();
    });
  }

  // True once the child is reaped.
  bool try_reap() {
    if (m_status) return true;
    // Peek first (WNOWAIT): while the leader is an unreaped zombie its pid, and so its process group id, cannot
    // be reused, which makes this the one moment where killing the rest of the group is certain to hit only it.
    siginfo_t info{};
    int rc;
    do {
      rc = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);  // this pid only
    } while (rc < 0 && errno == EINTR);
    if (rc < 0) {
      spdlog::error("{}: waitid failed ({}): something else reaped it", m_log_name, std::strerror(errno));
      on_reaped(ExitStatus{});
      return true;
    }
    if (info.si_pid == 0) return false;  // still running (a spurious wake-up)
    // Whatever the child left behind in its group goes with it, and so does what it started in sessions of
    // their own (setsid): no parentage leads to those once the child is dead (they are the daemon's children
    // now, see OrphanReaper.h), but they carry its origin mark in their environment. So the group alone is
    // signalled here, not send_to_group(): its search by parentage would find nothing a dead leader still
    // parents, at the price of reading every process's stat on the way to the exit status.
    if (::kill(-m_pid, SIGKILL) != 0 && errno != ESRCH) {
      spdlog::warn("{}: cannot kill what is left of its group: {}", m_log_name, std::strerror(errno));
    }
    kill_marked_survivors();
    int status = 0;
    pid_t reaped;
    do {
      reaped = ::waitpid(m_pid, &status, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
    on_reaped(reaped == m_pid ? ExitStatus::from_wait_status(status) : ExitStatus{});
    return true;
  }

  void kill_marked_survivors() {
    if (m_origin.empty()) return;
    // As a child subreaper the daemon adopts every orphan of its descendants: whatever the child started and left
    // alive (or dying: a zombie stays listed until the reaper takes it) now hangs under a child of the daemon
    // that no ChildProcess owns. With no such child there is nothing to find, and the scan of every process on
    // the machine (milliseconds on a desktop, on the way out of every agent) is skipped. Without the subreaper
    // an orphan goes to init, and only the scan finds it.
    if (is_child_subreaper() && !has_unowned_child()) return;
    std::size_t killed = 0;
    for (const pid_t pid : processes_with_environment(kOriginVariable, m_origin, m_pid)) {
      if (pid != m_pid && ::kill(pid, SIGKILL) == 0) ++killed;
    }
    if (killed > 0) spdlog::info("{}: killed {} process(es) it had started outside its group", m_log_name, killed);
  }

  void on_reaped(ExitStatus status) {
    m_status = status;
    ProcessGroupRegistry::the().remove(m_pid);
    m_stop_timer.cancel();
    boost::system::error_code ignored;
    m_pidfd.close(ignored);
    m_stdin->abort();
    if (m_detached) return;
    if (!m_stdout_open && !m_stderr_open) return finish();
    m_drain_timer.expires_after(m_drain_timeout);
    m_drain_timer.async_wait([self = shared_from_this()](const boost::system::error_code& error) {
      if (error) return;
      spdlog::warn("{}: stdout/stderr still open {} ms after the exit (a daemonized grandchild?), giving up",
                   self->m_log_name, self->m_drain_timeout.count());
      self->finish();
    });
  }

  void finish() {
    if (m_finished || m_detached) return;
    m_finished = true;
    m_drain_timer.cancel();
    stop_readers();
    m_stderr.finish();
    const ExitStatus status = *m_status;
    if (status.success()) spdlog::debug("{}: {}", m_log_name, to_string(status));
    else spdlog::info("{}: {}", m_log_name, to_string(status));
    // Moved out first: the callbacks may destroy the handle, and they must not be destroyed while they run.
    Handlers handlers = std::move(m_handlers);
    std::vector<StopCallback> stop_callbacks = std::move(m_stop_callbacks);
    if (handlers.on_exit) handlers.on_exit(status);
    for (auto& done : stop_callbacks) done(status);
  }

  void stop_readers() {
    if (m_stdout_reader) m_stdout_reader->stop();
    if (m_stderr_reader) m_stderr_reader->stop();
  }

  // --- stdout / stderr ---

  void on_stdout_data(std::string_view chunk) {
    if (m_detached || m_finished) return;
    m_stdout_framer.feed(chunk);
  }

  void on_stdout_line(std::string_view line) {
    ++m_counters.stdout_lines;
    if (!m_detached && m_handlers.on_stdout_line) m_handlers.on_stdout_line(line);
  }

  void on_stdout_overlong(std::size_t limit) {
    ++m_counters.stdout_overlong_lines;
    spdlog::warn("{}: skipped a stdout line longer than {} bytes", m_log_name, limit);
    if (!m_detached && m_handlers.on_stdout_overlong) m_handlers.on_stdout_overlong(limit);
  }

  void on_stdout_end() {
    if (m_detached || m_finished) return;
    m_stdout_framer.finish();
    m_stdout_open = false;
    if (!m_detached && m_handlers.on_stdout_eof) m_handlers.on_stdout_eof();
    if (m_status && !m_stderr_open) finish();
  }

  void on_stderr_end() {
    if (m_detached || m_finished) return;
    m_stderr_open = false;
    if (m_status && !m_stdout_open) finish();
  }
};

ProcessResult<std::unique_ptr<ChildProcess>> ChildProcess::spawn(boost::asio::io_context& io, SpawnSpec spec,
                                                                 Handlers handlers) {
  if (contains_nul(spec.program)) return invalid_spec("program name contains a NUL byte");
  for (const auto& arg : spec.args) {
    if (contains_nul(arg)) return invalid_spec("argument contains a NUL byte");
  }
  if (auto problem = spec.environment.validate()) return invalid_spec(std::move(*problem));
  if (auto problem = check_working_directory(spec.working_directory)) return std::move(*problem);

  const auto search_path = spec.environment.get("PATH").value_or(default_search_path());
  auto executable = find_executable(spec.program, search_path, spec.working_directory);
  if (!executable) return executable.error();

  std::vector<std::string> argv;
  argv.reserve(spec.args.size() + 1);
  argv.push_back(spec.program);
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());
  auto& registry = ProcessGroupRegistry::the();
  if (registry.size() >= ProcessGroupRegistry::kCapacity) {
    return ProcessError{ProcessError::Code::ResourceExhausted,
                        "too many child processes (" + std::to_string(ProcessGroupRegistry::kCapacity) + ")", 0};
  }

  ignore_sigpipe();
  // Everything the child starts inherits the mark (unless a tool clears its environment), which is how what it
  // started in sessions of its own is found when it exits.
  spec.environment.set(std::string(kOriginVariable), random_id("", 12));
  auto child = spawn_with_pipes(*executable, argv, spec.environment.entries(),
                                SpawnOptions{spec.working_directory, spec.dies_with_daemon});
  if (!child) return child.error();
  const pid_t pid = child->pid;

  std::string log_name = spec.stderr_options.log_name.empty()
                             ? executable->filename().string() + "[" + std::to_string(pid) + "]"
                             : spec.stderr_options.log_name;
  auto state = std::make_shared<State>(io, spec, std::move(handlers), std::move(*child), std::move(*executable),
                                       std::move(log_name));
  const bool registered = registry.add(pid);
  state->start(spec.force_exit_polling);
  if (!registered) {
    // Checked above, so only a race with another thread spawning gets here. The detached state kills and reaps.
    state->detach();
    return ProcessError{ProcessError::Code::ResourceExhausted, "too many child processes", 0};
  }
  spdlog::debug("{}: started {} in {}", state->m_log_name, state->m_executable.string(),
                spec.working_directory.empty() ? std::string("the daemon's directory")
                                               : spec.working_directory.string());
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(state)));
}

ChildProcess::ChildProcess(std::shared_ptr<State> state) : m_state(std::move(state)) {}

ChildProcess::~ChildProcess() { m_state->detach(); }

pid_t ChildProcess::pid() const { return m_state->m_pid; }
const std::filesystem::path& ChildProcess::executable() const { return m_state->m_executable; }
bool ChildProcess::running() const { return !m_state->m_status; }
std::optional<ExitStatus> ChildProcess::exit_status() const { return m_state->m_status; }
bool ChildProcess::finished() const { return m_state->m_finished; }

ProcessResult<void> ChildProcess::write_stdin(std::string bytes) { return m_state->write_stdin(std::move(bytes)); }
void ChildProcess::close_stdin() { m_state->m_stdin->close(); }
std::size_t ChildProcess::stdin_queued_bytes() const { return m_state->m_stdin->queued_bytes(); }

void ChildProcess::stop(StopPolicy policy, StopCallback on_stopped) {
  // The graceful step is the caller's code and may do anything, even destroy this object: keep the state.
  const std::shared_ptr<State> state = m_state;
  const bool take_graceful_step = policy.graceful && !state->m_status && state->m_escalation == State::Escalation::None;
  if (take_graceful_step) policy.graceful(*this);
  state->begin_stop(policy, take_graceful_step, std::move(on_stopped));
}

void ChildProcess::kill() { m_state->kill_now(); }
bool ChildProcess::signal_group(int signal) { return m_state->signal_group(signal); }

std::size_t ChildProcess::kill_started_processes() {
  if (!running()) return 0;
  std::size_t killed = 0;
  for (const pid_t started : processes_started_by(pid())) {
    if (::kill(started, SIGKILL) == 0) ++killed;
  }
  return killed;
}

std::size_t ChildProcess::kill_detached_descendants() {
  if (!running()) return 0;
  std::size_t killed = 0;
  for (const pid_t detached : detached_descendants_of(pid())) {
    if (::kill(detached, SIGKILL) == 0) ++killed;
  }
  return killed;
}

std::string ChildProcess::stderr_tail() const { return m_state->m_stderr.tail(); }

ChildProcess::Counters ChildProcess::counters() const {
  Counters counters = m_state->m_counters;
  counters.stderr_lines_logged = m_state->m_stderr.lines_logged();
  counters.stderr_lines_suppressed = m_state->m_stderr.lines_suppressed();
  return counters;
}

}  // namespace switchboard::process
