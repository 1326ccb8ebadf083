#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/TempDir.h"

// `switchboard acp` as a process, without any agent CLI: what an editor gets for its first calls, for what we do
// not implement and for what it gets wrong. The turns themselves run with the real CLIs in
// tests/e2e/AcpScenarios.cpp.

namespace acp_command_tests {

using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::TempDir;

std::unique_ptr<DaemonClient> start_acp(const TempDir& dir, std::vector<std::string> extra_args = {}) {
  std::vector<std::string> args{"--data-dir", (dir.path() / "data").string(), "acp", "--agent", "claude"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  // A CLI that is not there: nothing here may need it.
  return std::make_unique<DaemonClient>(args, std::vector<std::string>{"SWITCHBOARD_CLAUDE_BIN=" + (dir.path() / "no-claude").string()});
}

TEST_CASE("switchboard acp: initialize speaks version 1 and says what it offers", "[acp-server]") {
  TempDir dir{"acp-command"};
  auto editor = start_acp(dir);
  const auto init = editor->call("initialize", {{"protocolVersion", 7}, {"clientCapabilities", {{"fs", {{"readTextFile", true}}}, {"terminal", true}}}});
  INFO(init.dump());
  REQUIRE(init.contains("result"));
  CHECK(init["result"]["protocolVersion"] == 1);  // the only one we speak: the client decides
  CHECK(init["result"]["agentCapabilities"]["loadSession"] == true);
  // Claude Code forks its conversations, so session/fork (unstable in ACP) is offered.
  CHECK(init["result"]["agentCapabilities"]["sessionCapabilities"] ==
        json{{"list", json::object()}, {"resume", json::object()}, {"close", json::object()}, {"fork", json::object()}});
  CHECK(init["result"]["agentCapabilities"]["mcpCapabilities"]["sse"] == false);
  CHECK(init["result"]["authMethods"] == json::array());
  CHECK(init["result"]["_meta"]["switchboard"]["usesClientCapabilities"] == json::array());
  CHECK(init["result"]["_meta"]["switchboard"]["attached"] == false);

  const auto unknown = editor->call("session/delete", {{"sessionId", "s"}});
  CHECK(unknown["error"]["code"] == -32601);
  const auto no_such_fork = editor->call("session/fork", {{"sessionId", "s-nowhere"}, {"cwd", dir.path().string()}});
  CHECK(no_such_fork["error"]["code"] == -32002);
  const auto listed = editor->call("session/list", json::object());
  CHECK(listed["result"] == json{{"sessions", json::array()}});
  editor->close_stdin();
  CHECK(editor->daemon().wait(std::chrono::seconds(30)) == 0);
}

TEST_CASE("switchboard acp: our errors reach the editor as ACP codes with the reason", "[acp-server]") {
  TempDir dir{"acp-command"};
  auto editor = start_acp(dir);
  REQUIRE(editor->call("initialize", {{"protocolVersion", 1}}).contains("result"));

  const auto load = editor->call("session/load", {{"sessionId", "s-nowhere"}, {"cwd", dir.path().string()}, {"mcpServers", json::array()}});
  INFO(load.dump());
  CHECK(load["error"]["code"] == -32002);
  CHECK(load["error"]["data"]["switchboardCode"] == -32010);
  CHECK(load["error"]["message"].get<std::string>().rfind("session/load: ", 0) == 0);

  const auto no_cwd = editor->call("session/new", {{"mcpServers", json::array()}});
  CHECK(no_cwd["error"]["code"] == -32602);
  const auto missing_cli = editor->call("session/new", {{"cwd", dir.path().string()}, {"mcpServers", json::array()}});
  INFO(missing_cli.dump());
  CHECK(missing_cli["error"]["code"] == -32603);
  CHECK(missing_cli["error"]["data"]["switchboardCode"] == -32013);
  const auto bad_block = editor->call("session/prompt", {{"sessionId", "s-nowhere"}, {"prompt", json::array({json{{"type", "video"}}})}});
  CHECK(bad_block["error"]["code"] == -32602);
  const auto unknown_session = editor->call("session/prompt", {{"sessionId", "s-nowhere"}, {"prompt", json::array({json{{"type", "text"}, {"text", "hi"}}})}});
  CHECK(unknown_session["error"]["code"] == -32002);
  const auto close_unknown = editor->call("session/close", {{"sessionId", "s-nowhere"}});
  CHECK(close_unknown["error"]["code"] == -32002);
  editor->close_stdin();
  CHECK(editor->daemon().wait(std::chrono::seconds(30)) == 0);
}

}  // namespace acp_command_tests
