#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AcpScenarios.h"
#include "e2e/AgentProfiles.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"
#include "support/SourceTree.h"

// End to end with the real Codex CLI (`codex app-server`): the shared scenarios (Conformance.h) with Codex's
// profile. The daemon is pointed at the project's OpenAI Responses mock through SWITCHBOARD_CODEX_BASE_URL, so it
// gives Codex a private CODEX_HOME with its own config.toml (docs/agents/codex.md). The CLI is installed by
// scripts/install-agents; without it these tests are skipped visibly, except under CI, where they fail.

namespace codex_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& codex() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "codex";
    p.forks = true;
    p.cli_name = "codex";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_CODEX_BIN";
    p.cli_marker = "app-server";
    // Codex's `untrusted` policy asks before any command that is not known to be read-only.
    p.asking_mode = "untrusted";
    p.modes = {"auto", "read-only", "untrusted", "full-access"};
    p.shell_tool = "shell";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_CODEX_BIN=" + cli,
                                      "SWITCHBOARD_CODEX_BASE_URL=" + mock_url + "/v1",
                                      "SWITCHBOARD_CODEX_API_KEY=sk-mock", "SWITCHBOARD_CODEX_MODEL=mock-model"};
    };
    p.script = [](Json turns) { return Json{{"turns", std::move(turns)}}; };
    // Codex's exec_command returns to the model after yield_time_ms even if the command still runs; a long
    // yield keeps a slow command inside its tool call, as a Bash tool call is for Claude.
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."}, {"exec", command}, {"yield_time_ms", 60000}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // A declined command comes back to the model as its output, saying the user rejected it.
    p.after_refused_tool = [](const std::string& text) {
      return mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "rejected"}}, text);
    };
    // Codex keeps its threads (rollout files) under the daemon's private CODEX_HOME, in the data directory.
    p.forget_conversations = [](const fs::path&, const fs::path& data_dir) { fs::remove_all(data_dir / "codex-home" / "sessions"); };
    return p;
  }();
  return profile;
}

// Codex offers its file tool, apply_patch, only to the models of its own catalog: the file scenario runs with one of
// them (the mock answers whatever model is asked).
const e2e::AgentProfile& codex_with_apply_patch() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p = codex();
    p.environment = [usual = p.environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      auto environment = usual(home, mock_url, cli);
      for (auto& variable : environment) {
        if (variable.rfind("SWITCHBOARD_CODEX_MODEL=", 0) == 0) variable = "SWITCHBOARD_CODEX_MODEL=gpt-5.5";
      }
      return environment;
    };
    p.change_file = [](const e2e::FileChange& change) {
      const std::string section = change.before.empty()
                                      ? "*** Add File: " + change.path + "\n+" + change.after + "\n"
                                      : "*** Update File: " + change.path + "\n@@\n-" + change.before + "\n+" + change.after + "\n";
      return std::vector<Json>{Json{{"patch", "*** Begin Patch\n" + section + "*** End Patch\n"}}};
    };
    return p;
  }();
  return profile;
}

TEST_CASE("codex e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][codex]") {
  e2e::scenario_streamed_turn(codex());
}

TEST_CASE("codex e2e: an approved command runs and its output reaches the client", "[e2e][codex]") {
  e2e::scenario_permission_allowed(codex());
}

TEST_CASE("codex e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][codex]") {
  e2e::scenario_permission_denied_and_late_answer(codex());
}

TEST_CASE("codex e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][codex]") {
  e2e::scenario_interrupt_mid_command(codex());
}

TEST_CASE("codex e2e: a prompt sent while busy is queued and then runs", "[e2e][codex]") {
  e2e::scenario_queued_prompt(codex());
}

TEST_CASE("codex e2e: after a daemon restart the cold session resumes its thread", "[e2e][codex]") {
  e2e::scenario_restart_and_resume(codex());
}

TEST_CASE("codex e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][codex]") {
  e2e::scenario_shutdown_right_after_turn(codex());
}

TEST_CASE("codex e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][codex]") {
  e2e::scenario_sigterm_right_after_turn(codex());
}

