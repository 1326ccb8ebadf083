#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/TempDir.h"

// A session's controls over the wire of the real daemon (the test daemon, whose `controls` agent reports plans,
// options and MCP status without a model), across a restart on one data directory.

namespace daemon_controls_restart_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::TempDir;

std::vector<std::string> daemon_args(const fs::path& data) { return {"--log-level", "off", "stdio", "--data-dir", data.string()}; }

void initialize(DaemonClient& client) {
  REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "controls-restart"}}}}).contains("result"));
}

TEST_CASE("daemon: MCP servers, a chosen option and the plan outlive a restart, bad servers are refused by path",
          "[daemon][controls]") {
  TempDir tmp{"controls-restart"};
  const fs::path data = tmp.path() / "data";
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  const json server{{"name", "echo"}, {"transport", "stdio"}, {"command", "mcp-echo"}, {"env", {{"TOKEN", "secret-value"}}}};
  std::string session;
  {
    DaemonClient client(daemon_args(data), {}, SWITCHBOARD_TEST_DAEMON);
    initialize(client);
    const auto bad = client.call("session.create", {{"agent", "controls"}, {"cwd", work.string()},
                                                    {"mcpServers", {{{"name", "echo"}, {"transport", "stdio"}}}}});
    REQUIRE(bad.contains("error"));
    CHECK(bad["error"]["code"] == -32602);
    CHECK(bad["error"]["data"]["pointer"] == "/mcpServers/0/command");
    CHECK(client.call("session.list")["result"]["sessions"].empty());

    const auto created = client.call("session.create", {{"agent", "controls"}, {"cwd", work.string()}, {"mcpServers", {server}}});
    REQUIRE(created.contains("result"));
    session = created["result"]["session"]["sessionId"];
    CHECK(created["result"]["session"]["mcpServers"][0]["status"] == "pending");
    REQUIRE(client.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}}).contains("result"));
    const auto answered = client.call("session.send", {{"sessionId", session}, {"text", "plan it"}});
    REQUIRE(answered.contains("result"));
    CHECK(answered["result"]["text"].get<std::string>().find("Effort: high.") != std::string::npos);
    const auto info = client.call("session.get", {{"sessionId", session}})["result"]["session"];
    CHECK(info["mcpServers"][0]["status"] == "connected");
    CHECK(info["plan"].size() == 3);
  }
  {
    DaemonClient client(daemon_args(data), {}, SWITCHBOARD_TEST_DAEMON);
    initialize(client);
    const auto info = client.call("session.get", {{"sessionId", session}})["result"]["session"];
    CHECK(info["plan"].size() == 3);
    CHECK(info["mcpServers"] == json::array({{{"name", "echo"}, {"transport", "stdio"}, {"status", "pending"}}}));
    CHECK(info.dump().find("secret-value") == std::string::npos);
    // The agent, started again, has the servers and the option the session chose.
    const auto answered = client.call("session.send", {{"sessionId", session}, {"text", "again"}});
    REQUIRE(answered.contains("result"));
    CHECK(answered["result"]["text"].get<std::string>().find("Effort: high.") != std::string::npos);
    CHECK(client.call("session.get", {{"sessionId", session}})["result"]["session"]["mcpServers"][0]["status"] == "connected");
  }
}

}  // namespace daemon_controls_restart_tests
