#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AcpScenarios.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"
#include "support/Eventually.h"
#include "support/SourceTree.h"

// End to end with the real Grok Build (`grok agent --no-leader stdio`, the ACP adapter): the shared scenarios
// (Conformance.h) with Grok's profile, against the project's Chat Completions mock. The daemon is pointed at the
// mock through SWITCHBOARD_GROK_BASE_URL, so it gives Grok a private GROK_HOME in its data directory with a config
// of its own (docs/agents/grok-build.md). The CLI is installed by scripts/install-agents; without it these tests
// are skipped visibly, except under CI, where they fail.

namespace grok_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

// Grok's side request for a new session's title: it forces the `session_title` tool.
bool is_title_request(const Json& request) {
  const auto& body = request["body"];
  return body.contains("tool_choice") && body["tool_choice"].is_object() &&
         body["tool_choice"].value("function", Json::object()).value("name", "") == "session_title";
}

const e2e::AgentProfile& grok() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "grok";
    p.cli_name = "grok";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_GROK_BIN";
    p.cli_marker = "agent --no-leader stdio";
    p.asking_mode = "ask";
    p.modes = {"ask", "accept-edits", "full-access"};
    p.shell_tool = "execute";
    p.deny_ends_turn = true;
    p.forks = true;  // Grok's own `_x.ai/session/fork`
    p.side_request = [](const Json& request) { return is_title_request(request); };
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_GROK_BIN=" + cli,
                                      "SWITCHBOARD_GROK_BASE_URL=" + mock_url + "/v1", "SWITCHBOARD_GROK_API_KEY=sk-mock",
                                      "SWITCHBOARD_GROK_MODEL=mock-model"};
    };
    // Grok names a new session in a side request that forces its `session_title` tool: a rule, so it does not
    // take a scripted turn.
    p.script = [](Json turns) {
      const Json title{{"match", {{"forced_tool", "session_title"}}},
                       {"reply", {{"function_call", {{"name", "session_title"}, {"arguments", {{"session_title", "Mock session title"}}}}}}}};
      return Json{{"rules", Json::array({title})}, {"turns", std::move(turns)}};
    };
    // Grok's shell tool wants a description besides the command.
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"function_call", {{"name", "run_terminal_command"}, {"arguments", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // Never asked: a deny ends Grok's turn (deny_ends_turn).
    p.after_refused_tool = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // write makes a file; search_replace changes one passage of a file.
    p.change_file = [](const e2e::FileChange& change) {
      const auto call = [](const std::string& tool, Json arguments) {
        return Json{{"function_call", {{"name", tool}, {"arguments", std::move(arguments)}}}};
      };
      if (change.before.empty()) return std::vector<Json>{call("write", {{"file_path", change.path}, {"content", change.after + "\n"}})};
      return std::vector<Json>{
          call("search_replace", {{"file_path", change.path}, {"old_string", change.before}, {"new_string", change.after}})};
    };
    // Grok keeps its sessions under the daemon's private GROK_HOME, in the data directory.
    p.forget_conversations = [](const fs::path&, const fs::path& data_dir) { fs::remove_all(data_dir / "grok-home" / "sessions"); };
    return p;
  }();
  return profile;
}

TEST_CASE("grok e2e: the shared file scenario: write and search_replace changes are diffed per turn and rewound from the checkpoints", "[e2e][grok][rewind]") {
  e2e::scenario_file_rewind_and_diff(grok());
}

TEST_CASE("grok e2e: a fork at the first of two turns carries that turn and not the second, and both sessions go their own ways", "[e2e][grok][fork]") {
  e2e::scenario_fork_at_turn(grok());
}

TEST_CASE("grok e2e: a fork of a conversation Grok no longer has goes on seeded with the source's turns through the fork point", "[e2e][grok][fork]") {
  e2e::scenario_fork_of_lost_conversation(grok());
}

TEST_CASE("grok e2e: a rewind of the second of three turns drops it and the third from the next request, also after a restart", "[e2e][grok][rewind]") {
  e2e::scenario_rewind_past_turn(grok());
}

TEST_CASE("grok e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][grok]") {
  e2e::scenario_streamed_turn(grok());
}

