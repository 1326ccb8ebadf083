#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentProfiles.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"
#include "support/SourceTree.h"

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
    // write makes a file; edit replaces passages of one (Pi needs no read before it).
    p.change_file = [](const e2e::FileChange& change) {
      const auto call = [](const std::string& tool, Json arguments) {
        return Json{{"function_call", {{"name", tool}, {"arguments", std::move(arguments)}}}};
      };
      if (change.before.empty()) return std::vector<Json>{call("write", {{"path", change.path}, {"content", change.after + "\n"}})};
      return std::vector<Json>{
          call("edit", {{"path", change.path}, {"edits", Json::array({Json{{"oldText", change.before}, {"newText", change.after}}})}})};
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
  // Pi has no plan tool; everything else of the controls it has.
  const auto& capabilities = entry["capabilities"];
  CHECK(capabilities["plans"] == false);
  for (const char* name : {"contextUsage", "commands", "options", "mcp", "fork", "rewind", "compact"}) {
    INFO(name);
    CHECK(capabilities[name] == true);
  }
}

// ---- Controls (commands, effort, usage, MCP servers; fork, rewind, compact) ------------------------------------

// Pi's configuration for the controls: the mock's model reasons (so Pi offers thinking levels and sends
// `reasoning_effort`), a prompt template `/greet`, and compaction that keeps little, so a short conversation can be
// summarized.
const e2e::AgentProfile& pi_controls() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p = pi();
    p.environment = [usual = p.environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      auto environment = usual(home, mock_url, cli);
      const auto dir = home / "pi-agent";
      const Json model{{"id", "mock-model"}, {"name", "Mock"}, {"reasoning", true}, {"input", {"text"}},
                       {"contextWindow", 32000}, {"maxTokens", 4096},
                       {"cost", {{"input", 1}, {"output", 2}, {"cacheRead", 0}, {"cacheWrite", 0}}}};
      const Json models{{"providers", {{"mock", {{"baseUrl", mock_url + "/v1"}, {"api", "openai-completions"}, {"apiKey", "sk-mock"},
                                                 {"compat", {{"supportsDeveloperRole", false}, {"supportsReasoningEffort", true}}},
                                                 {"models", {model}}}}}}};
      const Json settings{{"defaultProvider", "mock"}, {"defaultModel", "mock-model"},
                          {"retry", {{"enabled", true}, {"maxRetries", 1}, {"baseDelayMs", 50}}},
                          {"compaction", {{"enabled", false}, {"keepRecentTokens", 1}}}};
      std::ofstream(dir / "models.json") << models.dump();
      std::ofstream(dir / "settings.json") << settings.dump();
      fs::create_directories(dir / "prompts");
      std::ofstream(dir / "prompts" / "greet.md") << "---\ndescription: Greets someone\n---\nPlease greet $1 warmly.\n";
      return environment;
    };
    return p;
  }();
  return profile;
}

// The text of every message of one Chat Completions request, joined (what the model was sent).
std::string conversation_of(const Json& request) {
  std::string text;
  for (const auto& message : request["body"]["messages"]) text += message.dump() + "\n";
  return text;
}

std::vector<Json> events_of(const e2e::AgentWorld& world, const std::string& type, const std::string& session) {
  std::vector<Json> found;
  for (const auto& event : world.client->events()) {
    if (event.value("type", "") == type && event.value("sessionId", "") == session) found.push_back(event);
  }
  return found;
}

std::string turn_of(const Json& sent) { return sent["result"].value("turnId", ""); }

