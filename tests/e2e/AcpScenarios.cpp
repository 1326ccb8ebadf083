#include "e2e/AcpScenarios.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>
#include <sstream>

#include "support/AcpSchemaValidator.h"
#include "switchboard/process/ExecutableLookup.h"
#include "support/AcpSdk.h"
#include "support/RawHttpClient.h"
#include "support/RunProcess.h"
#include "support/RuntimeFile.h"

namespace switchboard::testing::e2e {
namespace acp_scenarios_detail {

// A whole editor session with a real CLI, on a shared machine: generous.
constexpr auto kEditorPatience = std::chrono::seconds(150);

std::string sdk_modules() { return acp_sdk_modules(); }

// False when the test must stop: the SDK or node is missing (a failure under CI, a visible skip elsewhere).
bool editor_ready() {
  if (!sdk_modules().empty() && fs::exists(fs::path(sdk_modules()) / "@agentclientprotocol" / "sdk")) return true;
  if (std::getenv("CI") != nullptr) FAIL("the ACP SDK is not installed (scripts/install-acp-sdk); CI requires it");
  WARN("SKIPPED: the ACP SDK is not installed; run scripts/install-acp-sdk");
  return false;
}

// One run of the editor script: writes the plan, runs node, returns its report.
class Editor {
 public:
  explicit Editor(const AgentWorld& world) : m_world(world) {
    // ESM resolves packages from the script's own directory up: the script goes next to a node_modules link.
    m_dir = world.tmp.path() / "editor";
    fs::create_directories(m_dir);
    std::error_code ignored;
    fs::create_directory_symlink(sdk_modules(), m_dir / "node_modules", ignored);
    fs::copy_file(fs::path(SWITCHBOARD_SOURCE_DIR) / "tests" / "acp" / "acp_editor.mjs", m_dir / "acp_editor.mjs",
                  fs::copy_options::overwrite_existing);
  }

  // Where the script notes that the editor was asked for a permission (plan "markFile").
  fs::path asked_mark() const { return m_dir / "asked"; }

  Json plan(Json steps, const std::string& permission = "allow") const {
    Json env = Json::object();
    for (const auto& entry : m_world.profile.environment(m_world.tmp.path() / "home", m_world.mock->base_url(), m_world.binary)) {
      const auto eq = entry.find('=');
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    // The user's own configuration must not change what the test sees.
    env["XDG_CONFIG_HOME"] = (m_world.tmp.path() / "config").string();
    return Json{{"command", Json::array({m_world.profile.daemon_binary, "--log-level", "info", "--data-dir",
                                         (m_world.tmp.path() / "data").string(), "acp", "--agent", m_world.profile.agent,
                                         "--cwd", m_world.work.string()})},
                {"env", env},
                {"steps", std::move(steps)},
                {"permission", permission},
                {"markFile", asked_mark().string()}};
  }

  // Starts the script with `plan`; wait() collects its report.
  void start(const Json& plan) {
    const auto file = m_dir / ("plan-" + std::to_string(++m_runs) + ".json");
    std::ofstream(file) << plan.dump();
    // Node as the test's PATH finds it (scripts/setup installs it).
    const char* path = std::getenv("PATH");
    const auto node = switchboard::process::find_executable("node", path != nullptr ? path : "", {});
    REQUIRE(node);
    m_process = std::make_unique<RunProcess>(m_dir, std::vector<std::string>{(m_dir / "acp_editor.mjs").string(), file.string()},
                                             std::vector<std::string>{}, -1, -1, node->string());
    REQUIRE(m_process->started());
  }

  Json wait() {
    const auto outcome = m_process->wait(kEditorPatience);
    m_stderr = outcome.err;
    INFO("editor stderr (with switchboard acp's): " << outcome.err.substr(outcome.err.size() > 6000 ? outcome.err.size() - 6000 : 0));
    REQUIRE(outcome.exit == 0);
    std::string last;
    std::istringstream lines(outcome.out);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) last = line;
    }
    auto report = Json::parse(last, nullptr, false);
    REQUIRE(report.is_object());
    return report;
  }