TEST_CASE("grok e2e: switchboard run calls a tool and prints the final text", "[e2e][grok][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(grok());
}

TEST_CASE("grok e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][grok][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(grok());
}

TEST_CASE("grok e2e: an approved command runs and its output reaches the client", "[e2e][grok]") {
  e2e::scenario_permission_allowed(grok());
}

TEST_CASE("grok e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][grok]") {
  e2e::scenario_permission_denied_and_late_answer(grok());
}

TEST_CASE("grok e2e: a cancel while a permission is open resolves it cancelled for every client", "[e2e][grok]") {
  e2e::scenario_cancel_while_permission_open(grok());
}

TEST_CASE("grok e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][grok]") {
  e2e::scenario_interrupt_mid_command(grok());
}

TEST_CASE("grok e2e: a prompt sent while busy is queued and then runs", "[e2e][grok]") {
  e2e::scenario_queued_prompt(grok());
}

TEST_CASE("grok e2e: after a daemon restart the cold session loads its conversation in a new process", "[e2e][grok]") {
  e2e::scenario_restart_and_resume(grok());
}

TEST_CASE("grok e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][grok]") {
  e2e::scenario_shutdown_right_after_turn(grok());
}

TEST_CASE("grok e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][grok]") {
  e2e::scenario_sigterm_right_after_turn(grok());
}

TEST_CASE("grok e2e: a session whose Grok conversation was deleted goes on in a new one seeded with the stored transcript", "[e2e][grok]") {
  e2e::scenario_conversation_gone(grok());
}

TEST_CASE("grok e2e: the ACP process killed mid-turn gives error then stopped and the next send works", "[e2e][grok]") {
  e2e::scenario_killed_cli(grok());
}

TEST_CASE("grok e2e: a session from Grok's own history is listed and imported and resumed", "[e2e][grok]") {
  e2e::scenario_history_import(grok());
}

TEST_CASE("grok e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][grok]") {
  e2e::scenario_import_live_conversation(grok());
}

// ---- Controls: plans, context usage, commands, options, MCP servers (docs/agents/grok-build.md, "Controls") ----

// Grok with the provider's model offering two reasoning efforts (agents.grok.provider.reasoning_efforts).
const e2e::AgentProfile& grok_with_efforts() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p = grok();
    p.environment = [base = grok().environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      auto environment = base(home, mock_url, cli);
      environment.push_back("SWITCHBOARD_GROK_REASONING_EFFORTS=low,high");
      return environment;
    };
    return p;
  }();
  return profile;
}

Json todo_write(Json todos, bool merge) {
  return Json{{"function_call", {{"name", "todo_write"}, {"arguments", {{"merge", merge}, {"todos", std::move(todos)}}}}}};
}

std::vector<Json> events_of(const e2e::AgentWorld& world, const std::string& type, const std::string& session_id) {
  std::vector<Json> found;
  for (const auto& event : world.client->events()) {
    if (event.value("type", "") == type && event.value("sessionId", "") == session_id) found.push_back(event);
  }
  return found;
}

// Every user message's text the model was sent, joined: what the conversation holds.
std::string user_texts(const Json& request) {
  std::string out;
  for (const auto& message : request["body"]["messages"]) {
    if (message.value("role", "") == "user") out += message["content"].dump() + "\n";
  }
  return out;
}

