#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeLaunch.h"
#include "claude-code/ClaudeMessages.h"
#include "claude-code/ClaudePlan.h"
#include "claude-code/ClaudeTranslator.h"
#include "support/ClaudeRecordingSink.h"

// What the Claude Code translator makes of the lines behind the session's controls (plans, context usage,
// commands), and the encoders and launch options for the others (effort, MCP servers, rewind, fork), from lines
// shaped as Claude Code 2.1.197 writes them.

namespace claude_controls_tests {

using namespace switchboard;
using namespace switchboard::adapters;
using namespace switchboard::adapters::claude;
using Json = nlohmann::json;
namespace p = protocol;

// The recording sink, plus the session-wide reports it leaves out.
struct ControlsSink : testing::ClaudeRecordingSink {
  std::vector<std::vector<p::PlanEntry>> plans;
  std::vector<p::ContextUsage> usages;
  std::vector<std::vector<p::AgentCommand>> commands;
  void on_plan(PlanUpdate event) override { plans.push_back(std::move(event.entries)); }
  void on_usage(UsageUpdate event) override { usages.push_back(std::move(event.usage)); }
  void on_commands(CommandsOffered event) override { commands.push_back(std::move(event.commands)); }
};

struct Harness {
  ControlsSink sink;
  testing::ClaudeRecordingControl control;
  ClaudeTranslator translator{sink, control};
  void feed(const Json& line) { translator.feed_line(line.dump()); }
};

Json tool_call(const std::string& id, const std::string& name, const Json& input, const std::string& message_id = "msg_1") {
  return {{"type", "assistant"},
          {"uuid", "a-" + id},
          {"parent_tool_use_id", nullptr},
          {"message", {{"id", message_id}, {"role", "assistant"}, {"model", "claude-opus-4-8"},
                       {"content", Json::array({{{"type", "tool_use"}, {"id", id}, {"name", name}, {"input", input}}})},
                       {"usage", {{"input_tokens", 100}, {"output_tokens", 1}, {"cache_creation_input_tokens", 20}, {"cache_read_input_tokens", 5}}}}}};
}

Json tool_result(const std::string& id, const std::string& text, const Json& structured, bool is_error = false) {
  return {{"type", "user"},
          {"uuid", "u-" + id},
          {"parent_tool_use_id", nullptr},
          {"message", {{"role", "user"}, {"content", Json::array({{{"type", "tool_result"}, {"tool_use_id", id}, {"content", text}, {"is_error", is_error}}})}}},
          {"tool_use_result", structured}};
}

std::vector<std::string> described(const std::vector<p::PlanEntry>& plan) {
  std::vector<std::string> out;
  for (const auto& entry : plan) out.push_back(entry.content + "=" + std::string(p::to_string(entry.status)));
  return out;
}

TEST_CASE("claude controls: the task tools build the plan, reported whole each time a call succeeds", "[claude][controls]") {
  Harness h;
  h.feed(tool_call("t1", "TaskCreate", {{"subject", "first step"}, {"description", "do it"}}));
  h.feed(tool_result("t1", "Task #1 created successfully: first step", {{"task", {{"id", "1"}, {"subject", "first step"}}}}));
  h.feed(tool_call("t2", "TaskCreate", {{"subject", "second step"}, {"description", "then this"}}, "msg_2"));
  h.feed(tool_result("t2", "Task #2 created successfully: second step", {{"task", {{"id", "2"}, {"subject", "second step"}}}}));
  h.feed(tool_call("t3", "TaskUpdate", {{"taskId", "1"}, {"status", "in_progress"}}, "msg_3"));
  h.feed(tool_result("t3", "Updated task #1 status", {{"success", true}, {"taskId", "1"}}));
  // A failed update and an update the tool refused change nothing.
  h.feed(tool_call("t4", "TaskUpdate", {{"taskId", "2"}, {"status", "completed"}}, "msg_4"));
  h.feed(tool_result("t4", "<tool_use_error>no</tool_use_error>", nullptr, /*is_error=*/true));
  h.feed(tool_call("t5", "TaskUpdate", {{"taskId", "2"}, {"status", "completed"}}, "msg_5"));
  h.feed(tool_result("t5", "Task not found", {{"success", false}}));
  h.feed(tool_call("t6", "TaskUpdate", {{"taskId", "1"}, {"status", "completed"}, {"subject", "first step, done"}}, "msg_6"));
  h.feed(tool_result("t6", "Updated task #1", {{"success", true}}));

  REQUIRE(h.sink.plans.size() == 4);
  CHECK(described(h.sink.plans[0]) == std::vector<std::string>{"first step=pending"});
  CHECK(described(h.sink.plans[1]) == std::vector<std::string>{"first step=pending", "second step=pending"});
  CHECK(described(h.sink.plans[2]) == std::vector<std::string>{"first step=in_progress", "second step=pending"});
  CHECK(described(h.sink.plans[3]) == std::vector<std::string>{"first step, done=completed", "second step=pending"});
  // The tool calls themselves are reported as any other.
  CHECK(h.sink.tools.size() == 6);
}

TEST_CASE("claude controls: a deleted task leaves the plan, and TodoWrite replaces its list whole", "[claude][controls]") {
  ClaudePlan plan;
  plan.tool_called("a", "TaskCreate", {{"subject", "one"}, {"description", "x"}});
  CHECK(plan.tool_finished("a", false, {{"task", {{"id", "10"}}}}));
  plan.tool_called("b", "TaskCreate", {{"subject", "two"}, {"description", "x"}});
  CHECK(plan.tool_finished("b", false, {{"task", {{"id", "9"}}}}));
  CHECK(described(plan.entries()) == std::vector<std::string>{"two=pending", "one=pending"});  // by id, as numbers
  plan.tool_called("c", "TaskUpdate", {{"taskId", "9"}, {"status", "deleted"}});
  CHECK(plan.tool_finished("c", false, {{"success", true}}));
  CHECK(described(plan.entries()) == std::vector<std::string>{"one=pending"});
  // An update of a task created before this process (a resumed conversation) adds it.
  plan.tool_called("d", "TaskUpdate", {{"taskId", "3"}, {"status", "completed"}});
  CHECK(plan.tool_finished("d", false, nullptr));
  CHECK(described(plan.entries()) == std::vector<std::string>{"Task #3=completed", "one=pending"});
  // A result for a call that is not a plan tool, or comes twice, is no change.
  CHECK_FALSE(plan.tool_finished("d", false, nullptr));
  CHECK_FALSE(plan.tool_finished("unknown", false, nullptr));

  ClaudePlan todos;
  todos.tool_called("w", "TodoWrite", {{"todos", Json::array({{{"content", "a"}, {"status", "completed"}, {"activeForm", "A"}},
                                                             {{"content", "b"}, {"status", "in_progress"}, {"activeForm", "B"}},
                                                             {{"content", ""}, {"status", "pending"}},
                                                             {{"content", "c"}, {"status", "weird"}}})}});
  CHECK(todos.tool_finished("w", false, nullptr));
  CHECK(described(todos.entries()) == std::vector<std::string>{"a=completed", "b=in_progress"});
}

TEST_CASE("claude controls: context usage comes once per model request, with the window and the process's totals at the turn's end", "[claude][controls]") {
  Harness h;
  h.translator.set_context_window(200000);
  h.feed(tool_call("t1", "Bash", {{"command", "ls"}}, "msg_1"));
  // The same API message's next block: no second report.
  h.feed(tool_call("t1b", "Bash", {{"command", "pwd"}}, "msg_1"));
  auto second = tool_call("t2", "Bash", {{"command", "ls"}}, "msg_2");
  second["message"]["usage"] = {{"input_tokens", 10}, {"output_tokens", 1}, {"cache_creation_input_tokens", 30}, {"cache_read_input_tokens", 200}};
  h.feed(second);
  // A sub-agent's request fills its own context.
  auto sub = tool_call("t3", "Read", {{"file_path", "/x"}}, "msg_3");
  sub["parent_tool_use_id"] = "t2";
  h.feed(sub);
  REQUIRE(h.sink.usages.size() == 2);
  CHECK(h.sink.usages[0].used_tokens == 125);
  CHECK(h.sink.usages[1].used_tokens == 240);
  CHECK(h.sink.usages[1].window_tokens == 200000);

  h.feed({{"type", "system"}, {"subtype", "init"}, {"session_id", "s"}, {"model", "claude-opus-4-8[1m]"}});
  h.feed({{"type", "result"}, {"subtype", "success"}, {"is_error", false}, {"result", "done"}, {"total_cost_usd", 0.5},
          {"modelUsage", {{"claude-haiku", {{"inputTokens", 5}, {"outputTokens", 1}, {"costUSD", 0.1}, {"contextWindow", 200000}}},
                          {"claude-opus-4-8[1m]", {{"inputTokens", 100}, {"cacheCreationInputTokens", 20}, {"cacheReadInputTokens", 7},
                                                   {"outputTokens", 9}, {"costUSD", 0.4}, {"contextWindow", 1000000}}}}}});
  REQUIRE(h.sink.usages.size() == 3);
  const auto& end = h.sink.usages[2];
  CHECK(end.used_tokens == 240);
  CHECK(end.window_tokens == 1000000);  // the session's model's window, not the side model's
  CHECK(end.input_tokens == 125);
  CHECK(end.output_tokens == 10);
  CHECK(end.cache_read_tokens == 7);
  REQUIRE(end.cost_usd);
  CHECK(*end.cost_usd == Approx(0.5));
  // The usage comes before the turn's end.
  CHECK(h.sink.lines.back().starts_with("turn_end end_turn"));
}

TEST_CASE("claude controls: commands come from the CLI's lists, without those that would take the conversation away", "[claude][controls]") {
  const Json listed = Json::array({{{"name", "greet"}, {"description", "Greets someone (project)"}, {"argumentHint", "<name>"}},
                                   {{"name", "clear"}, {"description", "Start a new session"}, {"argumentHint", "[name]"}},
                                   {{"name", "compact"}, {"description", "Free up context"}, {"argumentHint", ""}},
                                   {{"name", "heapdump"}, {"description", "Dump the JS heap"}},
                                   {{"description", "no name"}}});
  const auto commands = offered_commands(listed);
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].name == "greet");
  CHECK(commands[0].description == "Greets someone (project)");
  CHECK(commands[0].argument_hint == "<name>");
  CHECK(commands[1].name == "compact");
  CHECK_FALSE(commands[1].argument_hint);  // an empty hint is no hint

  Harness h;
  h.feed({{"type", "system"}, {"subtype", "commands_changed"}, {"commands", listed}});
  REQUIRE(h.sink.commands.size() == 1);
  CHECK(h.sink.commands[0].size() == 2);
}