  Json run(const Json& plan) {
    start(plan);
    return wait();
  }

  const std::string& stderr_text() const { return m_stderr; }

 private:
  const AgentWorld& m_world;
  fs::path m_dir;
  int m_runs = 0;
  std::unique_ptr<RunProcess> m_process;
  std::string m_stderr;
};

// Every message `switchboard acp` sent is valid ACP.
void check_sent_messages(const Json& report) {
  static const AcpSchemaValidator validator(acp_schema_file());
  REQUIRE(validator.loaded());
  REQUIRE_FALSE(report["sent"].empty());
  for (const auto& entry : report["sent"]) {
    INFO(entry.dump().substr(0, 2000));
    REQUIRE_FALSE(entry.value("invalidJson", false));
    const auto answers = entry.contains("answers") && entry["answers"].is_string() ? entry["answers"].get<std::string>() : std::string();
    CHECK(validator.validate(entry["message"], answers).empty());
  }
}

// The step of the report that did `what` (the n-th one).
const Json& step(const Json& report, const std::string& what, int n = 0) {
  for (const auto& done : report["steps"]) {
    if (done["do"] == what && n-- == 0) return done;
  }
  FAIL("no step " << what << " in the report: " << report["steps"].dump().substr(0, 3000));
  static const Json kNone;
  return kNone;
}

std::string chunk_text(const Json& updates, const std::string& kind = "agent_message_chunk") {
  std::string text;
  for (const auto& params : updates) {
    const auto& update = params["update"];
    if (update.value("sessionUpdate", "") == kind && update["content"].value("type", "") == "text") text += update["content"]["text"].get<std::string>();
  }
  return text;
}

int count_updates(const Json& updates, const std::string& kind) {
  int n = 0;
  for (const auto& params : updates) n += params["update"].value("sessionUpdate", "") == kind ? 1 : 0;
  return n;
}

Json prompt_step(const std::string& text) { return Json{{"do", "prompt"}, {"text", text}}; }

Json new_session_steps(const AgentWorld& world, Json more) {
  Json steps = Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                            Json{{"do", "set_mode"}, {"mode", world.profile.asking_mode}}});
  for (auto& item : more) steps.push_back(std::move(item));
  steps.push_back(Json{{"do", "close"}});
  return steps;
}

// A tool scenario: the tool_call update and the permission request name the same tool call, and its update
// ends with `status`.
void check_tool_call(const Json& prompt_updates, const Json& permission, const std::string& status) {
  std::string tool_call_id;
  std::string final_status;
  for (const auto& params : prompt_updates) {
    const auto& update = params["update"];
    if (update.value("sessionUpdate", "") == "tool_call") {
      tool_call_id = update["toolCallId"];
      CHECK(update["kind"] == "execute");
    }
    if (update.value("sessionUpdate", "") == "tool_call_update" && update.value("toolCallId", "") == tool_call_id && update.contains("status")) {
      final_status = update["status"];
    }
  }
  REQUIRE_FALSE(tool_call_id.empty());
  CHECK(permission["params"]["toolCall"]["toolCallId"] == tool_call_id);
  CHECK(final_status == status);
}

