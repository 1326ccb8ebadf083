#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
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
#include "support/Eventually.h"
#include "support/SourceTree.h"

// End to end with the real Claude Code CLI: the shared scenarios (Conformance.h) with Claude's profile, plus what
// only Claude has. The CLI is installed by scripts/install-agents; without it these tests are skipped visibly,
// except under CI (CI set), where a missing CLI fails them.

namespace claude_code_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& claude() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "claude";
    p.forks = true;
    p.cli_name = "claude";
    p.mock_server = "anthropic_mock.py";
    p.cli_variable = "SWITCHBOARD_CLAUDE_BIN";
    p.cli_marker = "--permission-prompt-tool stdio";
    p.asking_mode = "default";
    p.modes = {"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"};
    p.shell_tool = "Bash";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "CLAUDE_CONFIG_DIR=" + (home / ".claude").string(),
                                      "ANTHROPIC_BASE_URL=" + mock_url, "ANTHROPIC_API_KEY=sk-mock",
                                      "ANTHROPIC_AUTH_TOKEN=", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
                                      "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                                      "CLAUDE_CODE_MAX_RETRIES=2", "SWITCHBOARD_CLAUDE_BIN=" + cli};
    };
    // The session title is a side request; a rule answers it, so it never eats the scripted turns.
    p.script = [](Json turns) {
      return Json{{"rules", Json::array({Json{{"match", {{"system_contains", "sentence-case title"}}},
                                             {"reply", {{"text", R"({"title": "Test"})"}}}}})},
                  {"turns", std::move(turns)}};
    };
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"tool_use", {{"name", "Bash"}, {"input", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_user_has_tool_result", true}}, text); };
    p.after_refused_tool = [](const std::string& text) { return mock_reply::when({{"tool_result_is_error", true}}, text); };
    // Write makes a file; Edit changes only a file the conversation has read, so a Read comes first.
    p.change_file = [](const e2e::FileChange& change) {
      const auto call = [](const std::string& tool, Json input) { return Json{{"tool_use", {{"name", tool}, {"input", std::move(input)}}}}; };
      if (change.before.empty()) return std::vector<Json>{call("Write", {{"file_path", change.path}, {"content", change.after + "\n"}})};
      return std::vector<Json>{call("Read", {{"file_path", change.path}}),
                               call("Edit", {{"file_path", change.path}, {"old_string", change.before}, {"new_string", change.after}})};
    };
    // The CLI's conversations: <CLAUDE_CONFIG_DIR>/projects/<project>/<session id>.jsonl.
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / ".claude" / "projects"); };
    return p;
  }();
  return profile;
}

TEST_CASE("claude e2e: the shared fork scenario: a fork at a turn holds that turn and not the next, and both sessions answer", "[e2e][claude][fork]") {
  e2e::scenario_fork_at_turn(claude());
}

TEST_CASE("claude e2e: a fork of a conversation Claude Code no longer has goes on seeded with the source's turns through the fork point", "[e2e][claude][fork]") {
  e2e::scenario_fork_of_lost_conversation(claude());
}

TEST_CASE("claude e2e: the shared rewind scenario: a rewind drops a turn and later ones, also after a daemon restart", "[e2e][claude][rewind]") {
  e2e::scenario_rewind_past_turn(claude());
}

TEST_CASE("claude e2e: the shared file scenario: Write and Edit changes are diffed per turn and rewound from the checkpoints", "[e2e][claude][rewind]") {
  e2e::scenario_file_rewind_and_diff(claude());
}

TEST_CASE("claude e2e: session.search finds a prompt, an answer and a tool output of Claude Code and of Codex, respects the agent and cwd filters, and forgets a deleted session",
          "[e2e][claude][search]") {
  e2e::scenario_search_two_agents(claude(), codex_e2e_tests::codex());
}

TEST_CASE("claude e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][claude]") {
  e2e::scenario_streamed_turn(claude());
}

TEST_CASE("claude e2e: a permission allowed by the client runs the tool and its output reaches the client", "[e2e][claude]") {
  e2e::scenario_permission_allowed(claude());
}

TEST_CASE("claude e2e: a denied permission stops the tool and a second client's late answer gets -32002", "[e2e][claude]") {
  e2e::scenario_permission_denied_and_late_answer(claude());
}

TEST_CASE("claude e2e: interrupt mid-tool ends the turn cancelled and the tool's process is gone", "[e2e][claude]") {
  e2e::scenario_interrupt_mid_command(claude());
}

TEST_CASE("claude e2e: a prompt sent while busy is queued and then runs", "[e2e][claude]") {
  e2e::scenario_queued_prompt(claude());
}