TEST_CASE("codex e2e: a session whose Codex thread was deleted goes on in a new one seeded with the stored transcript", "[e2e][codex]") {
  e2e::scenario_conversation_gone(codex());
}

TEST_CASE("codex e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][codex]") {
  e2e::scenario_killed_cli(codex());
}

TEST_CASE("codex e2e: a thread from Codex's own history is listed and imported and resumed", "[e2e][codex]") {
  e2e::scenario_history_import(codex());
}

TEST_CASE("codex e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][codex]") {
  e2e::scenario_import_live_conversation(codex());
}

TEST_CASE("codex: a missing CLI is reported by agents.list and refused by session.create", "[e2e][codex]") {
  e2e::scenario_missing_cli(codex());
}

TEST_CASE("codex e2e: switchboard run calls a tool and prints the final text", "[e2e][codex][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(codex());
}

TEST_CASE("codex e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][codex][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(codex());
}

TEST_CASE("codex e2e: switchboard acp streams a prompt's answer as chunks and ends with end_turn", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_streamed_prompt(codex());
}

TEST_CASE("codex e2e: switchboard acp offers the agent's models as a config option and the model the editor picks is used", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_model_chosen_by_the_editor(codex());
}

TEST_CASE("codex e2e: switchboard acp asks the editor for a permission and the allowed tool runs", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_permission_allowed(codex());
}

TEST_CASE("codex e2e: switchboard acp asks the editor for a permission and the rejected tool does not run", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_permission_rejected(codex());
}

TEST_CASE("codex e2e: switchboard acp session/cancel mid-turn ends the prompt with cancelled", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_cancel_mid_turn(codex());
}

TEST_CASE("codex e2e: switchboard acp lists and loads a session after the daemon restarted and continues it", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_load_after_restart(codex());
}

TEST_CASE("codex e2e: switchboard acp gives the agent a prompt's file link and embedded text and image", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_prompt_with_resources(codex());
}

TEST_CASE("codex e2e: switchboard acp queues a prompt sent while busy and closes and resumes a session", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_queued_prompts_close_and_resume(codex());
}

TEST_CASE("codex e2e: switchboard acp attached to serve: a session loaded while its turn waits on a permission asks the editor", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_load_asks_an_open_permission(codex());
}

TEST_CASE("codex e2e: switchboard acp attached to serve: an SSE client sees the session and its answer withdraws the editor's request", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_attached_permission_answered_elsewhere(codex());
}

// ---- Controls (plans, usage, commands, effort, MCP servers; fork, rewind, compact) ------------------------------

// The JSON of one Responses request's whole `input` (what the model was sent).
std::string conversation_of(const Json& request) { return request["body"]["input"].dump(); }

std::vector<Json> events_of(const e2e::AgentWorld& world, const std::string& type, const std::string& session) {
  std::vector<Json> found;
  for (const auto& event : world.client->events()) {
    if (event.value("type", "") == type && event.value("sessionId", "") == session) found.push_back(event);
  }
  return found;
}

std::string turn_of(const Json& sent) { return sent["result"].value("turnId", ""); }

// A reply calling Codex's update_plan tool with these steps (status: pending, in_progress, completed).
Json update_plan(const Json& steps) { return Json{{"function_call", {{"name", "update_plan"}, {"arguments", {{"plan", steps}}}}}}; }