// The absolute path of the Python interpreter `python3` runs, or "".
std::string python_executable() {
  std::FILE* pipe = ::popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r");
  if (pipe == nullptr) return "";
  char buffer[4096];
  std::string out;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace acp_scenarios_detail

using namespace acp_scenarios_detail;

void scenario_acp_streamed_prompt(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("Hello from the agent over ACP.", 4, 30)}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                          prompt_step("say hello"), Json{{"do", "close"}}})));
  INFO(report.dump().substr(0, 4000));
  CHECK(report["error"].is_null());
  const auto& init = step(report, "initialize");
  REQUIRE(init["ok"] == true);
  CHECK(init["value"]["protocolVersion"] == 1);
  CHECK(init["value"]["agentCapabilities"]["loadSession"] == true);
  CHECK(init["value"]["agentCapabilities"]["sessionCapabilities"].contains("list"));
  const auto& created = step(report, "new");
  REQUIRE(created["ok"] == true);
  CHECK_FALSE(created["value"]["sessionId"].get<std::string>().empty());
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  // The turn's usage, in the answer's _meta (ACP v1 has no field for it).
  CHECK(prompt["value"]["result"]["_meta"]["switchboard"]["usage"].value("outputTokens", 0) > 0);
  // The agent's modes, offered to the editor's mode picker.
  if (!profile.modes.empty()) {
    std::vector<std::string> offered;
    for (const auto& mode : created["value"]["modes"]["availableModes"]) offered.push_back(mode.value("id", ""));
    CHECK(offered == profile.modes);
  }
  // Streamed: in more than one chunk, and together the whole answer.
  CHECK(count_updates(prompt["value"]["updates"], "agent_message_chunk") >= 2);
  CHECK(chunk_text(prompt["value"]["updates"]) == "Hello from the agent over ACP.");
  for (const auto& params : report["updates"]) CHECK(params["sessionId"] == created["value"]["sessionId"]);
  // The editor closed our stdin: the daemon this process hosted stopped, and so did everything it started.
  CHECK(report["exit"] == 0);
  CHECK(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
  check_sent_messages(report);
}

void scenario_acp_model_chosen_by_the_editor(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("First answer.", 1, 0), profile.text("Second answer.", 1, 0)}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                          prompt_step("first prompt"),
                                                          Json{{"do", "set_config_option"}, {"configId", "model"}, {"pick", "other"}},
                                                          prompt_step("second-prompt-marker"), Json{{"do", "close"}}})));
  INFO(report.dump().substr(0, 6000));
  CHECK(report["error"].is_null());
  // The first session of this daemon: nothing is known of the agent's models before its agent starts, then an
  // update brings them.
  const auto& created = step(report, "new");
  REQUIRE(created["ok"] == true);
  Json offered;
  for (const auto& params : report["updates"]) {
    const auto& update = params["update"];
    if (update.value("sessionUpdate", "") != "config_option_update") continue;
    for (const auto& option : update["configOptions"]) {
      if (option.value("id", "") == "model") offered = option;
    }
  }
  REQUIRE(offered.is_object());
  CHECK(offered["category"] == "model");
  CHECK(offered["options"].size() >= 2);
  const auto& chosen = step(report, "set_config_option");
  REQUIRE(chosen["ok"] == true);
  const std::string picked = chosen["value"]["value"];
  std::string current;
  for (const auto& option : chosen["value"]["result"]["configOptions"]) {
    if (option.value("id", "") == "model") current = option.value("currentValue", "");
  }
  CHECK(current == picked);
  REQUIRE(step(report, "prompt", 1)["ok"] == true);
  // The second turn's model request names the model picked (Claude Code sends what an alias resolves to, which
  // contains the alias: "haiku" → "claude-haiku-…").
  std::string sent;
  for (const auto& request : world.mock->message_requests()) {
    if (request["body"].dump().find("second-prompt-marker") != std::string::npos) sent = request["body"].value("model", "");
  }
  REQUIRE_FALSE(sent.empty());
  const std::string alias = picked.substr(0, picked.find('['));
  CHECK(sent.find(alias) != std::string::npos);
  check_sent_messages(report);
}

void scenario_acp_permission_allowed(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("echo acp-marker > from_acp.txt"), profile.after_tool_output("The file is written.")}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto report = editor.run(editor.plan(new_session_steps(world, Json::array({prompt_step("write the file")})), "allow"));
  INFO(report.dump().substr(0, 6000));
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  REQUIRE(report["permissions"].size() == 1);
  const auto& permission = report["permissions"][0];
  CHECK(permission["outcome"] == "allow_once");
  std::set<std::string> kinds;
  for (const auto& option : permission["params"]["options"]) kinds.insert(option["kind"].get<std::string>());
  CHECK(kinds == std::set<std::string>{"allow_once", "allow_always", "reject_once"});
  CHECK(permission["params"]["toolCall"]["rawInput"]["command"] == "echo acp-marker > from_acp.txt");
  check_tool_call(prompt["value"]["updates"], permission, "completed");
  CHECK(read_text_file(world.work / "from_acp.txt") == "acp-marker\n");
  CHECK(chunk_text(prompt["value"]["updates"]).find("The file is written.") != std::string::npos);
  check_sent_messages(report);
}

