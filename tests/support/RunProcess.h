#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "support/SpawnedDaemon.h"
#include "support/TextFile.h"

namespace switchboard::testing {

// `switchboard <args>` (usually `run …`) with its stdout and stderr in files of `dir`, for tests of what a
// script sees: the exit code and both streams. Standard input is /dev/null unless the test passes its own
// descriptor (a pipe it keeps open, to prove nothing reads it). Test-only helper.
class RunProcess {
 public:
  struct Outcome {
    int exit = -1;  // as the shell shows it; -1: still running at the deadline
    std::string out;
    std::string err;
  };

  RunProcess(const std::filesystem::path& dir, std::vector<std::string> args, const std::vector<std::string>& env,
             int stdin_fd = -1, int stdout_fd = -1, const std::string& binary = SWITCHBOARD_BINARY)
      : m_out(dir / ("run-" + std::to_string(++counter()) + ".out")), m_err(m_out.string() + ".err") {
    const int in = stdin_fd >= 0 ? stdin_fd : ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int out = stdout_fd >= 0 ? stdout_fd : ::open(m_out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int err = ::open(m_err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    m_process = std::make_unique<SpawnedDaemon>(std::move(args), in, out, err, env, binary);
    if (stdin_fd < 0) ::close(in);
    if (stdout_fd < 0) ::close(out);
    ::close(err);
  }

  pid_t pid() const { return m_process->pid(); }
  bool started() const { return m_process->started(); }

  Outcome wait(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    Outcome outcome;
    outcome.exit = m_process->wait(timeout);
    outcome.out = read_text_file(m_out);
    outcome.err = read_text_file(m_err);
    return outcome;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }

  std::filesystem::path m_out;
  std::filesystem::path m_err;
  std::unique_ptr<SpawnedDaemon> m_process;
};

}  // namespace switchboard::testing
