#pragma once

#include <signal.h>
#include <stdlib.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "support/TempDir.h"
#include "switchboard/process/ChildProcess.h"

namespace switchboard::testing {

// Generous: the machine is shared and slow at times. Tests assert outcomes and order, never durations.
inline constexpr std::chrono::seconds kProcessDeadline{20};

// Runs `io` until `done()` holds or the deadline passes; returns done().
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      std::chrono::milliseconds deadline = kProcessDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!done() && std::chrono::steady_clock::now() < until) {
    io.restart();
    io.run_for(std::chrono::milliseconds(10));
  }
  return done();
}

// Dead: no such process, or a zombie nobody reaps (orphans are re-parented to an init that may not reap).
inline bool process_gone(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  // "pid (comm) S ...": the state follows the last ')' (comm may contain parentheses).
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return true;
  const char state = text[close + 2];
  return state == 'Z' || state == 'X';
}

// Polls (without a reactor) until `pid` is gone.
inline bool wait_process_gone(pid_t pid, std::chrono::milliseconds deadline = kProcessDeadline) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (!process_gone(pid)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    ::usleep(10'000);
  }
  return true;
}

// A child's view: what its stdout said, how it ended.
struct ProcessRecord {
  std::vector<std::string> lines;
  std::size_t overlong = 0;
  bool stdout_eof = false;
  std::optional<process::ExitStatus> exit;
  std::vector<std::string> order;  // "line", "overlong", "eof", "exit", "stopped" as they happened
};

inline process::ChildProcess::Handlers record_into(const std::shared_ptr<ProcessRecord>& record) {
  process::ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [record](std::string_view line) {
    record->lines.emplace_back(line);
    record->order.emplace_back("line");
  };
  handlers.on_stdout_overlong = [record](std::size_t) {
    ++record->overlong;
    record->order.emplace_back("overlong");
  };
  handlers.on_stdout_eof = [record] {
    record->stdout_eof = true;
    record->order.emplace_back("eof");
  };
  handlers.on_exit = [record](const process::ExitStatus& status) {
    record->exit = status;
    record->order.emplace_back("exit");
  };
  return handlers;
}

inline process::SpawnSpec shell(std::string script) {
  process::SpawnSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", std::move(script)};
  return spec;
}

}  // namespace switchboard::testing
