#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"

// End to end with the real Pi (`pi --mode rpc`, one process per session, run by the Node scripts/install-agents put
// beside it): the shared scenarios (Conformance.h) with Pi's profile, against the project's mock speaking Chat
// Completions, the API of Pi's `openai-completions` providers. The provider is the test's own Pi configuration
// (a models.json in its own PI_CODING_AGENT_DIR, as a user's ~/.pi/agent would hold it); the adapter never writes
// Pi's files.

namespace pi_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

// The test's Pi configuration directory: one openai-completions provider (the mock) and its one model, the
// default; retries quick, so a provider failure ends a turn in well under a second.
fs::path write_pi_config(const fs::path& home, const std::string& mock_url) {
  const auto dir = home / "pi-agent";
  fs::create_directories(dir);
  const Json model{{"id", "mock-model"}, {"name", "Mock"}, {"reasoning", false}, {"input", {"text"}},
                   {"contextWindow", 32000}, {"maxTokens", 4096},
                   {"cost", {{"input", 0}, {"output", 0}, {"cacheRead", 0}, {"cacheWrite", 0}}}};
  const Json models{{"providers", {{"mock", {{"baseUrl", mock_url + "/v1"}, {"api", "openai-completions"}, {"apiKey", "sk-mock"},
                                             {"compat", {{"supportsDeveloperRole", false}, {"supportsReasoningEffort", false}}},
                                             {"models", {model}}}}}}};
  const Json settings{{"defaultProvider", "mock"}, {"defaultModel", "mock-model"},
                      {"retry", {{"enabled", true}, {"maxRetries", 1}, {"baseDelayMs", 50}}}};
  std::ofstream(dir / "models.json") << models.dump();
  std::ofstream(dir / "settings.json") << settings.dump();
  return dir;
}

const e2e::AgentProfile& pi() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "pi";
    p.forks = true;
    p.cli_name = "pi";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_PI_BIN";
    // Pi renames its process to `pi`; the commands it runs are `bash -c <command>`.
    p.cli_marker = "pi";
    p.asking_mode = "ask";
    p.shell_tool = "bash";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      const auto config = write_pi_config(home, mock_url);
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_PI_BIN=" + cli, "PI_CODING_AGENT_DIR=" + config.string()};
    };
    p.script = [](Json turns) { return Json{{"turns", std::move(turns)}}; };
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."}, {"function_call", {{"name", "bash"}, {"arguments", {{"command", command}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // Our extension blocks a denied call; Pi gives the model the block's reason as the tool's (error) result.
    p.after_refused_tool = [](const std::string& text) {
      return mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "Denied by the user"}}, text);
    };
    // Pi keeps its sessions as JSON-lines files under its configuration directory.
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / "pi-agent" / "sessions"); };
    return p;
  }();
  return profile;
}

TEST_CASE("pi e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][pi]") {
  e2e::scenario_streamed_turn(pi());
}

TEST_CASE("pi e2e: switchboard run calls a tool and prints the final text", "[e2e][pi][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(pi());
}

TEST_CASE("pi e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][pi][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(pi());
}

TEST_CASE("pi e2e: an approved command runs and its output reaches the client", "[e2e][pi]") {
  e2e::scenario_permission_allowed(pi());
}

TEST_CASE("pi e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][pi]") {
  e2e::scenario_permission_denied_and_late_answer(pi());
}

TEST_CASE("pi e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][pi]") {
  e2e::scenario_interrupt_mid_command(pi());
}

TEST_CASE("pi e2e: a prompt sent while busy is queued and then runs", "[e2e][pi]") {
  e2e::scenario_queued_prompt(pi());
}

TEST_CASE("pi e2e: after a daemon restart the cold session resumes its Pi session", "[e2e][pi]") {
  e2e::scenario_restart_and_resume(pi());
}

TEST_CASE("pi e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][pi]") {
  e2e::scenario_shutdown_right_after_turn(pi());
}

TEST_CASE("pi e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][pi]") {
  e2e::scenario_sigterm_right_after_turn(pi());
}

TEST_CASE("pi e2e: a session whose Pi file was deleted goes on in a new one seeded with the stored transcript", "[e2e][pi]") {
  e2e::scenario_conversation_gone(pi());
}

TEST_CASE("pi e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][pi]") {
  e2e::scenario_killed_cli(pi());
}

TEST_CASE("pi e2e: a session from Pi's own history is listed and imported and resumed", "[e2e][pi]") {
  e2e::scenario_history_import(pi());
}

TEST_CASE("pi e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][pi]") {
  e2e::scenario_import_live_conversation(pi());
}

TEST_CASE("pi e2e: with PI_CODING_AGENT_SESSION_DIR, Pi's flat session folder, its history is listed and imported and resumed", "[e2e][pi]") {
  static const e2e::AgentProfile flat = [] {
    e2e::AgentProfile p = pi();
    p.environment = [usual = p.environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      auto environment = usual(home, mock_url, cli);
      environment.push_back("PI_CODING_AGENT_SESSION_DIR=" + (home / "flat-sessions").string());
      return environment;
    };
    return p;
  }();
  e2e::scenario_history_import(flat);
}

