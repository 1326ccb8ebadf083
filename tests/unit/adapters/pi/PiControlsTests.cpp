#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "pi/PiControls.h"
#include "pi/PiExtension.h"
#include "support/TempDir.h"

// Pi's answers about a session's controls, as Pi 1.6.0 wrote them (get_commands, get_session_stats,
// get_fork_messages, the `/mcp` status notification), read into the contract's forms.

namespace pi_controls_tests {

using nlohmann::json;
using namespace switchboard::adapters::pi;
using switchboard::protocol::McpServer;
using switchboard::protocol::McpServerStatusKind;
using switchboard::protocol::McpTransport;

TEST_CASE("pi controls: get_commands offers prompt templates, skills and the user's extension commands, not Pi's built-in ones", "[pi][controls]") {
  const auto response = json::parse(R"({"id":"r2","type":"response","command":"get_commands","success":true,"data":{"commands":[
    {"name":"llama","description":"Manage llama.cpp router models","source":"extension","sourceInfo":{"path":"builtin:llama.cpp","source":"builtin","scope":"temporary","origin":"top-level"}},
    {"name":"mcp","description":"Manage MCP servers","source":"extension","sourceInfo":{"path":"builtin:mcp","source":"builtin","scope":"temporary","origin":"top-level"}},
    {"name":"greet","description":"Greets someone","source":"prompt","sourceInfo":{"path":"/a/prompts/greet.md","source":"auto","scope":"user","origin":"top-level"}},
    {"name":"skill:review","description":"","source":"skill","sourceInfo":{"path":"/a/skills/review/SKILL.md","source":"auto","scope":"project","origin":"top-level"}},
    {"name":"deploy","source":"extension","sourceInfo":{"path":"/a/extensions/deploy.ts","source":"local","scope":"user","origin":"top-level"}},
    {"description":"a command without a name is skipped","source":"prompt"}
  ]}})");
  const auto commands = offered_commands(response);
  REQUIRE(commands.size() == 3);
  CHECK(commands[0].name == "greet");
  CHECK(commands[0].description == "Greets someone");
  CHECK(commands[1].name == "skill:review");
  CHECK_FALSE(commands[1].description.has_value());  // empty: no description
  CHECK(commands[2].name == "deploy");
  CHECK(offered_commands(json::parse(R"({"success":false,"error":"x"})")).empty());
}

TEST_CASE("pi controls: the effort option lists the model's thinking levels in Pi's order with the current one", "[pi][controls]") {
  const auto levels = thinking_levels(json::parse(R"({"success":true,"data":{"levels":["off","minimal","low","medium","high",7]}})"));
  REQUIRE(levels == std::vector<std::string>{"off", "minimal", "low", "medium", "high"});
  const auto option = effort_option(levels, "medium");
  CHECK(option.id == "effort");
  CHECK(option.kind == switchboard::protocol::SessionOptionKind::Select);
  REQUIRE(option.values.size() == 5);
  CHECK(option.values[4].value == "high");
  CHECK(option.current_value == "medium");
}

TEST_CASE("pi controls: get_session_stats gives the context's tokens, the model's window and the session's cost", "[pi][controls]") {
  const auto usage = context_usage(json::parse(R"({"success":true,"data":{"sessionId":"s","tokens":{"input":2876,"output":2,"cacheRead":5,"cacheWrite":0,"total":2883},
    "cost":0.00288,"contextUsage":{"tokens":1455,"contextWindow":32000,"percent":4.5}}})"));
  REQUIRE(usage.has_value());
  CHECK(usage->used_tokens == 1455);
  CHECK(usage->window_tokens == 32000);
  CHECK(usage->cost_usd == Approx(0.00288));
  CHECK(usage->input_tokens == 2876);
  CHECK(usage->output_tokens == 2);
  CHECK(usage->cache_read_tokens == 5);
  // Right after a compaction Pi knows no context tokens until the model answers again; no model: no contextUsage.
  CHECK_FALSE(context_usage(json::parse(R"({"success":true,"data":{"cost":0,"contextUsage":{"tokens":null,"contextWindow":32000,"percent":null}}})")).has_value());
  CHECK_FALSE(context_usage(json::parse(R"({"success":true,"data":{"cost":0}})")).has_value());
}

