#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/FdIo.h"
#include "support/ProcessTestSupport.h"
#include "support/SpawnedDaemon.h"
#include "support/SourceTree.h"

// The configuration as users meet it: the real binary, its flags, its environment and a config file.

namespace config_process_tests {

using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::TempDir;
using switchboard::testing::SpawnedDaemon;

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs the binary to completion with stdin at EOF. The test's own SWITCHBOARD_* settings must not leak in, so
// the variables a test does not set are given empty (which counts as unset).
Run run(const std::vector<std::string>& args, std::vector<std::string> env) {
  for (const char* name : {"SWITCHBOARD_LOG_LEVEL", "SWITCHBOARD_CLAUDE_BIN", "SWITCHBOARD_CLAUDE_DEFAULT_MODEL",
                           "SWITCHBOARD_HTTP_PORT", "SWITCHBOARD_HEADLESS_POLICY", "SWITCHBOARD_REQUEST_TIMEOUT",
                           "SWITCHBOARD_CODEX_API_KEY"}) {
    bool given = false;
    for (const auto& entry : env) given = given || entry.rfind(std::string(name) + "=", 0) == 0;
    if (!given) env.push_back(std::string(name) + "=");
  }
  int out[2];
  int err[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  Run result;
  {
    SpawnedDaemon daemon(args, in, out[1], err[1], env);
    REQUIRE(daemon.started());
    ::close(in);
    ::close(out[1]);
    ::close(err[1]);
    std::thread errors([&] { result.err = switchboard::testing::read_all(err[0]); });
    result.out = switchboard::testing::read_all(out[0]);
    errors.join();
    result.exit_code = daemon.wait();
  }
  ::close(out[0]);
  ::close(err[0]);
  return result;
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// The line of `switchboard config` for `key`, with runs of spaces squeezed to one.
std::string config_line(const std::string& output, const std::string& key) {
  std::size_t at = 0;
  while ((at = output.find(key + " ", at)) != std::string::npos) {
    if (at == 0 || output[at - 1] == '\n' || (at >= 2 && output.compare(at - 2, 2, "# ") == 0)) break;
    ++at;
  }
  if (at == std::string::npos) return "";
  if (at >= 2 && output.compare(at - 2, 2, "# ") == 0) at -= 2;
  const auto line = output.substr(at, output.find('\n', at) - at);
  std::string squeezed;
  for (const char c : line) {
    if (!(c == ' ' && !squeezed.empty() && squeezed.back() == ' ')) squeezed += c;
  }
  return squeezed;
}

TEST_CASE("config command: prints each effective value with its origin: flag, env, file:line, default", "[config][daemon]") {
  TempDir tmp;
  const auto file = write_file(tmp.path() / "config.toml",
                               "# settings for the test\n"
                               "[permissions]\n"
                               "headless = \"allow\"\n"
                               "timeout = \"90s\"\n"
                               "[http]\n"
                               "port = 7400\n");
  const auto result = run({"config", "--port", "9001"},
                          {"SWITCHBOARD_CONFIG=" + file, "SWITCHBOARD_LOG_LEVEL=debug", "SWITCHBOARD_CODEX_API_KEY=sk-secret-env"});
  INFO(result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.err.empty());
  CHECK(config_line(result.out, "http.port") == "http.port = 9001 # flag --port");
  CHECK(config_line(result.out, "log.level") == "log.level = \"debug\" # env SWITCHBOARD_LOG_LEVEL");
  CHECK(config_line(result.out, "permissions.headless") == "permissions.headless = \"allow\" # " + file + ":3");
  CHECK(config_line(result.out, "permissions.timeout") == "permissions.timeout = \"90s\" # " + file + ":4");
  CHECK(config_line(result.out, "http.host") == "http.host = \"127.0.0.1\" # default");
  CHECK(config_line(result.out, "agents.claude.default_model") == "# agents.claude.default_model is not set # default");
  CHECK(config_line(result.out, "agents.codex.provider.api_key") ==
        "agents.codex.provider.api_key = <hidden> # env SWITCHBOARD_CODEX_API_KEY");
  CHECK(result.out.find("sk-secret-env") == std::string::npos);
  CHECK(result.out.find("# config file: " + file + " (from SWITCHBOARD_CONFIG)\n") != std::string::npos);

  SECTION("--config names the file, and flags may come before the subcommand") {
    const auto other = write_file(tmp.path() / "other.toml", "http.port = 7500\n");
    const auto named = run({"--config", other, "config"}, {"SWITCHBOARD_CONFIG=" + file});
    CHECK(named.exit_code == 0);
    CHECK(config_line(named.out, "http.port") == "http.port = 7500 # " + other + ":1");
    CHECK(config_line(named.out, "permissions.headless") == "permissions.headless = \"deny\" # default");
  }
}

TEST_CASE("config: a bad config file stops every command with exit code 2 and names file:line and key", "[config][daemon]") {
  TempDir tmp;
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases{
      {"[http]\nport = \"8080\"\n", ":2: http.port: expected an integer in 0..65535, got a string"},
      {"\n\n[permissions]\nheadles = \"allow\"\n",
       ":4: permissions.headles: unknown key (did you mean permissions.headless?); docs/configuration.md lists every key"},
      {"permissions.headless = \"sometimes\"\n", ":1: permissions.headless: expected one of deny, allow, got \"sometimes\""},
  };
  for (const auto& c : cases) {
    const auto file = write_file(tmp.path() / "config.toml", c.text);
    for (const auto& command : std::vector<std::vector<std::string>>{
             {"config"}, {"stdio"}, {"serve", "--port", "0"}, {"stdio", "--ephemeral", "--http", "--port", "0"}}) {
      INFO(c.text << " / " << command.front());
      const auto result = run(command, {"SWITCHBOARD_CONFIG=" + file});
      CHECK(result.exit_code == 2);
      CHECK(result.err == "switchboard: " + file + c.message + "\n");
      CHECK(result.out.empty());
    }
  }
  SECTION("syntax error") {
    const auto file = write_file(tmp.path() / "config.toml", "[http\nport = 1\n");
    const auto result = run({"stdio"}, {"SWITCHBOARD_CONFIG=" + file});
    CHECK(result.exit_code == 2);
    CHECK(result.err.rfind("switchboard: " + file + ":1:", 0) == 0);
    CHECK(result.err.find("syntax error") != std::string::npos);
  }
  SECTION("a config file that does not exist, named with --config") {
    const auto missing = (tmp.path() / "missing.toml").string();
    const auto result = run({"--config", missing, "stdio"}, {});
    CHECK(result.exit_code == 2);
    CHECK(result.err == "switchboard: " + missing + ": cannot read the config file: No such file or directory\n");
  }
  SECTION("a bad variable") {
    const auto result = run({"stdio"}, {"SWITCHBOARD_REQUEST_TIMEOUT=30"});
    CHECK(result.exit_code == 2);
    CHECK(result.err ==
          "switchboard: SWITCHBOARD_REQUEST_TIMEOUT: permissions.timeout: expected a duration such as \"500ms\", \"90s\", "
          "\"30m\" or \"2h\", got \"30\"\n");
  }
  SECTION("a bad flag") {
    const auto result = run({"stdio", "--headless-policy", "ask"}, {});
    CHECK(result.exit_code == 2);
    CHECK(result.err == "switchboard: --headless-policy: permissions.headless: expected one of deny, allow, got \"ask\"\n");
  }
}

// A daemon hosting tests/support/fake_claude.py as Claude Code (one permission request per turn), configured by `config_text` (the agent's
// binary is added) and `flags`; the fake records what it was told in `record`.
class FakeClaudeDaemon {
 public:
  FakeClaudeDaemon(const TempDir& tmp, const std::string& config_text, const std::vector<std::string>& flags,
                   bool answers_permissions)
      : m_tmp(tmp), m_record(tmp.path() / "record.ndjson") {
    const auto file = write_file(tmp.path() / "config.toml",
                                 "agents.claude.bin = \"" + fake_path() + "\"\n" + config_text);
    std::vector<std::string> args{"--log-level", "off", "stdio", "--ephemeral"};
    args.insert(args.end(), flags.begin(), flags.end());
    m_client = std::make_unique<DaemonClient>(
        args, std::vector<std::string>{"SWITCHBOARD_CONFIG=" + file, "FAKE_CLAUDE_ASK=1", "FAKE_CLAUDE_RECORD=" + m_record.string(),
                                       "SWITCHBOARD_CLAUDE_BIN=", "SWITCHBOARD_CLAUDE_DEFAULT_MODEL=",
                                       "SWITCHBOARD_HEADLESS_POLICY=", "SWITCHBOARD_REQUEST_TIMEOUT="});
    const auto init = m_client->call("initialize", {{"protocolVersion", 1},
                                                    {"clientInfo", {{"name", "config-test"}}},
                                                    {"capabilities", {{"answersPermissions", answers_permissions}}}});
    REQUIRE(init.contains("result"));
  }

  static std::string fake_path() { return switchboard::testing::source_path("tests/support/fake_claude.py"); }
  DaemonClient& client() { return *m_client; }

  // Creates a session and sends one prompt without waiting; returns its turn.started event.
  json start_turn() {
    const auto created = m_client->call("session.create", {{"agent", "claude"}, {"cwd", m_tmp.path().string()}});
    REQUIRE(created.contains("result"));
    const auto session = created["result"]["session"]["sessionId"].get<std::string>();
    const auto sent = m_client->call("session.send", {{"sessionId", session}, {"text", "hello"}, {"wait", false}});
    REQUIRE(sent.contains("result"));
    auto started = m_client->wait_event("turn.started", m_from, std::chrono::seconds(20));
    REQUIRE(started.is_object());
    return started;
  }
  json wait_event(const std::string& type, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    return m_client->wait_event(type, m_from, timeout);
  }

  // What the fake wrote, one JSON object per line.
  std::vector<json> record() const {
    std::vector<json> entries;
    std::ifstream in(m_record);
    for (std::string line; std::getline(in, line);) entries.push_back(json::parse(line));
    return entries;
  }

 private:
  const TempDir& m_tmp;
  std::filesystem::path m_record;
  std::unique_ptr<DaemonClient> m_client;
  std::size_t m_from = 0;
};

std::vector<std::string> models_set(const std::vector<json>& record) {
  std::vector<std::string> models;
  for (const auto& entry : record) {
    if (entry.value("control", "") == "set_model") models.push_back(entry.value("model", ""));
  }
  return models;
}

TEST_CASE("config: the configured agent binary and default model reach the engine and the agent", "[config][daemon]") {
  // turn.started carries the model the engine resolved for the turn, and the agent is switched to it: the
  // configured default, or nothing.
  TempDir tmp;
  SECTION("from the config file") {
    FakeClaudeDaemon daemon(tmp, "agents.claude.default_model = \"model-from-file\"\n", {}, true);
    const auto agents = daemon.client().call("agents.list");
    json claude;
    for (const auto& agent : agents["result"]["agents"]) {
      if (agent["agent"] == "claude") claude = agent;
    }
    CHECK(claude.value("path", "") == FakeClaudeDaemon::fake_path());  // the configured binary, not `claude` on PATH
    CHECK(daemon.start_turn()["data"].value("model", "") == "model-from-file");
    CHECK(daemon.wait_event("permission.requested").is_object());
    CHECK(models_set(daemon.record()) == std::vector<std::string>{"model-from-file"});
  }
  SECTION("a flag wins over the file") {
    FakeClaudeDaemon daemon(tmp, "agents.claude.default_model = \"model-from-file\"\n",
                            {"--claude-default-model", "model-from-flag"}, true);
    CHECK(daemon.start_turn()["data"].value("model", "") == "model-from-flag");
    CHECK(daemon.wait_event("permission.requested").is_object());
    CHECK(models_set(daemon.record()) == std::vector<std::string>{"model-from-flag"});
  }
  SECTION("without a configured default, the turn names no model") {
    FakeClaudeDaemon daemon(tmp, "", {}, true);
    CHECK_FALSE(daemon.start_turn()["data"].contains("model"));
    CHECK(daemon.wait_event("permission.requested").is_object());
    CHECK(models_set(daemon.record()).empty());
  }
}

TEST_CASE("config: the configured headless policy answers when no client can", "[config][daemon]") {
  TempDir tmp;
  for (const auto& [config_text, outcome, decision] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"permissions.headless = \"allow\"\n", "allowed", "allow"},
           {"permissions.headless = \"deny\"\n", "denied", "deny"},
           {"", "denied", "deny"}}) {
    INFO(config_text);
    // The only client did not say it answers permissions: nobody can.
    FakeClaudeDaemon daemon(tmp, config_text, {}, /*answers_permissions=*/false);
    daemon.start_turn();
    const auto resolved = daemon.wait_event("permission.resolved");
    REQUIRE(resolved.is_object());
    CHECK(resolved["data"]["resolvedBy"] == "headless");
    CHECK(resolved["data"]["outcome"] == outcome);
    CHECK(daemon.wait_event("turn.stopped").is_object());
    bool told = false;
    for (const auto& entry : daemon.record()) told = told || entry.value("decision", "") == decision;
    CHECK(told);  // the agent got the policy's answer
    std::filesystem::remove(tmp.path() / "record.ndjson");
  }
}

TEST_CASE("config: the configured request timeout resolves an unanswered permission", "[config][daemon]") {
  TempDir tmp;
  SECTION("configured: 300ms, as a flag") {
    FakeClaudeDaemon daemon(tmp, "", {"--request-timeout", "300ms"}, /*answers_permissions=*/true);
    daemon.start_turn();
    const auto requested = daemon.wait_event("permission.requested");
    REQUIRE(requested.is_object());
    const auto resolved = daemon.wait_event("permission.resolved", std::chrono::seconds(10));
    REQUIRE(resolved.is_object());
    CHECK(resolved["data"]["resolvedBy"] == "timeout");
    CHECK(resolved["data"]["outcome"] == "denied");
    const auto waited = resolved["data"]["resolvedAt"].get<std::int64_t>() - requested["data"]["request"]["openedAt"].get<std::int64_t>();
    CHECK(waited >= 250);
    CHECK(waited < 5000);
  }
  SECTION("default (30 minutes): still open seconds later") {
    FakeClaudeDaemon daemon(tmp, "", {}, /*answers_permissions=*/true);
    daemon.start_turn();
    REQUIRE(daemon.wait_event("permission.requested").is_object());
    CHECK(daemon.wait_event("permission.resolved", std::chrono::seconds(2)).is_null());
  }
}

}  // namespace config_process_tests