TEST_CASE("claude controls: the effort option, and the requests that set it, rewind and report", "[claude][controls]") {
  const auto options = session_options("medium");
  REQUIRE(options.size() == 1);
  CHECK(options[0].id == "effort");
  CHECK(options[0].kind == p::SessionOptionKind::Select);
  CHECK(options[0].current_value == "medium");
  std::vector<std::string> values;
  for (const auto& value : options[0].values) values.push_back(value.value);
  CHECK(values == std::vector<std::string>{"low", "medium", "high", "xhigh", "max"});
  CHECK(is_effort_level("xhigh"));
  CHECK_FALSE(is_effort_level("extreme"));

  CHECK(set_effort_request("e1", "low") ==
        Json::parse(R"({"type":"control_request","request_id":"e1","request":{"subtype":"apply_flag_settings","settings":{"effortLevel":"low"}}})"));
  CHECK(rewind_conversation_request("r1", "p-uuid") ==
        Json::parse(R"({"type":"control_request","request_id":"r1","request":{"subtype":"rewind_conversation","target_message_uuid":"p-uuid"}})"));
  CHECK(get_context_usage_request("c1")["request"]["subtype"] == "get_context_usage");
  CHECK(mcp_status_request("m1")["request"]["subtype"] == "mcp_status");
  CHECK(user_message("hi", {}, "u-1")["uuid"] == "u-1");
  CHECK_FALSE(user_message("hi").contains("uuid"));
}