TEST_CASE("pi e2e: controls: commands are offered, /greet runs as Pi's prompt template, usage rises during a turn, and an effort change reaches the next request", "[e2e][pi][controls]") {
  const auto& profile = pi_controls();
  e2e::AgentWorld world(profile, Json::array({profile.run_command("echo counted"), profile.after_tool_output("Ran it."),
                                              profile.text("Hello Bob!", 1, 0), profile.text("low effort", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session("full-access");
  // Pi starts with the first prompt: a turn of two model requests, usage.updated inside it, rising, with the
  // model's window.
  const auto ran = world.client->call("session.send", {{"sessionId", id}, {"text", "count something"}});
  REQUIRE(ran["result"]["text"] == "Ran it.");
  const std::string first_turn = turn_of(ran);
  std::vector<std::int64_t> used;
  for (const auto& event : events_of(world, "usage.updated", id)) {
    if (event["data"].value("turnId", "") != first_turn) continue;
    CHECK(event["data"]["usage"]["windowTokens"] == 32000);
    CHECK(event["data"]["usage"].contains("costUsd"));
    // The start's report of an empty conversation (0) may fall inside the turn too.
    if (const auto tokens = event["data"]["usage"]["usedTokens"].get<std::int64_t>(); tokens > 0) used.push_back(tokens);
  }
  // One after each of the turn's two model answers.
  REQUIRE(used.size() >= 2);
  CHECK(used.back() > used.front());

  std::size_t at = 0;
  const auto commands = world.client->wait_event([&](const Json& e) { return e.value("type", "") == "commands.updated" && e.value("sessionId", "") == id; }, at);
  INFO(world.transcript());
  REQUIRE_FALSE(commands.is_null());
  bool greet = false;
  for (const auto& command : commands["data"]["commands"]) {
    if (command["name"] == "greet") greet = command.value("description", "") == "Greets someone";
    CHECK(command["name"] != "mcp");  // Pi's built-in extension commands are left out
  }
  CHECK(greet);

  // The effort option: Pi's thinking levels for a reasoning model, "medium" by default.
  Json effort;
  REQUIRE(switchboard::testing::eventually([&] {
    const auto info = world.client->call("session.get", {{"sessionId", id}});
    for (const auto& option : info["result"]["session"].value("options", Json::array())) {
      if (option["id"] == "effort") effort = option;
    }
    return effort.is_object();
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  CHECK(effort["currentValue"] == "medium");
  CHECK(effort["values"].dump().find("\"high\"") != std::string::npos);

  // `/greet Bob` is Pi's prompt template: the model gets the template's text, not the command.
  const auto greeted = world.client->call("session.send", {{"sessionId", id}, {"text", "/greet Bob"}});
  CHECK(greeted["result"]["text"] == "Hello Bob!");
  auto requests = world.mock->message_requests();
  REQUIRE(requests.size() == 3);
  const auto& last_prompt = requests.back()["body"]["messages"].back();
  CHECK(last_prompt.dump().find("Please greet Bob warmly.") != std::string::npos);
  CHECK(conversation_of(requests.back()).find("/greet") == std::string::npos);
  CHECK(requests.back()["body"]["reasoning_effort"] == "medium");

  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "low"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  const auto bad = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "enormous"}});
  CHECK(bad["error"]["code"] == -32602);
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "think less"}})["result"]["text"] == "low effort");
  requests = world.mock->message_requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests.back()["body"]["reasoning_effort"] == "low");
  const auto info = world.client->call("session.get", {{"sessionId", id}});
  for (const auto& option : info["result"]["session"]["options"]) {
    if (option["id"] == "effort") CHECK(option["currentValue"] == "low");
  }
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

TEST_CASE("pi e2e: an effort set before Pi has started applies to its first model request", "[e2e][pi][controls]") {
  const auto& profile = pi_controls();
  e2e::AgentWorld world(profile, Json::array({profile.text("thought hard", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "high"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "think"}})["result"]["text"] == "thought hard");
  const auto requests = world.mock->message_requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests.front()["body"]["reasoning_effort"] == "high");
  Json effort;
  REQUIRE(switchboard::testing::eventually([&] {
    for (const auto& option : world.client->call("session.get", {{"sessionId", id}})["result"]["session"].value("options", Json::array())) {
      if (option["id"] == "effort") effort = option;
    }
    return effort.is_object();
  }, e2e::kCliPatience, std::chrono::milliseconds(100)));
  CHECK(effort["currentValue"] == "high");
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
              {"args", {switchboard::testing::source_path("tests/support/mcp_stdio_server.py"), "--tool", "shout",
                        "--pid-file", pids.string(), "--env-file", environment.string()}},
              {"env", {{"ECHO_GREETING", "hi"}}}};
}

