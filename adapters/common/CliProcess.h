#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "common/ChildEnvironment.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/process/Environment.h"

namespace switchboard::process {
class ChildProcess;
}

namespace switchboard::adapters {

// The process half every CLI adapter shares (Claude Code, Codex, and the next stdio agents): one agent process
// per session, spawned through the exec shim with an environment built from the daemon's, its stdout lines
// handed on, writes to its stdin, the start and cancel deadlines, the graceful stop (close stdin, wait, then
// SIGTERM and SIGKILL of the group) and the reason its exit is reported with. What the lines mean and when a
// start or a turn is over stays the adapter's.
//
// Callbacks run on the io_context thread; on_exit runs once, last, after the process is released (the
// ChildProcess is destroyed later, off its own callback). No callback runs after the CliProcess is destroyed,
// which kills a process still running (its whole group).

// The last non-empty line of `text` (a stderr tail), without its line end.
std::string last_line(std::string text);

struct CliIdentity {
  std::string name;        // "Claude Code": how messages name it
  std::string log_prefix;  // "claude": how log lines start
};

struct CliTimeouts {
  std::chrono::milliseconds start{60000};       // spawn → ready (the adapter says when: finish_start)
  std::chrono::milliseconds cancel{15000};      // interrupt sent → turn ended, else the process is killed
  std::chrono::milliseconds stop_grace{5000};   // stdin closed → SIGTERM → SIGKILL, each this long
};

struct CliLaunch {
  std::vector<std::string> argv;  // argv[0]: the executable (a path, or a name looked up on PATH)
  std::string cwd;
  process::Environment environment;
  std::string log_name;             // prefixes its forwarded stderr: "claude[<session id>]"
};

class CliProcess {
 public:
  struct Handlers {
    std::function<void(std::string_view line)> on_line;
    // Something to tell the engine that is not an event of the agent: an over-long line, a failed write.
    std::function<void(AgentErrorReport error)> on_error;
    // The process is gone. `reason` is "stopped" after stop(), else "<name> exited (<status>)", with the last
    // line of its stderr after ": " when there is one; `stderr_tail` is the whole kept tail.
    std::function<void(const std::string& reason, const std::string& stderr_tail)> on_exit;
  };

  CliProcess(boost::asio::io_context& io, CliIdentity identity, CliTimeouts timeouts, Handlers handlers);
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // Spawns the process; AgentUnavailable when it cannot ("<name> is not installed (no '<exe>' found)" or
  // "<name> could not be started: <why>").
  std::optional<AdapterError> spawn(CliLaunch launch);
  bool running() const { return static_cast<bool>(m_child); }
  // The running process (for signalling what it started); null when none runs.
  process::ChildProcess* child() const { return m_child.get(); }

  // One JSON line to its stdin. A failed write (the bounded queue is full: the CLI stopped reading) is logged
  // and reported through on_error as not recoverable.
  void write_line(const nlohmann::json& message);
  // The same for a line already encoded (without its '\n'); false when it could not be written.
  bool write_encoded(std::string line);
  void kill();
  // Graceful stop, once: closes stdin (the CLIs' own way to finish: end the turn, save, exit), then escalates.
  void stop();
  bool stop_requested() const { return m_stop_requested; }

  // The start: `done` is called once, by finish_start() or when the start deadline passes (AgentUnavailable
  // "<name> did not start within N ms", and the process is killed).
  void begin_start(std::function<void(std::optional<AdapterError>)> done);
  bool starting() const { return static_cast<bool>(m_start_done); }
  void finish_start(std::optional<AdapterError> error);

  // After an interrupt: once the cancel deadline passes with `still_running()` true, the process is killed
  // (which ends the turn) and "<prefix>: no <awaited> N ms after an interrupt; killing the <what>" is logged.
  void arm_cancel_deadline(std::function<bool()> still_running, std::string awaited, std::string what);
  void disarm_cancel_deadline();

 private:
  void on_child_exit(const std::string& status);

  boost::asio::io_context& m_io;
  CliIdentity m_identity;
  CliTimeouts m_timeouts;
  Handlers m_handlers;
  std::unique_ptr<process::ChildProcess> m_child;
  std::function<void(std::optional<AdapterError>)> m_start_done;
  boost::asio::steady_timer m_start_timer;
  boost::asio::steady_timer m_cancel_timer;
  bool m_stop_requested = false;
  std::shared_ptr<CliProcess*> m_self;  // timers hold a weak_ptr to it
};

}  // namespace switchboard::adapters
