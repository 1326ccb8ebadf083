#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/FdIo.h"
#include "support/SourceTree.h"

extern char** environ;

namespace switchboard::testing {

// The project's mock model provider (tests/mock_provider/<script>.py), run for one test with one script: it
// listens on 127.0.0.1 (an ephemeral port) and logs every request it gets, so a test can check what the agent
// CLI sent. Test-only helper.
class MockProvider {
 public:
  MockProvider(const std::filesystem::path& dir, const nlohmann::json& script, const std::string& server = "anthropic_mock.py")
      : m_log(dir / "mock-requests.ndjson"),
        m_model_paths(server.rfind("openai", 0) == 0 ? std::vector<std::string>{"/v1/responses", "/v1/chat/completions"}
                                                     : std::vector<std::string>{"/v1/messages"}) {
    const auto script_path = dir / "mock-script.json";
    std::ofstream(script_path) << script.dump(2);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return;
    std::vector<std::string> args{"python3", source_path("tests/mock_provider/") + server,
                                  "--script", script_path.string(), "--log", m_log.string()};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    // Its stderr goes to a file, never to the test's: a pipe the test runner reads must not outlive the test.
    posix_spawn_file_actions_addopen(&actions, 2, (dir / "mock-stderr.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    // A group of its own, killed as a whole: `python3` may be a wrapper (pyenv) that runs the server as a child.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attributes, 0);
    if (posix_spawnp(&m_pid, "python3", &actions, &attributes, argv.data(), environ) != 0) m_pid = -1;
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (m_pid > 0) {
      const auto line = read_line(out[0]);  // the mock prints its port once it listens
      m_port = line.empty() ? 0 : std::stoi(line);
    }
    ::close(out[0]);
  }
  ~MockProvider() {
    if (m_pid > 0) {
      ::kill(-m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
  }
  MockProvider(const MockProvider&) = delete;
  MockProvider& operator=(const MockProvider&) = delete;

  int port() const { return m_port; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  // The model requests received so far (`/v1/messages` or `/v1/responses` POSTs, by the server), oldest first.
  std::vector<nlohmann::json> message_requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(m_log);
    std::string line;
    while (std::getline(in, line)) {
      auto record = nlohmann::json::parse(line, nullptr, false);
      if (!record.is_object() || record.value("type", "") != "request") continue;
      const auto path = record.value("path", "");
      const bool to_model = std::any_of(m_model_paths.begin(), m_model_paths.end(), [&](const std::string& model_path) { return path.rfind(model_path, 0) == 0; });
      if (!to_model || path.find("count_tokens") != std::string::npos) continue;
      out.push_back(std::move(record));
    }
    return out;
  }

 private:
  std::filesystem::path m_log;
  std::vector<std::string> m_model_paths;  // where model requests go, for this server's APIs
  pid_t m_pid = -1;
  int m_port = 0;
};

}  // namespace switchboard::testing