TEST_CASE("codex e2e: agents.list says Codex has every control", "[e2e][codex][controls]") {
  e2e::AgentWorld world(codex(), Json::array());
  if (!world.ready()) return;
  world.start_daemon();
  Json entry;
  // Discovery probes the CLI in the background: agents.list has the agent once it is done.
  REQUIRE(switchboard::testing::eventually([&] {
    auto agents = world.client->call("agents.list");
    for (const auto& agent : agents["result"]["agents"]) {
      if (agent.value("agent", "") == "codex" && agent.contains("capabilities")) entry = agent;
    }
    return entry.is_object();
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  for (const char* name : {"plans", "contextUsage", "commands", "options", "mcp", "fork", "rewind", "compact"}) {
    INFO(name);
    CHECK(entry["capabilities"][name] == true);
  }
}

TEST_CASE("codex e2e: controls: a plan created then updated arrives whole twice, usage rises with Codex's window, and an effort change reaches the next request", "[e2e][codex][controls]") {
  const auto& profile = codex();
  // The second plan comes after the first one's output; the turn's answer after the second's.
  const Json turns = Json::array(
      {update_plan({{{"step", "Read the code"}, {"status", "in_progress"}}, {{"step", "Fix it"}, {"status", "pending"}}}),
       Json{{"match", {{"last_input_is_tool_output", true}}},
            {"function_call", {{"name", "update_plan"}, {"arguments", {{"plan", {{{"step", "Read the code"}, {"status", "completed"}},
                                                                                  {{"step", "Fix it"}, {"status", "in_progress"}}}}}}}}},
       profile.after_tool_output("Planned."), profile.text("high effort", 1, 0)});
  e2e::AgentWorld world(profile, turns);
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session("full-access");
  const auto planned = world.client->call("session.send", {{"sessionId", id}, {"text", "make a plan"}});
  INFO(planned.dump() << "\n" << world.transcript());
  REQUIRE(planned["result"]["text"] == "Planned.");
  const std::string turn = turn_of(planned);

  const auto plans = events_of(world, "plan.updated", id);
  REQUIRE(plans.size() == 2);
  // Each change once: as the plan, not also as a tool call or a message.
  CHECK(events_of(world, "tool.started", id).empty());
  CHECK(events_of(world, "tool.completed", id).empty());
  const auto messages = events_of(world, "message.completed", id);
  REQUIRE(messages.size() == 1);
  CHECK(messages[0]["data"]["text"] == "Planned.");
  const auto& first = plans[0]["data"]["entries"];
  REQUIRE(first.size() == 2);
  CHECK(first[0] == Json{{"content", "Read the code"}, {"status", "in_progress"}});
  CHECK(first[1] == Json{{"content", "Fix it"}, {"status", "pending"}});
  const auto& second = plans[1]["data"]["entries"];
  REQUIRE(second.size() == 2);
  CHECK(second[0]["status"] == "completed");
  CHECK(second[1]["status"] == "in_progress");
  const auto info = world.client->call("session.get", {{"sessionId", id}});
  CHECK(info["result"]["session"]["plan"] == second);

  // One usage report per model request of the turn (three), each the context as that request left it.
  std::vector<std::int64_t> used;
  for (const auto& event : events_of(world, "usage.updated", id)) {
    if (event["data"].value("turnId", "") != turn) continue;
    // Codex's window for a model its catalogue does not know (the mock's): its fallback metadata's
    // 272,000 tokens, of which it counts 95% usable.
    CHECK(event["data"]["usage"]["windowTokens"] == 258400);
    used.push_back(event["data"]["usage"]["usedTokens"].get<std::int64_t>());
  }
  REQUIRE(used.size() == 3);
  CHECK(std::is_sorted(used.begin(), used.end()));
  CHECK(used.back() > used.front());

  // The effort option, from Codex's model catalogue; the mock's model has no effort of its own, so none is sent.
  Json effort;
  REQUIRE(switchboard::testing::eventually([&] {
    const auto got = world.client->call("session.get", {{"sessionId", id}});
    for (const auto& option : got["result"]["session"].value("options", Json::array())) {
      if (option["id"] == "effort") effort = option;
    }
    return effort.is_object();
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  CHECK(effort["values"].dump().find("\"high\"") != std::string::npos);
  auto requests = world.mock->message_requests();
  REQUIRE(requests.size() == 3);
  CHECK_FALSE(requests.back()["body"]["reasoning"].contains("effort"));

  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "high"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  const auto bad = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "enormous"}});
  CHECK(bad["error"]["code"] == -32602);
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "think harder"}})["result"]["text"] == "high effort");
  requests = world.mock->message_requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests.back()["body"]["reasoning"]["effort"] == "high");
  auto got = world.client->call("session.get", {{"sessionId", id}});  // the loop must not range over a destroyed temporary
  for (const auto& option : got["result"]["session"]["options"]) {
    if (option["id"] == "effort") CHECK(option["currentValue"] == "high");
  }
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