TEST_CASE("pi e2e: a write and an edit reach the client as diffs on their tool.started, and the file is changed", "[e2e][pi]") {
  const e2e::AgentProfile& profile = pi();
  // Relative paths: Pi takes them from the session's directory.
  const Json write{{"text", "Writing it."},
                   {"function_call", {{"name", "write"}, {"arguments", {{"path", "notes.txt"}, {"content", "alpha\nbeta\n"}}}}}};
  Json edit{{"text", "Editing it."},
            {"function_call", {{"name", "edit"}, {"arguments", {{"path", "notes.txt"}, {"edits", Json::array({Json{{"oldText", "beta"}, {"newText", "BETA"}}})}}}}}};
  edit["match"] = {{"last_input_is_tool_output", true}, {"tool_output_contains", "Successfully wrote"}};
  e2e::AgentWorld world(profile, Json::array({write, edit,
                                              mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "Successfully replaced"}}, "Edited.")}));
  if (!world.ready()) return;
  world.start_daemon();
  // accept-edits: the adapter lets Pi's file tools through itself, so the turn runs without asking.
  const auto id = world.create_session("accept-edits");
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "write and edit the notes"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent.contains("result"));
  CHECK(sent["result"]["text"] == "Edited.");
  std::ifstream in(world.work / "notes.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "alpha\nBETA\n");
  Json wrote;
  Json edited;
  for (const auto& event : world.client->events()) {
    if (event.value("type", "") != "tool.started") continue;
    if (event["data"].value("tool", "") == "write") wrote = event["data"];
    if (event["data"].value("tool", "") == "edit") edited = event["data"];
  }
  REQUIRE(wrote.is_object());
  REQUIRE(edited.is_object());
  CHECK(wrote["diffs"] == Json::array({Json{{"path", "notes.txt"}, {"newText", "alpha\nbeta\n"}}}));
  CHECK(edited["diffs"] == Json::array({Json{{"path", "notes.txt"}, {"oldText", "beta"}, {"newText", "BETA"}}}));
}

TEST_CASE("pi: a missing CLI is reported by agents.list and refused by session.create", "[e2e][pi]") {
  e2e::scenario_missing_cli(pi());
}

TEST_CASE("pi e2e: a provider that keeps failing ends the turn with an error after a retry status, though Pi exits 0", "[e2e][pi]") {
  auto failing = pi();
  failing.script = [](Json turns) {
    return Json{{"turns", std::move(turns)}, {"exhausted", {{"error", {{"status", 500}, {"message", "mock provider down"}}}}}};
  };
  e2e::AgentWorld world(failing, Json::array());
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto answer = world.client->call("session.send", {{"sessionId", id}, {"text", "hello?"}});
  CHECK(answer.contains("result"));
  INFO(world.transcript());
  std::size_t at = 0;
  const auto retrying = world.client->wait_event(
      [](const Json& e) { return e.value("type", "") == "agent.status" && e["data"].value("status", "") == "retrying"; }, at);
  CHECK_FALSE(retrying.is_null());
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "error");
  CHECK(stopped["data"].dump().find("mock provider down") != std::string::npos);
  // The turn's failure is not the process's: the session is idle, not stopped, and takes the next prompt.
  const auto state = world.client->wait_event(
      [](const Json& e) { return e.value("type", "") == "session.state"; }, at);
  REQUIRE_FALSE(state.is_null());
  CHECK(state["data"]["state"] == "idle");
}

TEST_CASE("pi e2e: a live session switches model and thinking level, refuses an unknown model, and full-access asks nothing", "[e2e][pi]") {
  e2e::AgentWorld world(pi(), Json::array({pi().text("hello there", 1, 0), pi().run_command("touch made_without_asking.txt"),
                                           pi().after_tool_output("Done.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hi"}})["result"]["text"] == "hello there");

  const auto unknown = world.client->call("session.setModel", {{"sessionId", id}, {"model", "mock/no-such-model"}});
  INFO(unknown.dump());
  REQUIRE(unknown.contains("error"));
  CHECK(unknown["error"]["message"].get<std::string>().find("no-such-model") != std::string::npos);
  const auto known = world.client->call("session.setModel", {{"sessionId", id}, {"model", "mock/mock-model:off"}});
  INFO(known.dump());
  CHECK(known.contains("result"));

  REQUIRE(world.client->call("session.setMode", {{"sessionId", id}, {"mode", "full-access"}}).contains("result"));
  const auto ran = world.client->call("session.send", {{"sessionId", id}, {"text", "make the file"}});
  INFO(world.transcript());
  CHECK(ran["result"]["text"] == "Done.");
  CHECK(fs::exists(world.work / "made_without_asking.txt"));
  for (const auto& event : world.client->events()) CHECK(event.value("type", "") != "permission.requested");
  const auto unknown_mode = world.client->call("session.setMode", {{"sessionId", id}, {"mode", "yolo"}});
  CHECK(unknown_mode.contains("error"));
}

TEST_CASE("pi e2e: agents.list reports Pi's version, the Node that runs it and its modes", "[e2e][pi]") {
  e2e::AgentWorld world(pi(), Json::array());
  if (!world.ready()) return;
  world.start_daemon();
  Json entry;
  REQUIRE(switchboard::testing::eventually([&] {
    const auto agents = world.client->call("agents.list");
    for (const auto& agent : agents["result"]["agents"]) {
      if (agent["agent"] == "pi") entry = agent;
    }
    return entry.contains("version");
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  INFO(entry.dump());
  CHECK(entry["installed"] == true);
  CHECK(entry["version"] == "1.6.0");
  REQUIRE(entry.contains("runtime"));
  CHECK(entry["runtime"]["name"] == "node");
  const std::string node_version = entry["runtime"]["version"];
  CHECK(node_version.rfind("v2", 0) == 0);
  CHECK(entry["modes"] == Json::array({"ask", "accept-edits", "full-access"}));
}

}  // namespace pi_e2e_tests