TEST_CASE("claude e2e: after a daemon restart the cold session resumes with its history", "[e2e][claude]") {
  e2e::scenario_restart_and_resume(claude());
}

TEST_CASE("claude e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][claude]") {
  e2e::scenario_shutdown_right_after_turn(claude());
}

TEST_CASE("claude e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][claude]") {
  e2e::scenario_sigterm_right_after_turn(claude());
}

TEST_CASE("claude e2e: a session whose Claude conversation was deleted goes on in a new one seeded with the stored transcript", "[e2e][claude]") {
  e2e::scenario_conversation_gone(claude());
}

TEST_CASE("claude e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][claude]") {
  e2e::scenario_killed_cli(claude());
}

TEST_CASE("claude e2e: a conversation from the CLI's own history is listed and imported and resumed", "[e2e][claude]") {
  e2e::scenario_history_import(claude());
}

TEST_CASE("claude e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][claude]") {
  e2e::scenario_import_live_conversation(claude());
}

TEST_CASE("claude: a missing CLI is reported by agents.list and refused by session.create", "[e2e][claude]") {
  e2e::scenario_missing_cli(claude());
}

TEST_CASE("claude e2e: switchboard run calls a tool and prints the final text", "[e2e][claude][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(claude());
}

TEST_CASE("claude e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][claude][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(claude());
}

TEST_CASE("claude e2e: switchboard acp streams a prompt's answer as chunks and ends with end_turn", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_streamed_prompt(claude());
}

TEST_CASE("claude e2e: switchboard acp offers the agent's models as a config option and the model the editor picks is used", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_model_chosen_by_the_editor(claude());
}

TEST_CASE("claude e2e: switchboard acp asks the editor for a permission and the allowed tool runs", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_permission_allowed(claude());
}

TEST_CASE("claude e2e: switchboard acp asks the editor for a permission and the rejected tool does not run", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_permission_rejected(claude());
}

TEST_CASE("claude e2e: switchboard acp session/cancel mid-turn ends the prompt with cancelled", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_cancel_mid_turn(claude());
}

TEST_CASE("claude e2e: switchboard acp lists and loads a session after the daemon restarted and continues it", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_load_after_restart(claude());
}

TEST_CASE("claude e2e: switchboard acp gives the agent a prompt's file link and embedded text and image", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_prompt_with_resources(claude());
}

TEST_CASE("claude e2e: switchboard acp queues a prompt sent while busy and closes and resumes a session", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_queued_prompts_close_and_resume(claude());
}

TEST_CASE("claude e2e: switchboard acp attached to serve: a session loaded while its turn waits on a permission asks the editor", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_load_asks_an_open_permission(claude());
}

TEST_CASE("claude e2e: switchboard acp attached to serve: an SSE client sees the session and its answer withdraws the editor's request", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_attached_permission_answered_elsewhere(claude());
}

// ---- The session's controls through the daemon (plans, usage, commands, effort, MCP servers, fork, rewind, compact)

std::vector<Json> events_of(const std::vector<Json>& events, const std::string& type) {
  std::vector<Json> out;
  for (const auto& event : events) {
    if (event.value("type", "") == type) out.push_back(event);
  }
  return out;
}

bool request_mentions(const Json& request, const std::string& text) {
  return request["body"]["messages"].dump().find(text) != std::string::npos;
}

Json last_model_request(const e2e::AgentWorld& world) {
  const auto requests = world.mock->message_requests();
  return requests.empty() ? Json::object() : requests.back();
}