void scenario_acp_permission_rejected(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch never_made.txt"), profile.after_refused_tool("Understood, not running it.")}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto report = editor.run(editor.plan(new_session_steps(world, Json::array({prompt_step("make the file")})), "reject"));
  INFO(report.dump().substr(0, 6000));
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  REQUIRE(report["permissions"].size() == 1);
  CHECK(report["permissions"][0]["outcome"] == "reject_once");
  check_tool_call(prompt["value"]["updates"], report["permissions"][0], "failed");
  CHECK_FALSE(fs::exists(world.work / "never_made.txt"));
  if (!profile.deny_ends_turn) CHECK(chunk_text(prompt["value"]["updates"]).find("Understood, not running it.") != std::string::npos);
  check_sent_messages(report);
}

void scenario_acp_cancel_mid_turn(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text(std::string(400, 'x') + " the end", 40, 250)}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                          Json{{"do", "prompt"}, {"text", "write a lot"}, {"cancelOnChunk", true}},
                                                          Json{{"do", "close"}}})));
  INFO(report.dump().substr(0, 4000));
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["cancelSent"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "cancelled");
  // Cut short: the end of the answer never came.
  CHECK(chunk_text(prompt["value"]["updates"]).find("the end") == std::string::npos);
  CHECK(report["exit"] == 0);
  check_sent_messages(report);
}

void scenario_acp_load_after_restart(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("I will remember banana.", 2, 0),
                                         profile.when_any_prompt_contains("remember the word banana", "The word was banana.")}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto first = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                         prompt_step("remember the word banana"), Json{{"do", "close"}}})));
  INFO("first: " << first.dump().substr(0, 3000));
  REQUIRE(step(first, "prompt")["ok"] == true);
  REQUIRE(first["exit"] == 0);
  const std::string session_id = first["sessionId"];
  check_sent_messages(first);
  // The first process's daemon is gone with it; the second hosts a new one on the same data directory.
  REQUIRE(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));

  const auto second = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "list"}, {"cwd", world.work.string()}},
                                                          Json{{"do", "load"}, {"sessionId", session_id}, {"cwd", world.work.string()}},
                                                          prompt_step("what was the word?"), Json{{"do", "close"}}})));
  INFO("second: " << second.dump().substr(0, 6000));
  const auto& listed = step(second, "list");
  REQUIRE(listed["ok"] == true);
  REQUIRE(listed["value"]["sessions"].size() == 1);
  CHECK(listed["value"]["sessions"][0]["sessionId"] == session_id);
  CHECK(listed["value"]["sessions"][0]["cwd"] == world.work.string());
  const auto& loaded = step(second, "load");
  REQUIRE(loaded["ok"] == true);
  CHECK(chunk_text(loaded["value"]["replayed"], "user_message_chunk") == "remember the word banana");
  CHECK(chunk_text(loaded["value"]["replayed"]) == "I will remember banana.");
  const auto& prompt = step(second, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  CHECK(chunk_text(prompt["value"]["updates"]) == "The word was banana.");
  CHECK(second["exit"] == 0);
  check_sent_messages(second);
}

