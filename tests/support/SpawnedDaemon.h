#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace switchboard::testing {

// Runs the real switchboard binary with the given descriptors as its stdin/stdout/stderr (test-only helper;
// the daemon's own child-process supervision lives in src/).
class SpawnedDaemon {
 public:
  SpawnedDaemon(std::vector<std::string> args, int stdin_fd, int stdout_fd, int stderr_fd) {
    std::vector<char*> argv;
    args.insert(args.begin(), SWITCHBOARD_BINARY);
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, stdin_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    m_status = posix_spawn(&m_pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
  }
  ~SpawnedDaemon() {
    if (m_pid > 0 && !m_reaped) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }

  bool started() const { return m_status == 0; }
  pid_t pid() const { return m_pid; }

  // Exit status as the shell shows it (128+signal for a signal), or -1 if it did not exit within `timeout`.
  int wait(std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
      if (r == m_pid) {
        m_reaped = true;
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return -1;
  }

 private:
  pid_t m_pid = -1;
  int m_status = -1;
  bool m_reaped = false;
};

}  // namespace switchboard::testing