TEST_CASE("grok e2e: a plan created then updated arrives whole each time, and usage rises during the turn with Grok's window", "[e2e][grok][controls]") {
  const auto& profile = grok();
  const Json created = Json::array({{{"id", "1"}, {"content", "read the code"}, {"status", "in_progress"}},
                                    {{"id", "2"}, {"content", "write the fix"}, {"status", "pending"}}});
  const Json updated = Json::array({{{"id", "1"}, {"status", "completed"}}, {{"id", "2"}, {"status", "in_progress"}}});
  // The second reply updates the plan (merge: only the statuses change).
  const Json update_plan{{"match", {{"last_input_is_tool_output", true}}},
                         {"function_call", {{"name", "todo_write"}, {"arguments", {{"todos", updated}}}}}};
  e2e::AgentWorld world(profile, Json::array({todo_write(created, false), update_plan, profile.after_tool_output("Planned.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session("full-access");
  const auto ran = world.client->call("session.send", {{"sessionId", id}, {"text", "plan the work"}});
  INFO(world.transcript());
  REQUIRE(ran["result"]["text"] == "Planned.");
  const std::string turn = ran["result"]["turnId"];

  const auto plans = events_of(world, "plan.updated", id);
  REQUIRE(plans.size() >= 2);
  const Json first = plans[0]["data"]["entries"];
  REQUIRE(first.size() == 2);
  CHECK(first[0]["content"] == "read the code");
  CHECK(first[0]["status"] == "in_progress");
  CHECK(first[1]["content"] == "write the fix");
  CHECK(first[1]["status"] == "pending");
  const Json second = plans[1]["data"]["entries"];
  REQUIRE(second.size() == 2);  // whole, though the model sent only the changes
  CHECK(second[0]["content"] == "read the code");
  CHECK(second[0]["status"] == "completed");
  CHECK(second[1]["status"] == "in_progress");
  // Session info holds the latest plan, for a client that attaches late.
  const auto info = world.client->call("session.get", {{"sessionId", id}});
  CHECK(info["result"]["session"]["plan"] == plans.back()["data"]["entries"]);

  // Three model responses in the turn: usage reported after each, rising, with Grok's window for a provider model
  // that names none (200,000 tokens).
  std::vector<std::int64_t> used;
  for (const auto& event : events_of(world, "usage.updated", id)) {
    CHECK(event["data"]["usage"]["windowTokens"] == 200000);
    used.push_back(event["data"]["usage"]["usedTokens"].get<std::int64_t>());
  }
  REQUIRE(used.size() >= 3);
  CHECK(used.front() > 0);
  CHECK(used.back() > used.front());
  CHECK(info["result"]["session"]["usage"]["usedTokens"] == used.back());
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

TEST_CASE("grok e2e: Grok's commands are offered without its TUI-only ones, /compact runs as Grok's command, not as text, and session.compact sends it", "[e2e][grok][controls]") {
  const auto& profile = grok();
  // Grok's compaction asks the model for a <summary> block (and asks again after a reply it finds too thin): a rule.
  std::string summary = "<summary>\nThe user said hi and was greeted.";
  for (int i = 0; i < 40; ++i) summary += " Keep the names.";
  summary += "\n</summary>";
  const Json summarize{{"match", {{"last_user_text_contains", "summary of the conversation"}}}, {"reply", {{"text", summary}}}};
  e2e::AgentWorld world(profile, Json::array({profile.text("Hello there.", 1, 0), profile.text("Still here.", 1, 0)}), false,
                        Json::array({summarize}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session("ask");
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hi"}})["result"]["text"] == "Hello there.");
  INFO(world.transcript());
  std::size_t at = 0;
  const auto offered = world.client->wait_event([&](const Json& e) { return e.value("type", "") == "commands.updated" && e.value("sessionId", "") == id; }, at);
  REQUIRE_FALSE(offered.is_null());
  std::vector<std::string> names;
  for (const auto& command : offered["data"]["commands"]) names.push_back(command["name"]);
  CHECK(std::find(names.begin(), names.end(), "compact") != names.end());
  for (const auto* hidden : {"always-approve", "context", "session-info", "feedback", "loop"}) {
    CHECK(std::find(names.begin(), names.end(), hidden) == names.end());
  }

  const auto compacted = world.client->call("session.send", {{"sessionId", id}, {"text", "/compact keep the names"}});
  INFO(compacted.dump());
  REQUIRE(compacted.contains("result"));
  CHECK(compacted["result"]["stopReason"] == "end_turn");
  const auto requests = world.mock->message_requests();
  REQUIRE(requests.size() >= 2);
  // Grok's compaction asked the model for a summary, and said so; no request carried the command as a prompt.
  CHECK(user_texts(requests.back()).find("summary of the conversation") != std::string::npos);
  for (const auto& request : requests) CHECK(user_texts(request).find("<user_query>\\n/compact") == std::string::npos);
  CHECK_FALSE(world.client->wait_event([](const Json& e) { return e.value("type", "") == "agent.status" && e["data"]["status"] == "compacted"; }, at,
                                       std::chrono::seconds(5)).is_null());

  // session.compact, between turns: the adapter sends Grok its /compact, Grok asks the model for a summary again,
  // and compacting then compacted are reported; the summary Grok streams belongs to no turn and is not published.
  const auto summary_requests = [&] {
    std::size_t count = 0;
    for (const auto& request : world.mock->message_requests()) count += user_texts(request).find("summary of the conversation") != std::string::npos;
    return count;
  };
  const auto summaries_before = summary_requests();
  const auto events_before = world.client->events().size();
  std::size_t from = events_before;
  const auto compact = world.client->call("session.compact", {{"sessionId", id}});
  INFO(compact.dump());
  REQUIRE(compact.contains("result"));
  CHECK(summary_requests() > summaries_before);
  const auto is_status = [&](const std::string& status) {
    return [&, status](const Json& e) { return e.value("type", "") == "agent.status" && e.value("sessionId", "") == id && e["data"]["status"] == status; };
  };
  CHECK_FALSE(world.client->wait_event(is_status("compacting"), from, std::chrono::seconds(5)).is_null());
  CHECK_FALSE(world.client->wait_event(is_status("compacted"), from, std::chrono::seconds(5)).is_null());
  const auto events = world.client->events();
  for (std::size_t i = events_before; i < events.size(); ++i) {
    CHECK(events[i].value("type", "").rfind("message.", 0) != 0);
    CHECK(events[i].value("type", "") != "turn.started");
  }

  // The next turn goes on as usual.
  const auto after = world.client->call("session.send", {{"sessionId", id}, {"text", "still there?"}});
  INFO(after.dump());
  CHECK(after["result"]["text"] == "Still here.");
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

TEST_CASE("grok e2e: the effort option is offered, a change shows in the next model request, and a bad value is refused naming it", "[e2e][grok][controls]") {
  const auto& profile = grok_with_efforts();
  e2e::AgentWorld world(profile, Json::array({profile.text("first", 1, 0), profile.text("second", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session("ask");
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "one"}})["result"]["text"] == "first");
  INFO(world.transcript());
  Json effort;
  for (const auto& option : world.client->call("session.get", {{"sessionId", id}})["result"]["session"].value("options", Json::array())) {
    if (option["id"] == "effort") effort = option;
  }
  REQUIRE(effort.is_object());
  CHECK(effort["kind"] == "select");
  CHECK(effort["currentValue"] == "low");
  REQUIRE(effort["values"].size() == 2);
  CHECK(effort["values"][1]["value"] == "high");
  auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"]["reasoning_effort"] == "low");

  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "high"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  const auto bad = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "enormous"}});
  CHECK(bad["error"]["code"] == -32602);
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "two"}})["result"]["text"] == "second");
  requests = world.mock->message_requests();
  CHECK(requests.back()["body"]["reasoning_effort"] == "high");
  auto got = world.client->call("session.get", {{"sessionId", id}});  // the loop must not range over a destroyed temporary
  for (const auto& option : got["result"]["session"]["options"]) {
    if (option["id"] == "effort") CHECK(option["currentValue"] == "high");
  }
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

// The pids the test MCP server wrote, one a line.
std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  pid_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

bool all_gone(const std::vector<pid_t>& pids) {
  for (const pid_t pid : pids) {
    if (::kill(pid, 0) == 0) return false;
  }
  return true;
}

Json mcp_server(const fs::path& pids, const fs::path& environment) {
  return Json{{"name", "echoer"}, {"transport", "stdio"}, {"command", "python3"},
              {"args", {switchboard::testing::source_path("tests/support/mcp_stdio_server.py"), "--tool", "sb_shout",
                        "--pid-file", pids.string(), "--env-file", environment.string()}},
              {"env", {{"ECHO_GREETING", "hi"}}}};
}

Json search_tool(const std::string& query) {
  return Json{{"function_call", {{"name", "search_tool"}, {"arguments", {{"query", query}}}}}};
}

TEST_CASE("grok e2e: an MCP server's tool reaches the model, its status goes pending then connected, and its process ends with the session and with the daemon", "[e2e][grok][controls][mcp]") {
  const auto& profile = grok();
  // Grok offers MCP tools through its search_tool: the model finds the server's tool there.
  e2e::AgentWorld world(profile, Json::array({profile.text("warming up", 1, 0), search_tool("echoer sb_shout"),
                                              e2e::mock_reply::when({{"tool_output_contains", "sb_shout"}}, "Found it."),
                                              profile.text("second", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto environment = world.tmp.path() / "mcp-env.json";
  const auto created = world.client->call("session.create", {{"agent", "grok"}, {"cwd", world.work.string()}, {"mode", "full-access"},
                                                             {"mcpServers", {mcp_server(pids, environment)}}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello"}})["result"]["text"] == "warming up");
  INFO(world.transcript());
  std::size_t at = 0;
  const auto connected = world.client->wait_event([&](const Json& e) {
    return e.value("type", "") == "mcp.status" && e.value("sessionId", "") == id && e["data"]["servers"][0]["status"] == "connected";
  }, at, e2e::kCliPatience);
  REQUIRE_FALSE(connected.is_null());
  CHECK(connected["data"]["servers"][0]["name"] == "echoer");
  CHECK(events_of(world, "mcp.status", id).front()["data"]["servers"][0]["status"] == "pending");

  const auto found = world.client->call("session.send", {{"sessionId", id}, {"text", "find the shout tool"}});
  REQUIRE(found["result"]["text"] == "Found it.");

  // The server got its own variable; no daemon variable carries a value to it (Grok's provider key, which Grok
  // itself needs, is blanked; SWITCHBOARD_ORIGIN only marks what the session started, so the daemon can end it).
  const auto seen = Json::parse(std::ifstream(environment), nullptr, false);
  REQUIRE(seen.is_object());
  CHECK(seen.value("ECHO_GREETING", "") == "hi");
  for (const auto& [name, value] : seen.items()) {
    if (name != "SWITCHBOARD_ORIGIN" && name.rfind("SWITCHBOARD_", 0) == 0) CHECK(value == "");
  }

  const auto first = pids_in(pids);
  REQUIRE(first.size() == 1);
  REQUIRE(world.client->call("session.delete", {{"sessionId", id}}).contains("result"));
  CHECK(switchboard::testing::eventually([&] { return all_gone(first); }, std::chrono::seconds(15), e2e::kProcessScanInterval));

  // A second session's server ends with the daemon.
  const auto again = world.client->call("session.create", {{"agent", "grok"}, {"cwd", world.work.string()},
                                                           {"mcpServers", {mcp_server(pids, environment)}}});
  REQUIRE(again.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", again["result"]["session"]["sessionId"]}, {"text", "again"}})["result"]["text"] == "second");
  REQUIRE(switchboard::testing::eventually([&] { return pids_in(pids).size() == 2; }, e2e::kCliPatience, e2e::kProcessScanInterval));
  const auto both = pids_in(pids);
  world.restart();
  CHECK(switchboard::testing::eventually([&] { return all_gone(both); }, std::chrono::seconds(15), e2e::kProcessScanInterval));
}

TEST_CASE("grok over switchboard acp: an editor sees Grok's plan, usage and commands, sets its effort, and hands it an MCP server", "[e2e][grok][controls][acp-server]") {
  const Json plan = Json::array({{{"id", "1"}, {"content", "read the code"}, {"status", "in_progress"}}});
  e2e::scenario_acp_controls(grok_with_efforts(), todo_write(plan, false));
}

TEST_CASE("grok e2e: agents.list says Grok forks, rewinds and compacts its conversation", "[e2e][grok][controls]") {
  const auto& profile = grok();
  e2e::AgentWorld world(profile, Json::array());
  if (!world.ready()) return;
  world.start_daemon();
  const auto agents = world.client->call("agents.list");
  INFO(agents.dump());
  bool listed = false;
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent["agent"] != "grok") continue;
    listed = true;
    CHECK(agent["capabilities"]["fork"] == true);
    CHECK(agent["capabilities"]["rewind"] == true);
    CHECK(agent["capabilities"]["compact"] == true);
    CHECK(agent["capabilities"]["plans"] == true);
    CHECK(agent["capabilities"]["mcp"] == true);
  }
  CHECK(listed);
}

TEST_CASE("grok: a missing CLI is reported by agents.list and refused by session.create", "[e2e][grok]") {
  e2e::scenario_missing_cli(grok());
}

}  // namespace grok_e2e_tests
