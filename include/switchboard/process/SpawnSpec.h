#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "switchboard/process/Environment.h"

namespace switchboard::process {

// How stderr is handled: forwarded to the log line by line, rate-limited, and its last bytes kept in memory.
struct StderrOptions {
  std::string log_name;  // prefixes each forwarded line, e.g. "claude[1234]"; default: program name and pid
  std::size_t lines_per_window = 20;  // logged per window; the rest is counted and summarized once
  std::chrono::milliseconds window{1000};
  std::size_t tail_bytes = 8 * 1024;          // kept for ChildProcess::stderr_tail()
  std::size_t max_logged_line_bytes = 4096;   // longer lines are logged cut, with a marker
};

// Everything ChildProcess::spawn needs to start one child.
struct SpawnSpec {
  // A bare name is looked up on the PATH of `environment` (or the system default path if it has none); a name
  // with '/' is a path, relative to `working_directory`. See ExecutableLookup.h.
  std::string program;
  std::vector<std::string> args;  // argv[1...]; argv[0] is `program` as written
  // Empty: the daemon's own working directory. Checked before spawning (WorkingDirectoryInvalid).
  std::filesystem::path working_directory;
  // Exactly the child's environment; see Environment.h (never the daemon's token).
  Environment environment = Environment::from_daemon();

  // stdout is split into lines; a line longer than this is skipped and counted (on_stdout_overlong).
  std::size_t max_stdout_line_bytes = 8 * 1024 * 1024;
  // Bytes waiting to be written to the child's stdin; write_stdin beyond it fails with StdinQueueFull.
  std::size_t stdin_queue_limit_bytes = 4 * 1024 * 1024;
  StderrOptions stderr_options;

  // After the child exits, how long to keep reading stdout and stderr for what it wrote last (its group has
  // been killed by then, so the pipes normally reach EOF at once; only a daemonized grandchild holding them
  // open makes this wait the full time).
  std::chrono::milliseconds exit_drain_timeout{2000};

  // The kernel kills the child if the daemon dies without cleaning up (SIGKILL, or a crash no handler saw):
  // PR_SET_PDEATHSIG, set in the child before it execs (process/Spawn.h). It fires when the *thread* that
  // spawned the child ends, so spawn from the io_context thread. Every agent CLI is started this way.
  bool dies_with_daemon = false;

  // Tests only: watch for the exit by polling waitpid(pid, WNOHANG) as on kernels without pidfd_open.
  bool force_exit_polling = false;
};

}  // namespace switchboard::process