TEST_CASE("codex e2e: controls: Codex's skills are the commands, and /name runs the skill, not a prompt", "[e2e][codex][controls]") {
  const auto& profile = codex();
  e2e::AgentWorld world(profile, Json::array({profile.text("hello", 1, 0), profile.text("skill ran", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello"}})["result"]["text"] == "hello");
  std::size_t at = 0;
  const auto commands = world.client->wait_event([&](const Json& e) { return e.value("type", "") == "commands.updated" && e.value("sessionId", "") == id; }, at);
  INFO(world.transcript());
  REQUIRE_FALSE(commands.is_null());
  REQUIRE_FALSE(commands["data"]["commands"].empty());
  const std::string name = commands["data"]["commands"][0]["name"];
  CHECK_FALSE(commands["data"]["commands"][0].value("description", "").empty());

  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "/" + name + " for the footer"}})["result"]["text"] == "skill ran");
  const auto requests = world.mock->message_requests();
  REQUIRE(requests.size() == 2);
  const std::string sent = conversation_of(requests.back());
  // Codex's own skill mention: the prompt names it with `$`, and the skill's instructions come with it.
  CHECK(sent.find("$" + name + " for the footer") != std::string::npos);
  CHECK(sent.find("<skill>\\n<name>" + name + "</name>") != std::string::npos);
  CHECK(sent.find("/" + name + " for the footer") == std::string::npos);
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
  return std::none_of(pids.begin(), pids.end(), [](pid_t pid) { return ::kill(pid, 0) == 0; });
}

Json mcp_server(const fs::path& pids, const fs::path& environment) {
  return Json{{"name", "echoer"}, {"transport", "stdio"}, {"command", "python3"},
              {"args", {switchboard::testing::source_path("tests/support/mcp_stdio_server.py"), "--tool", "shout",
                        "--pid-file", pids.string(), "--env-file", environment.string()}},
              {"env", {{"ECHO_GREETING", "hi"}}}};
}

