#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "switchboard/process/ExitStatus.h"
#include "switchboard/process/ProcessError.h"
#include "switchboard/process/SpawnSpec.h"

namespace switchboard::process {

class ChildProcess;

// The variable every child gets, with a value of its own: what the child starts inherits it, so when the child
// exits the processes it started in sessions of their own (setsid), which neither its group nor parentage reach
// any more, are found by it and killed too.
inline constexpr std::string_view kOriginVariable = "SWITCHBOARD_ORIGIN";

// How stop() ends a child: the caller's graceful step (close stdin, write an "interrupt" line), then SIGTERM
// to the process group once `graceful_timeout` has passed, then SIGKILL to the group once `terminate_timeout`
// has passed after that. Without a graceful step, SIGTERM is sent at once.
struct StopPolicy {
  std::function<void(ChildProcess&)> graceful;
  std::chrono::milliseconds graceful_timeout{5000};
  std::chrono::milliseconds terminate_timeout{5000};
};

// One supervised child process (an agent CLI) with pipes on its stdin, stdout and stderr, on the daemon's
// io_context. This is what every adapter builds on; it owns the whole life of the child:
//
// - spawn(): a vfork-style clone with only fds 0-2 inherited, a new process group, default signals, an explicit
//   environment and working directory (Spawn.h); the executable is resolved first, so a missing CLI is an
//   ExecutableNotFound value. Optionally with a parent-death signal, so the child dies with the daemon.
// - stdout is split into lines (capped: an over-long line is skipped, counted and reported, and the stream
//   recovers at the next '\n'; a '\r' before '\n' is dropped); EOF is reported.
// - stderr goes to the log, rate-limited, and its tail is kept for stderr_tail() (StderrForwarder.h).
// - stdin writes go through a bounded queue (StdinWriter.h).
// - the exit is watched with a pidfd on the reactor and reaped with waitpid(pid) for this pid only: never a
//   SIGCHLD handler, never waitpid(-1). Without pidfd_open (Linux < 5.3, or a seccomp filter refusing it) it
//   falls back to polling waitpid(pid, WNOHANG) every 100 ms: slower to notice an exit, never wrong.
// - when the child exits, the rest of its process group is SIGKILLed, and so is whatever it started in a
//   session of its own that still carries its origin mark (kOriginVariable): nothing an agent started outlives
//   it, unless the tool also cleared its environment.
//
// Callbacks run on the io_context thread, in this order: stdout lines and overlong reports as they come, then
// on_stdout_eof (if stdout reached EOF), then on_exit exactly once, last, after stdout and stderr have been
// drained (for at most SpawnSpec::exit_drain_timeout), then the stop() completions. A callback may destroy the
// ChildProcess.
//
// Destroying a ChildProcess never leaves an orphan and never crashes: if the child is still running its group
// is SIGKILLed; no callback runs any more; the reaping completes in the background on the io_context. Destroy
// it before its io_context, like any Asio object. Spawn from the io_context thread (the main thread): with the
// exec shim, the kernel signals the child when the *thread* that spawned it exits.
class ChildProcess {
 public:
  struct Handlers {
    std::function<void(std::string_view line)> on_stdout_line;
    std::function<void(std::size_t limit)> on_stdout_overlong;  // a line over the cap was skipped
    std::function<void()> on_stdout_eof;
    std::function<void(const ExitStatus&)> on_exit;
  };
  using StopCallback = std::function<void(const ExitStatus&)>;

  struct Counters {
    std::size_t stdout_lines = 0;
    std::size_t stdout_overlong_lines = 0;
    std::size_t stderr_lines_logged = 0;
    std::size_t stderr_lines_suppressed = 0;
  };

  static ProcessResult<std::unique_ptr<ChildProcess>> spawn(boost::asio::io_context& io, SpawnSpec spec,
                                                            Handlers handlers);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const;  // also the process group id
  const std::filesystem::path& executable() const;  // resolved, absolute (the target, not the shim)
  // The child has not been reaped yet.
  bool running() const;
  // Set once the child has been reaped (on_exit may still be waiting for the pipes to drain).
  std::optional<ExitStatus> exit_status() const;
  // on_exit has been delivered.
  bool finished() const;

  // StdinQueueFull when the queue is over its bound (nothing queued), StdinClosed after close_stdin(), after
  // the child closed its stdin, or after it exited.
  ProcessResult<void> write_stdin(std::string bytes);
  // EOF on the child's stdin once the queued bytes are written.
  void close_stdin();
  std::size_t stdin_queued_bytes() const;

  // Starts the escalation (see StopPolicy) and calls `on_stopped` with the exit status after on_exit. If the
  // child has finished already, `on_stopped` is posted at once; if a stop is already under way, only
  // `on_stopped` is added (the running escalation keeps its timing; kill() cuts it short).
  void stop(StopPolicy policy, StopCallback on_stopped = {});
  // SIGKILL to the process group now.
  void kill();
  // Sends `signal` to the whole process group (e.g. SIGINT); false if the child has exited or kill() failed.
  bool signal_group(int signal);
  // SIGKILLs every process the child started that still runs (its group and its descendants, see
  // GroupMembers.h), but not the child: what an agent's tools left behind when it abandoned them (Claude Code
  // leaves an interrupted Bash command running, in a session of its own). Returns how many were signalled.
  std::size_t kill_started_processes();
  // The same for only what left the child's process group (detached_descendants_of in GroupMembers.h): for an
  // agent whose own group holds more than one process of its own.
  std::size_t kill_detached_descendants();

  // The last bytes the child wrote to stderr (SpawnSpec::stderr_options.tail_bytes), for error messages.
  std::string stderr_tail() const;
  Counters counters() const;

 private:
  class State;
  explicit ChildProcess(std::shared_ptr<State> state);

  std::shared_ptr<State> m_state;
};

}  // namespace switchboard::process