TEST_CASE("pi e2e: an MCP server's tool reaches the model, its status is reported, and its process ends with the session and with the daemon", "[e2e][pi][mcp]") {
  const auto& profile = pi_controls();
  e2e::AgentWorld world(profile, Json::array({profile.text("tools seen", 1, 0), profile.text("second", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto environment = world.tmp.path() / "mcp-env.json";
  // Beside it, one whose program does not exist and one whose name Pi refuses (letters, digits, _ and - only).
  const Json missing{{"name", "missing"}, {"transport", "stdio"}, {"command", (world.tmp.path() / "no-such-server").string()}};
  const Json refused{{"name", "bad.name"}, {"transport", "stdio"}, {"command", "python3"}};
  const auto created = world.client->call("session.create", {{"agent", "pi"}, {"cwd", world.work.string()},
                                                             {"mcpServers", {mcp_server(pids, environment), missing, refused}}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "which tools?"}})["result"]["text"] == "tools seen");
  INFO(world.transcript());
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.front()["body"]["tools"].dump().find("mcp__echoer__shout") != std::string::npos);

  std::size_t at = 0;
  const auto status = world.client->wait_event([&](const Json& e) { return e.value("type", "") == "mcp.status" && e.value("sessionId", "") == id; }, at);
  REQUIRE_FALSE(status.is_null());
  const auto& servers = status["data"]["servers"];
  REQUIRE(servers.size() == 3);
  CHECK(servers[0]["name"] == "echoer");
  CHECK(servers[0]["status"] == "connected");
  CHECK(servers[0]["tools"] == 1);
  CHECK(servers[1]["name"] == "missing");
  CHECK(servers[1]["status"] == "failed");
  CHECK(servers[1].value("error", "").find("ENOENT") != std::string::npos);
  CHECK(servers[2]["name"] == "bad.name");
  CHECK(servers[2]["status"] == "failed");
  const auto info = world.client->call("session.get", {{"sessionId", id}});
  CHECK(info["result"]["session"]["mcpServers"] == servers);

  // The server got its own variable and none of the daemon's (SWITCHBOARD_ORIGIN only marks what the session
  // started, so that the daemon can end it).
  const auto seen = Json::parse(std::ifstream(environment), nullptr, false);
  REQUIRE(seen.is_object());
  CHECK(seen.value("ECHO_GREETING", "") == "hi");
  for (const auto& [name, value] : seen.items()) {
    if (name != "SWITCHBOARD_ORIGIN") CHECK(name.rfind("SWITCHBOARD_", 0) != 0);
  }

  const auto first = pids_in(pids);
  REQUIRE(first.size() == 1);
  REQUIRE(world.client->call("session.delete", {{"sessionId", id}}).contains("result"));
  CHECK(switchboard::testing::eventually([&] { return all_gone(first); }, std::chrono::seconds(15), e2e::kProcessScanInterval));

  // A second session's server ends with the daemon.
  const auto again = world.client->call("session.create", {{"agent", "pi"}, {"cwd", world.work.string()},
                                                           {"mcpServers", {mcp_server(pids, environment)}}});
  REQUIRE(again.contains("result"));
  REQUIRE(world.client->call("session.send", {{"sessionId", again["result"]["session"]["sessionId"]}, {"text", "again"}})["result"]["text"] == "second");
  const auto both = pids_in(pids);
  REQUIRE(both.size() == 2);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
  world.restart();
  CHECK(switchboard::testing::eventually([&] { return all_gone(both); }, std::chrono::seconds(15), e2e::kProcessScanInterval));
}

TEST_CASE("pi e2e: an MCP server ends when its Pi is killed, and the session goes on with a new Pi and a new server", "[e2e][pi][mcp]") {
  const auto& profile = pi_controls();
  e2e::AgentWorld world(profile, Json::array({profile.text("first", 1, 0), profile.text("after the kill", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto created = world.client->call("session.create", {{"agent", "pi"}, {"cwd", world.work.string()},
                                                             {"mcpServers", {mcp_server(pids, world.tmp.path() / "env.json")}}});
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello"}})["result"]["text"] == "first");
  const auto servers = pids_in(pids);
  REQUIRE(servers.size() == 1);
  // The server leads a process group of its own too (Pi starts it so): Pi is the leader that is not the server.
  std::vector<pid_t> pis;
  for (const pid_t pid : world.cli_processes()) {
    if (pid != servers.front()) pis.push_back(pid);
  }
  REQUIRE(pis.size() == 1);
  ::kill(pis.front(), SIGKILL);
  CHECK(switchboard::testing::eventually([&] { return all_gone(servers); }, std::chrono::seconds(15), e2e::kProcessScanInterval));
  INFO(world.transcript());
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "still there?"}})["result"]["text"] == "after the kill");
  CHECK(world.mock->message_requests().back()["body"]["tools"].dump().find("mcp__echoer__shout") != std::string::npos);
  CHECK(pids_in(pids).size() == 2);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

TEST_CASE("pi e2e: a fork at a turn carries the conversation up to that turn and nothing after it, and both sessions answer", "[e2e][pi][fork]") {
  e2e::scenario_fork_at_turn(pi_controls());
}

TEST_CASE("pi e2e: a fork of a conversation Pi no longer has goes on seeded with the source's turns through the fork point", "[e2e][pi][fork]") {
  e2e::scenario_fork_of_lost_conversation(pi_controls());
}

TEST_CASE("pi e2e: a rewind past a turn drops it and every later one from the next model request, also after a daemon restart", "[e2e][pi][rewind]") {
  e2e::scenario_rewind_past_turn(pi_controls());
}

TEST_CASE("pi e2e: the shared file scenario: write and edit changes are diffed per turn and rewound from the checkpoints", "[e2e][pi][rewind]") {
  e2e::scenario_file_rewind_and_diff(pi());
}

TEST_CASE("pi e2e: session.search finds a prompt, an answer and a tool output of Pi and of Claude Code, respects the agent and cwd filters, and forgets a deleted session",
          "[e2e][pi][search]") {
  e2e::scenario_search_two_agents(pi(), claude_code_e2e_tests::claude());
}

TEST_CASE("pi e2e: compact asks Pi to summarize the conversation, with compacting and compacted statuses", "[e2e][pi][compact]") {
  const auto& profile = pi_controls();
  // Pi's summary requests (one, or two when it also summarizes a turn it cuts) are told apart by their system
  // prompt and answered by a rule, which takes no scripted turn.
  const Json summary = Json::array({Json{{"match", {{"developer_contains", "context summarization assistant"}}},
                                         {"reply", {{"text", "## Goal\nsummarized by the mock"}}}}});
  e2e::AgentWorld world(profile, Json::array({profile.text("one", 1, 0), profile.text("two", 1, 0), profile.text("after compaction", 1, 0)}),
                        false, summary);
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "alpha prompt with some words in it"}})["result"]["text"] == "one");
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "beta prompt with more words in it"}})["result"]["text"] == "two");
  const auto compacted = world.client->call("session.compact", {{"sessionId", id}});
  INFO(compacted.dump() << "\n" << world.transcript());
  REQUIRE(compacted.contains("result"));
  auto requests = world.mock->message_requests();
  REQUIRE(requests.size() >= 3);
  std::string summarized;
  for (std::size_t i = 2; i < requests.size(); ++i) summarized += conversation_of(requests[i]);
  CHECK(summarized.find("context summarization assistant") != std::string::npos);
  CHECK(summarized.find("alpha prompt") != std::string::npos);
  std::vector<std::string> statuses;
  for (const auto& event : events_of(world, "agent.status", id)) statuses.push_back(event["data"].value("status", ""));
  CHECK(std::find(statuses.begin(), statuses.end(), "compacting") != statuses.end());
  CHECK(std::find(statuses.begin(), statuses.end(), "compacted") != statuses.end());
  // The next request carries the summary.
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "gamma prompt"}})["result"]["text"] == "after compaction");
  requests = world.mock->message_requests();
  CHECK(conversation_of(requests.back()).find("summarized by the mock") != std::string::npos);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

}  // namespace pi_e2e_tests
