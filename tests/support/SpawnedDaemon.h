#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace switchboard::testing {

// Runs the real switchboard binary with the given descriptors as its stdin/stdout/stderr (test-only helper;
// the daemon's own child-process supervision lives in src/). Unless the arguments name a --data-dir, the
// daemon gets a fresh one of its own (SWITCHBOARD_DATA_DIR), removed afterwards: tests never touch the user's
// data and never contend for one lock. Likewise it reads no config file but one the test names (an empty
// XDG_CONFIG_HOME of its own, and SWITCHBOARD_CONFIG only from `extra_env`).
class SpawnedDaemon {
 public:
  // `extra_env`: "NAME=value" entries added to (or replacing in) the test's own environment.
  // `binary`: the daemon to run (the tests' own daemon with more agents, say); by default the real switchboard.
  SpawnedDaemon(std::vector<std::string> args, int stdin_fd, int stdout_fd, int stderr_fd,
                const std::vector<std::string>& extra_env = {}, const std::string& binary = SWITCHBOARD_BINARY) {
    std::vector<std::string> env_strings;
    const auto overridden = [&](std::string_view entry) {
      if (entry.rfind("SWITCHBOARD_DATA_DIR=", 0) == 0) return true;
      // The user's own config file must not change what a test sees: only a test names one.
      if (entry.rfind("SWITCHBOARD_CONFIG=", 0) == 0 || entry.rfind("XDG_CONFIG_HOME=", 0) == 0) return true;
      for (const auto& extra : extra_env) {
        const auto name = extra.substr(0, extra.find('=') + 1);
        if (entry.rfind(name, 0) == 0) return true;
      }
      return false;
    };
    for (char** e = environ; *e != nullptr; ++e) {
      if (!overridden(*e)) env_strings.emplace_back(*e);
    }
    for (const auto& extra : extra_env) env_strings.push_back(extra);
    bool has_data_dir = false;
    for (const auto& arg : args) has_data_dir = has_data_dir || arg == "--data-dir";
    bool has_config_home = false;
    for (const auto& extra : extra_env) has_config_home = has_config_home || extra.rfind("XDG_CONFIG_HOME=", 0) == 0;
    char pattern[] = "/tmp/switchboard-spawned-XXXXXX";
    if (::mkdtemp(pattern) != nullptr) {
      m_own_data_dir = pattern;
      if (!has_data_dir) env_strings.push_back("SWITCHBOARD_DATA_DIR=" + m_own_data_dir.string() + "/data");
      // An empty config home of its own: no config file unless the test writes one.
      if (!has_config_home) env_strings.push_back("XDG_CONFIG_HOME=" + m_own_data_dir.string() + "/config");
    }
    std::vector<char*> envp;
    for (auto& entry : env_strings) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<char*> argv;
    args.insert(args.begin(), binary);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    m_status = posix_spawn(&m_pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
  }
  ~SpawnedDaemon() {
    if (m_pid > 0 && !m_reaped) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
    std::error_code ignored;
    if (!m_own_data_dir.empty()) std::filesystem::remove_all(m_own_data_dir, ignored);
  }

  bool started() const { return m_status == 0; }
  pid_t pid() const { return m_pid; }

  // Exit status as the shell shows it (128+signal for a signal), or -1 if it did not exit within `timeout`.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    if (m_reaped) return m_exit;  // waited for already: the same answer, at once
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
      if (r == m_pid) {
        m_reaped = true;
        if (WIFEXITED(status)) return m_exit = WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return m_exit = 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

 private:
  pid_t m_pid = -1;
  int m_status = -1;
  bool m_reaped = false;
  int m_exit = -1;
  std::filesystem::path m_own_data_dir;
};

}  // namespace switchboard::testing