TEST_CASE("codex e2e: an MCP server's tool reaches the model, its status is reported, and its process ends with the session and with the daemon", "[e2e][codex][mcp]") {
  const auto& profile = codex();
  e2e::AgentWorld world(profile, Json::array({profile.text("tools seen", 1, 0), profile.text("second", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto environment = world.tmp.path() / "mcp-env.json";
  const auto created = world.client->call("session.create", {{"agent", "codex"}, {"cwd", world.work.string()},
                                                             {"mcpServers", {mcp_server(pids, environment)}}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "which tools?"}})["result"]["text"] == "tools seen");
  INFO(world.transcript());
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  // Codex offers an MCP server's tools in a namespace named after the server.
  const std::string tools = requests.front()["body"]["tools"].dump();
  CHECK(tools.find("\"mcp__echoer\"") != std::string::npos);
  CHECK(tools.find("\"shout\"") != std::string::npos);

  Json connected;
  REQUIRE(switchboard::testing::eventually([&] {
    for (const auto& event : events_of(world, "mcp.status", id)) {
      if (event["data"]["servers"].size() == 1 && event["data"]["servers"][0]["status"] == "connected") connected = event;
    }
    return connected.is_object();
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  CHECK(connected["data"]["servers"][0]["name"] == "echoer");
  CHECK(connected["data"]["servers"][0]["transport"] == "stdio");

  // The server got its own variable and nothing of the daemon's.
  const auto seen = Json::parse(std::ifstream(environment), nullptr, false);
  REQUIRE(seen.is_object());
  CHECK(seen.value("ECHO_GREETING", "") == "hi");
  // The key we hand Codex is named to the server empty (in case Codex passed its environment on), never with a value.
  for (const auto& [name, value] : seen.items()) {
    INFO(name);
    if (name.rfind("SWITCHBOARD_", 0) == 0) CHECK(value == "");
  }

  const auto first = pids_in(pids);
  REQUIRE_FALSE(first.empty());
  REQUIRE(world.client->call("session.delete", {{"sessionId", id}}).contains("result"));
  CHECK(switchboard::testing::eventually([&] { return all_gone(first); }, std::chrono::seconds(15), e2e::kProcessScanInterval));

  // A second session's server ends with the daemon.
  const auto again = world.client->call("session.create", {{"agent", "codex"}, {"cwd", world.work.string()},
                                                           {"mcpServers", {mcp_server(pids, environment)}}});
  REQUIRE(again.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", again["result"]["session"]["sessionId"]}, {"text", "again"}})["result"]["text"] == "second");
  const auto both = pids_in(pids);
  REQUIRE(both.size() > first.size());
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
  world.restart();
  CHECK(switchboard::testing::eventually([&] { return all_gone(both); }, std::chrono::seconds(15), e2e::kProcessScanInterval));
}

TEST_CASE("codex e2e: a fork at a turn carries the conversation up to that turn and nothing after it, and both sessions answer", "[e2e][codex][fork]") {
  e2e::scenario_fork_at_turn(codex());
}

TEST_CASE("codex e2e: a fork of a conversation Codex no longer has goes on seeded with the source's turns through the fork point", "[e2e][codex][fork]") {
  e2e::scenario_fork_of_lost_conversation(codex());
}

TEST_CASE("codex e2e: a rewind past a turn drops it and every later one from the next model request, also after a daemon restart", "[e2e][codex][rewind]") {
  e2e::scenario_rewind_past_turn(codex());
}

TEST_CASE("codex e2e: the shared file scenario: apply_patch changes are diffed per turn and rewound from the checkpoints", "[e2e][codex][rewind]") {
  e2e::scenario_file_rewind_and_diff(codex_with_apply_patch());
}

TEST_CASE("codex e2e: session.search finds a prompt, an answer and a tool output of Codex and of OpenCode, respects the agent and cwd filters, and forgets a deleted session",
          "[e2e][codex][search]") {
  e2e::scenario_search_two_agents(codex(), opencode_e2e_tests::opencode());
}

TEST_CASE("codex e2e: compact makes Codex summarize the thread, with compacting and compacted statuses, and the next request carries the summary", "[e2e][codex][compact]") {
  const auto& profile = codex();
  // Codex's summary request is told apart by its prompt and answered by a rule, which takes no scripted turn.
  const Json summary = Json::array({Json{{"match", {{"input_contains", "CONTEXT CHECKPOINT COMPACTION"}}},
                                         {"reply", {{"text", "summarized by the mock"}}}}});
  e2e::AgentWorld world(profile, Json::array({profile.text("one", 1, 0), profile.text("after compaction", 1, 0)}), false, summary);
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "alpha prompt"}})["result"]["text"] == "one");
  const auto compacted = world.client->call("session.compact", {{"sessionId", id}});
  INFO(compacted.dump() << "\n" << world.transcript());
  REQUIRE(compacted.contains("result"));
  auto requests = world.mock->message_requests();
  REQUIRE(requests.size() == 2);
  CHECK(conversation_of(requests[1]).find("CONTEXT CHECKPOINT COMPACTION") != std::string::npos);
  CHECK(conversation_of(requests[1]).find("alpha prompt") != std::string::npos);
  std::vector<std::string> statuses;
  for (const auto& event : events_of(world, "agent.status", id)) statuses.push_back(event["data"].value("status", ""));
  CHECK(std::find(statuses.begin(), statuses.end(), "compacting") != statuses.end());
  CHECK(std::find(statuses.begin(), statuses.end(), "compacted") != statuses.end());
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "gamma prompt"}})["result"]["text"] == "after compaction");
  requests = world.mock->message_requests();
  REQUIRE(requests.size() == 3);
  CHECK(conversation_of(requests.back()).find("summarized by the mock") != std::string::npos);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

}  // namespace codex_e2e_tests