TEST_CASE("pi controls: a fork through a turn forks before the next turn's user message, or keeps everything after the last", "[pi][controls]") {
  const auto ids = user_entry_ids(json::parse(R"({"success":true,"data":{"messages":[{"entryId":"56605406","text":"hello"},
    {"entryId":"0b497017","text":"Please greet Bob warmly."},{"entryId":"9a1b2c3d","text":"third"}]}})"));
  REQUIRE(ids == std::vector<std::string>{"56605406", "0b497017", "9a1b2c3d"});
  CHECK(entry_after(ids, "56605406") == "0b497017");
  CHECK(entry_after(ids, "9a1b2c3d") == "");
  CHECK_FALSE(entry_after(ids, "ffffffff").has_value());
}

std::vector<McpServer> two_servers() {
  McpServer echo;
  echo.name = "echoer";
  echo.transport = McpTransport::Stdio;
  echo.command = "python3";
  echo.args = std::vector<std::string>{"server.py", "--tool", "shout"};
  echo.env = json{{"TOKEN", "t"}};
  McpServer docs;
  docs.name = "docs";
  docs.transport = McpTransport::Http;
  docs.url = "http://127.0.0.1:9/mcp";
  docs.headers = json{{"Authorization", "Bearer x"}};
  return {echo, docs};
}

TEST_CASE("pi controls: MCP servers are registered in Pi's form, their tools declared to the model", "[pi][controls]") {
  const auto registrations = mcp_registrations(two_servers());
  CHECK(registrations == json::parse(R"({
    "echoer":{"command":"python3","args":["server.py","--tool","shout"],"env":{"TOKEN":"t"},"exposure":"direct"},
    "docs":{"url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"},"exposure":"direct"}})"));
}

TEST_CASE("pi controls: /mcp's status text gives each server's state, tool count and error", "[pi][controls]") {
  // As Pi 1.6.0 printed it for one server that connected and one whose command does not exist.
  const std::string text = "echoer: connected, 1 tools (direct)\ndocs: failed (direct)\n    spawn /nonexistent/x ENOENT\n    second line";
  const auto states = mcp_states(two_servers(), text);
  REQUIRE(states.size() == 2);
  CHECK(states[0].name == "echoer");
  CHECK(states[0].status == McpServerStatusKind::Connected);
  CHECK(states[0].tools == 1);
  CHECK(states[1].status == McpServerStatusKind::Failed);
  CHECK(states[1].transport == McpTransport::Http);
  CHECK(states[1].error == "spawn /nonexistent/x ENOENT\nsecond line");

  const auto pending = mcp_states(two_servers(), "echoer: connecting (direct)");
  CHECK(pending[0].status == McpServerStatusKind::Pending);
  // A server Pi does not list was refused at registration.
  CHECK(pending[1].status == McpServerStatusKind::Failed);
  REQUIRE(pending[1].error.has_value());
}

TEST_CASE("pi controls: each start's MCP servers go into a new file of its own, readable by the user only", "[pi][controls]") {
  switchboard::testing::TempDir dir("pi-mcp-file");
  const auto first = write_mcp_servers(dir.path(), "s-1", R"({"a":{"command":"x","env":{"TOKEN":"secret"}}})");
  REQUIRE(std::holds_alternative<std::filesystem::path>(first));
  const auto& first_file = std::get<std::filesystem::path>(first);
  struct stat info {};
  REQUIRE(::stat(first_file.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);
  std::ifstream in(first_file);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == R"({"a":{"command":"x","env":{"TOKEN":"secret"}}})");
  // The same session started again (its earlier Pi may still be reading its file): another file, the first as it was.
  const auto second = write_mcp_servers(dir.path(), "s-1", "{}");
  REQUIRE(std::holds_alternative<std::filesystem::path>(second));
  CHECK(std::get<std::filesystem::path>(second) != first_file);
  CHECK(std::filesystem::file_size(first_file) > 2);
  CHECK(std::get<std::filesystem::path>(second).filename().string().rfind("mcp-s-1-", 0) == 0);
}

}  // namespace pi_controls_tests