TEST_CASE("claude controls: MCP servers in Claude Code's own form, and the launch options for effort, MCP and a fork point", "[claude][controls]") {
  p::McpServer stdio;
  stdio.name = "echo";
  stdio.transport = p::McpTransport::Stdio;
  stdio.command = "python3";
  stdio.args = std::vector<std::string>{"server.py", "--x"};
  stdio.env = Json{{"TOKEN", "t"}};
  p::McpServer http;
  http.name = "remote";
  http.transport = p::McpTransport::Http;
  http.url = "http://127.0.0.1:9/mcp";
  http.headers = Json{{"Authorization", "Bearer x"}};
  CHECK(mcp_config({stdio, http}) == Json::parse(R"({"mcpServers":{
      "echo":{"type":"stdio","command":"python3","args":["server.py","--x"],"env":{"ANTHROPIC_API_KEY":"","ANTHROPIC_AUTH_TOKEN":"","TOKEN":"t"}},
      "remote":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}}})"));

  LaunchOptions launch;
  launch.resume_session_id = "s-1";
  launch.fork_session = true;
  launch.resume_session_at = "m-9";
  launch.effort = "low";
  launch.mcp_config_file = "/private/mcp.json";
  const auto argv = command_line(launch);
  const auto after = [&](const std::string& flag) {
    const auto at = std::find(argv.begin(), argv.end(), flag);
    return at == argv.end() || at + 1 == argv.end() ? std::string("<missing>") : *(at + 1);
  };
  CHECK(after("--resume") == "s-1");
  CHECK(std::find(argv.begin(), argv.end(), "--fork-session") != argv.end());
  CHECK(after("--resume-session-at") == "m-9");
  CHECK(after("--effort") == "low");
  CHECK(after("--mcp-config") == "/private/mcp.json");
  // No fork point without a conversation to resume.
  LaunchOptions fresh;
  fresh.resume_session_at = "m-9";
  const auto plain = command_line(fresh);
  CHECK(std::find(plain.begin(), plain.end(), "--resume-session-at") == plain.end());
}

}  // namespace claude_controls_tests