TEST_CASE("claude e2e: the task list arrives as whole plans, usage rises against the window, /name runs the CLI's command, and an effort change reaches the next request", "[e2e][claude][controls]") {
  const auto& profile = claude();
  const auto task_turn = [](const std::string& tool, const Json& input) {
    return Json{{"match", {{"last_user_has_tool_result", true}}}, {"tool_use", {{"name", tool}, {"input", input}}}};
  };
  e2e::AgentWorld world(profile, Json::array({
      Json{{"text", "Planning."}, {"tool_use", {{"name", "TaskCreate"}, {"input", {{"subject", "first step"}, {"description", "one"}}}}}},
      task_turn("TaskCreate", {{"subject", "second step"}, {"description", "two"}}),
      task_turn("TaskUpdate", {{"taskId", "1"}, {"status", "in_progress"}}),
      profile.after_tool_output("Planned."),
      profile.when_last_prompt_contains("Say hello to Bob loudly.", "HELLO BOB"),
      profile.when_last_prompt_contains("effort please", "Less effort."),
  }));
  if (!world.ready()) return;
  fs::create_directories(world.work / ".claude" / "commands");
  std::ofstream(world.work / ".claude" / "commands" / "greet.md") << "---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS loudly.\n";
  world.start_daemon();
  // Discovery fills the entry in once its version probe ran.
  Json capabilities;
  Json listed;
  CHECK(switchboard::testing::eventually([&] {
    listed = world.client->call("agents.list");
    for (const auto& agent : listed["result"]["agents"]) {
      if (agent.value("agent", "") == "claude" && agent.contains("capabilities")) capabilities = agent["capabilities"];
    }
    return capabilities.is_object();
  }, std::chrono::seconds(20)));
  INFO(listed.dump());
  for (const char* area : {"plans", "contextUsage", "commands", "options", "mcp", "rewind", "compact", "fork"}) CHECK(capabilities[area] == true);

  const auto id = world.create_session();
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "make a plan"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent["result"]["text"] == "Planned.");
  const auto events = world.client->events();
  const auto plans = events_of(events, "plan.updated");
  REQUIRE(plans.size() == 3);
  const Json created = Json::array({Json{{"content", "first step"}, {"status", "pending"}}, Json{{"content", "second step"}, {"status", "pending"}}});
  const Json updated = Json::array({Json{{"content", "first step"}, {"status", "in_progress"}}, Json{{"content", "second step"}, {"status", "pending"}}});
  CHECK(plans[1]["data"]["entries"] == created);
  CHECK(plans[2]["data"]["entries"] == updated);
  CHECK(plans[2]["data"]["turnId"] == sent["result"]["turnId"]);
  // One report per model request, rising; the window once the CLI has said it (its get_context_usage answer
  // can come after the first request), and at the turn's end.
  std::vector<std::int64_t> used;
  Json last_usage;
  for (const auto& usage : events_of(events, "usage.updated")) {
    if (usage["data"].value("turnId", "") != sent["result"]["turnId"]) continue;
    last_usage = usage["data"]["usage"];
    CHECK(last_usage.value("windowTokens", std::int64_t{1000000}) == 1000000);
    used.push_back(last_usage.value("usedTokens", std::int64_t{0}));
  }
  REQUIRE(used.size() >= 4);
  CHECK(used[3] > used[0]);
  CHECK(last_usage.value("windowTokens", std::int64_t{0}) == 1000000);
  auto info = world.client->call("session.get", {{"sessionId", id}})["result"]["session"];
  CHECK(info["plan"] == updated);
  CHECK(info["usage"]["windowTokens"] == 1000000);
  const auto commands = info.value("commands", Json::array());
  CHECK(std::any_of(commands.begin(), commands.end(), [](const Json& c) { return c.value("name", "") == "greet" && c.value("argumentHint", "") == "<name>"; }));
  CHECK(info["options"][0]["id"] == "effort");
  CHECK(info["options"][0]["currentValue"] == "high");

  const auto greeted = world.client->call("session.send", {{"sessionId", id}, {"text", "/greet Bob"}});
  INFO(greeted.dump());
  CHECK(greeted["result"]["text"] == "HELLO BOB");
  CHECK(request_mentions(last_model_request(world), "<command-name>/greet</command-name>"));

  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "low"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  CHECK(world.client->call("session.send", {{"sessionId", id}, {"text", "effort please"}})["result"]["text"] == "Less effort.");
  CHECK(last_model_request(world)["body"]["output_config"]["effort"] == "low");
  CHECK(world.client->call("session.get", {{"sessionId", id}})["result"]["session"]["options"][0]["currentValue"] == "low");
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  pid_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

Json mcp_server(const fs::path& pid_file, const fs::path& env_file) {
  return Json{{"name", "sbtest"},
              {"transport", "stdio"},
              {"command", "python3"},
              {"args", Json::array({switchboard::testing::source_path("tests/support/mcp_stdio_server.py"), "--pid-file", pid_file.string(),
                                    "--env-file", env_file.string()})},
              {"env", {{"SB_TEST_MARK", "given"}}}};
}