void scenario_acp_prompt_with_resources(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("I have looked at them.", 1, 0)}));
  if (!world.ready() || !editor_ready()) return;
  std::ofstream(world.work / "linked notes.txt") << "notes of the test\n";
  // A 1x1 PNG.
  const std::string png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
  const Json blocks = Json::array({Json{{"type", "text"}, {"text", "look at these"}},
                                   Json{{"type", "resource_link"}, {"uri", "file://" + (world.work / "linked%20notes.txt").string()}, {"name", "linked notes.txt"}},
                                   Json{{"type", "resource"}, {"resource", {{"uri", "file:///elsewhere/snippet.py"}, {"text", "print('embedded-marker')"}}}},
                                   Json{{"type", "image"}, {"mimeType", "image/png"}, {"data", png}}});
  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                          Json{{"do", "prompt"}, {"blocks", blocks}}, Json{{"do", "close"}}})));
  INFO(report.dump().substr(0, 4000));
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  const auto body = requests.back()["body"].dump();
  INFO(body.substr(0, 4000));
  CHECK(body.find("look at these") != std::string::npos);
  CHECK(body.find("linked notes.txt") != std::string::npos);
  CHECK(body.find("embedded-marker") != std::string::npos);
  CHECK(body.find(png.substr(0, 60)) != std::string::npos);
  check_sent_messages(report);
}

void scenario_acp_queued_prompts_close_and_resume(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("First answer.", 3, 300), profile.when_last_prompt_contains("second prompt", "Second answer."),
                                         profile.when_last_prompt_contains("after resume", "Third answer.")}));
  if (!world.ready() || !editor_ready()) return;
  Editor editor(world);
  const auto first = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}},
                                                         Json{{"do", "prompts"}, {"texts", {"first prompt", "second prompt"}}},
                                                         Json{{"do", "close_session"}}, Json{{"do", "close"}}})));
  INFO("first: " << first.dump().substr(0, 4000));
  const auto& both = step(first, "prompts");
  REQUIRE(both["ok"] == true);
  CHECK(both["value"]["results"][0]["stopReason"] == "end_turn");
  CHECK(both["value"]["results"][1]["stopReason"] == "end_turn");
  // One after the other: the second answer only once the first was complete.
  CHECK(chunk_text(first["updates"]) == "First answer.Second answer.");
  CHECK(step(first, "close_session")["ok"] == true);
  CHECK(first["exit"] == 0);
  check_sent_messages(first);

  const auto second = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}},
                                                          Json{{"do", "resume"}, {"sessionId", first["sessionId"]}, {"cwd", world.work.string()}},
                                                          prompt_step("after resume"), Json{{"do", "close"}}})));
  INFO("second: " << second.dump().substr(0, 4000));
  const auto& resumed = step(second, "resume");
  REQUIRE(resumed["ok"] == true);
  CHECK(resumed["value"]["replayed"].empty());  // resume is load without the history
  const auto& prompt = step(second, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  CHECK(chunk_text(prompt["value"]["updates"]) == "Third answer.");
  check_sent_messages(second);
}