TEST_CASE("claude e2e: a session's MCP server reaches the model's tools, keeps no secret of ours, and ends with the session and with the daemon", "[e2e][claude][controls]") {
  const auto& profile = claude();
  e2e::AgentWorld world(profile, Json::array({profile.text("With tools.", 1, 0), profile.text("Second server.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  fs::create_directories(world.work);
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto env = world.tmp.path() / "mcp.env";
  const auto created = world.client->call("session.create", {{"agent", "claude"}, {"cwd", world.work.string()}, {"mcpServers", Json::array({mcp_server(pids, env)})}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "use the tool"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent["result"]["text"] == "With tools.");
  CHECK(last_model_request(world)["body"]["tools"].dump().find("mcp__sbtest__sb_echo") != std::string::npos);
  CHECK(switchboard::testing::eventually([&] {
    const auto statuses = events_of(world.client->events(), "mcp.status");
    return !statuses.empty() && statuses.back()["data"]["servers"][0].value("status", "") == "connected";
  }, std::chrono::seconds(20)));
  const auto environment = Json::parse(std::ifstream(env), nullptr, false);
  REQUIRE(environment.is_object());
  CHECK(environment.value("SB_TEST_MARK", "") == "given");
  // None of the daemon's variables (SWITCHBOARD_ORIGIN only marks what a session started, so the daemon can end it).
  std::vector<std::string> secrets;
  for (const auto& [name, value] : environment.items()) {
    if (name != "SWITCHBOARD_ORIGIN" && name.rfind("SWITCHBOARD_", 0) == 0) secrets.push_back(name);
  }
  CHECK(secrets == std::vector<std::string>{});
  // Nor the provider's key the CLI was given: the CLI starts its servers with its own environment.
  CHECK(environment.value("ANTHROPIC_API_KEY", "") == "");
  CHECK(environment.value("ANTHROPIC_AUTH_TOKEN", "") == "");
  const auto started = pids_in(pids);
  REQUIRE(started.size() == 1);
  CHECK(alive(started[0]));
  world.client->call("session.delete", {{"sessionId", id}});
  CHECK(switchboard::testing::eventually([&] { return !alive(started[0]); }, std::chrono::seconds(20), e2e::kProcessScanInterval));

  const auto pids2 = world.tmp.path() / "mcp2.pids";
  const auto again = world.client->call("session.create", {{"agent", "claude"}, {"cwd", world.work.string()}, {"mcpServers", Json::array({mcp_server(pids2, env)})}});
  REQUIRE(again.contains("result"));
  const std::string second = again["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", second}, {"text", "again"}})["result"]["text"] == "Second server.");
  const auto running = pids_in(pids2);
  REQUIRE(running.size() == 1);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
  world.client->close_stdin();
  REQUIRE(world.client->daemon().wait(std::chrono::seconds(30)) == 0);
  CHECK(switchboard::testing::eventually([&] { return !alive(running[0]); }, std::chrono::seconds(10), e2e::kProcessScanInterval));
}

TEST_CASE("claude e2e: a fork at a turn holds the conversation up to it, a rewind drops a turn and later ones, and compact summarizes", "[e2e][claude][controls]") {
  const auto& profile = claude();
  e2e::AgentWorld world(profile, Json::array({profile.text("answer alpha", 1, 0), profile.text("answer beta", 1, 0), profile.text("answer gamma", 1, 0),
                                              profile.when_last_prompt_contains("in the fork", "Fork answer."),
                                              profile.when_last_prompt_contains("after the rewind", "Rewound answer."),
                                              profile.text("<summary>SUMMARY: alpha was said.</summary>", 1, 0),
                                              profile.when_last_prompt_contains("after compact", "Compacted answer.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  std::vector<std::string> turns;
  for (const std::string prompt : {"prompt alpha", "prompt beta", "prompt gamma"}) {
    const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", prompt}});
    INFO(sent.dump());
    REQUIRE(sent.contains("result"));
    turns.push_back(sent["result"]["turnId"]);
  }
  const auto forked = world.client->call("session.fork", {{"sessionId", id}, {"turnId", turns[1]}});
  INFO(forked.dump() << "\n" << world.transcript());
  REQUIRE(forked.contains("result"));
  const std::string fork = forked["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", fork}, {"text", "in the fork"}})["result"]["text"] == "Fork answer.");
  auto request = last_model_request(world);
  CHECK(request_mentions(request, "prompt alpha"));
  CHECK(request_mentions(request, "answer beta"));
  CHECK_FALSE(request_mentions(request, "prompt gamma"));

  const auto rewound = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", turns[1]}, {"conversation", true}, {"files", false}});
  INFO(rewound.dump() << "\n" << world.transcript());
  REQUIRE(rewound.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "after the rewind"}})["result"]["text"] == "Rewound answer.");
  request = last_model_request(world);
  CHECK(request_mentions(request, "prompt alpha"));
  CHECK_FALSE(request_mentions(request, "prompt beta"));
  CHECK_FALSE(request_mentions(request, "prompt gamma"));

  const auto compacted = world.client->call("session.compact", {{"sessionId", id}});
  INFO(compacted.dump() << "\n" << world.transcript());
  REQUIRE(compacted.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "after compact"}})["result"]["text"] == "Compacted answer.");
  CHECK(request_mentions(last_model_request(world), "SUMMARY: alpha was said."));
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

}  // namespace claude_code_e2e_tests