void scenario_acp_attached_permission_answered_elsewhere(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch answered_elsewhere.txt && echo made"), profile.after_tool_output("Made it.")}));
  if (!world.ready() || !editor_ready()) return;
  const auto serve = world.spawn_serve();
  const auto runtime = wait_for_runtime_file(world.tmp.path() / "data");
  REQUIRE(runtime.contains("port"));
  const auto port = runtime.at("port").get<std::uint16_t>();
  const std::string authorization = "Authorization: Bearer " + runtime.at("token").get<std::string>();
  RawHttpClient sse(port, 60000);
  REQUIRE(sse.send_request("GET", "/events", {authorization}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // the retry hint

  Editor editor(world);
  editor.start(editor.plan(new_session_steps(world, Json::array({prompt_step("make the file")})), "wait"));
  // The browser sees the editor's session live, and answers its permission.
  std::string request_id;
  std::string session_id;
  int deltas = 0;
  while (request_id.empty()) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto at = frame->find("data: ");
    if (at == std::string::npos) continue;
    const auto event = Json::parse(frame->substr(at + 6), nullptr, false);
    if (event.value("type", "") == "session.created") session_id = event["sessionId"];
    if (event.value("type", "") == "message.delta") ++deltas;
    if (event.value("type", "") == "permission.requested") request_id = event["data"]["request"]["requestId"];
  }
  CHECK_FALSE(session_id.empty());
  CHECK(deltas >= 1);  // "Running it." streamed to the browser too
  // The editor has the request open (it shows it) before the browser answers.
  REQUIRE(eventually([&] { return fs::exists(editor.asked_mark()); }, std::chrono::seconds(30), kProcessScanInterval));
  RawHttpClient browser(port);
  const auto answered = browser.request("POST", "/rpc", {authorization, "Content-Type: application/json"},
                                        Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "permission.respond"},
                                             {"params", {{"requestId", request_id}, {"decision", "allow_once"}}}}.dump());
  REQUIRE(answered.complete);
  CHECK(Json::parse(answered.body).contains("result"));

  const auto report = editor.wait();
  INFO(report.dump().substr(0, 6000));
  CHECK(step(report, "initialize")["value"]["_meta"]["switchboard"]["attached"] == true);
  CHECK(report["sessionId"] == session_id);
  REQUIRE(report["permissions"].size() == 1);
  CHECK(report["permissions"][0]["outcome"] == "withdrawn");
  bool withdrawn = false;
  for (const auto& entry : report["sent"]) withdrawn = withdrawn || entry["message"].value("method", "") == "$/cancel_request";
  CHECK(withdrawn);
  const auto& prompt = step(report, "prompt");
  REQUIRE(prompt["ok"] == true);
  CHECK(prompt["value"]["result"]["stopReason"] == "end_turn");
  CHECK(fs::exists(world.work / "answered_elsewhere.txt"));
  CHECK(chunk_text(prompt["value"]["updates"]).find("Made it.") != std::string::npos);
  check_sent_messages(report);
}

void scenario_acp_load_asks_an_open_permission(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch from_the_editor.txt && echo made"), profile.after_tool_output("Made it here.")}));
  if (!world.ready() || !editor_ready()) return;
  const auto serve = world.spawn_serve();
  const auto runtime = wait_for_runtime_file(world.tmp.path() / "data");
  REQUIRE(runtime.contains("port"));
  const auto port = runtime.at("port").get<std::uint16_t>();
  const std::string authorization = "Authorization: Bearer " + runtime.at("token").get<std::string>();
  int next_id = 0;
  const auto rpc = [&](const std::string& method, const Json& params) {
    RawHttpClient browser(port);
    const auto answer = browser.request("POST", "/rpc", {authorization, "Content-Type: application/json"},
                                        Json{{"jsonrpc", "2.0"}, {"id", ++next_id}, {"method", method}, {"params", params}}.dump());
    REQUIRE(answer.complete);
    return Json::parse(answer.body, nullptr, false);
  };
  // A browser is watching (so the daemon leaves the ask open for a client instead of its headless policy).
  RawHttpClient sse(port, 60000);
  REQUIRE(sse.send_request("GET", "/events", {authorization}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  const auto created = rpc("session.create", {{"agent", profile.agent}, {"cwd", world.work.string()}, {"mode", profile.asking_mode}});
  INFO(created.dump());
  const std::string session_id = created["result"]["session"]["sessionId"];
  REQUIRE(rpc("session.send", {{"sessionId", session_id}, {"text", "make the file"}, {"wait", false}}).contains("result"));
  // The browser's turn waits on its permission.
  REQUIRE(eventually([&] { return !rpc("session.attach", {{"sessionId", session_id}})["result"]["permissions"].empty(); }, std::chrono::seconds(30),
                     std::chrono::milliseconds(200)));

  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array({Json{{"do", "initialize"}},
                                                          Json{{"do", "load"}, {"sessionId", session_id}, {"cwd", world.work.string()}},
                                                          Json{{"do", "until_chunk"}, {"text", "Made it here."}}, Json{{"do", "close"}}}),
                                             "allow"));
  INFO(report.dump().substr(0, 6000));
  REQUIRE(step(report, "load")["ok"] == true);
  CHECK(step(report, "until_chunk")["ok"] == true);
  REQUIRE(report["permissions"].size() == 1);
  CHECK(report["permissions"][0]["outcome"] == "allow_once");
  CHECK(report["permissions"][0]["params"]["sessionId"] == session_id);
  CHECK(fs::exists(world.work / "from_the_editor.txt"));
  check_sent_messages(report);
}

void scenario_acp_controls(const AgentProfile& profile, const Json& plan_reply) {
  // The reply after the plan's tool takes any request: the agent may tell the model about the MCP server that
  // connected meanwhile (Grok adds a message saying so after the tool's output).
  AgentWorld world(profile, Json::array({plan_reply, profile.text("Planned.", 1, 0), profile.text("Second answer.", 1, 0)}));
  if (!world.ready() || !editor_ready()) return;
  // ACP wants the server's executable as an absolute path: the interpreter itself, not a wrapper on PATH (a
  // pyenv shim, say, which needs the HOME the test replaces).
  const auto python = python_executable();
  REQUIRE_FALSE(python.empty());
  const auto pids = world.tmp.path() / "mcp.pids";
  const Json server{{"name", "echoer"},
                    {"command", python},
                    {"args", {source_path("tests/support/mcp_stdio_server.py"), "--pid-file", pids.string()}},
                    {"env", Json::array()}};
  Editor editor(world);
  const auto report = editor.run(editor.plan(Json::array(
      {Json{{"do", "initialize"}}, Json{{"do", "new"}, {"cwd", world.work.string()}, {"mcpServers", {server}}},
       Json{{"do", "set_mode"}, {"mode", "full-access"}}, prompt_step("plan the work"),
       Json{{"do", "set_config_option"}, {"configId", "effort"}, {"pick", "other"}}, prompt_step("again"), Json{{"do", "close"}}})));
  INFO(report.dump().substr(0, 8000));
  CHECK(report["error"].is_null());
  CHECK(step(report, "initialize")["value"]["agentCapabilities"]["mcpCapabilities"]["http"] == true);
  const auto& planned = step(report, "prompt");
  INFO(planned.dump().substr(0, 2000));
  REQUIRE(planned["ok"] == true);
  CHECK(planned["value"]["result"]["stopReason"] == "end_turn");
  Json plan;
  Json usage;
  Json commands;
  for (const auto& params : report["updates"]) {
    const auto& update = params["update"];
    const auto kind = update.value("sessionUpdate", "");
    if (kind == "plan" && plan.is_null()) plan = update;
    if (kind == "usage_update") usage = update;
    if (kind == "available_commands_update") commands = update;
  }
  REQUIRE_FALSE(plan.is_null());
  CHECK_FALSE(plan["entries"].empty());
  REQUIRE_FALSE(usage.is_null());
  CHECK(usage["used"].get<std::int64_t>() > 0);
  CHECK(usage["size"].get<std::int64_t>() > usage["used"].get<std::int64_t>());
  REQUIRE_FALSE(commands.is_null());
  CHECK_FALSE(commands["availableCommands"].empty());

  // The effort the editor picked is the one the next model request carries.
  const auto& chosen = step(report, "set_config_option");
  REQUIRE(chosen["ok"] == true);
  const std::string effort = chosen["value"]["value"];
  bool offered = false;
  for (const auto& option : chosen["value"]["result"]["configOptions"]) {
    if (option["id"] != "effort") continue;
    offered = true;
    CHECK(option["category"] == "thought_level");
    CHECK(option["currentValue"] == effort);
  }
  CHECK(offered);
  REQUIRE(step(report, "prompt", 1)["ok"] == true);
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"].value("reasoning_effort", "") == effort);

  // The agent started the editor's MCP server.
  CHECK(eventually([&] { return fs::exists(pids) && fs::file_size(pids) > 0; }, std::chrono::seconds(10), kProcessScanInterval));
  CHECK(report["exit"] == 0);
  check_sent_messages(report);
}

}  // namespace switchboard::testing::e2e
