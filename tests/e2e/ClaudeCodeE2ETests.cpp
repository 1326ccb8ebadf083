#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/MockProvider.h"
#include "support/RawHttpClient.h"
#include "support/SchemaValidator.h"

// End to end with the real Claude Code CLI: a stdio client (and an SSE/HTTP one where it matters) drives the
// daemon, which drives `claude -p`, which talks to the project's mock Anthropic provider. The CLI is installed by
// scripts/install-agents; without it these tests are skipped visibly, except under CI (CI set), where a missing
// CLI fails them. Every event a test sees is validated against the schema.

namespace fs = std::filesystem;
using Json = nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::MockProvider;
using switchboard::testing::RawHttpClient;

namespace {

std::string claude_binary() {
  if (const char* bin = std::getenv("SWITCHBOARD_CLAUDE_BIN"); bin && *bin) return bin;
  const std::string command = std::string(SWITCHBOARD_SOURCE_DIR) + "/scripts/agent-path claude 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buffer[4096];
  std::string path;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) path += buffer;
  ::pclose(pipe);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

// True when the test must stop here: the CLI is missing (a failure under CI, a visible skip elsewhere).
bool claude_missing(const std::string& binary) {
  if (!binary.empty() && fs::exists(binary)) return false;
  if (std::getenv("CI") != nullptr) {
    FAIL("the Claude Code CLI is not installed (scripts/install-agents claude); CI requires it");
  }
  WARN("SKIPPED: the Claude Code CLI is not installed; run scripts/install-agents claude");
  return true;
}

// Side requests (the session title) are answered by a rule, so they never eat the scripted turns.
Json script_with(Json turns) {
  return Json{{"rules", Json::array({Json{{"match", {{"system_contains", "sentence-case title"}}},
                                         {"reply", {{"text", R"({"title": "Test"})"}}}}})},
              {"turns", std::move(turns)}};
}

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/switchboard-e2e-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string cmdline_of(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

// Pids of live processes whose command line contains `needle`.
std::vector<pid_t> processes_matching(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (auto* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (std::stoi(name) == ::getpid()) continue;
    const auto cmdline = cmdline_of(name);
    if (cmdline.find(needle) != std::string::npos) found.push_back(std::stoi(name));
  }
  ::closedir(proc);
  return found;
}

// Pids of live processes whose working directory is `dir` (agent CLIs and their tools run there).
std::vector<pid_t> processes_working_in(const fs::path& dir) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (auto* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code error;
    if (fs::read_symlink("/proc/" + name + "/cwd", error) == dir) found.push_back(std::stoi(name));
  }
  ::closedir(proc);
  return found;
}

template <class Predicate>
bool eventually(Predicate predicate, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return predicate();
}

// One test's world: a temporary HOME and working directory, the mock provider with the test's script, and a
// daemon on a data directory that survives restart() (a second daemon process on the same data).
struct ClaudeWorld {
  TempDir tmp;
  std::string binary = claude_binary();
  std::unique_ptr<MockProvider> mock;
  std::unique_ptr<DaemonClient> client;
  fs::path work = tmp.path / "work";
  bool http = false;

  explicit ClaudeWorld(const Json& turns, bool with_http = false) : http(with_http) {
    fs::create_directories(tmp.path / "home");
    fs::create_directories(work);
    mock = std::make_unique<MockProvider>(tmp.path, script_with(turns));
    REQUIRE(mock->port() > 0);
  }

  void start_daemon() {
    std::vector<std::string> args{"--log-level", "info", "stdio", "--data-dir", (tmp.path / "data").string()};
    if (http) {
      args.insert(args.end(), {"--http", "--port", "0"});
    }
    const auto home = (tmp.path / "home").string();
    client = std::make_unique<DaemonClient>(
        args, std::vector<std::string>{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + home + "/.claude",
                                       "ANTHROPIC_BASE_URL=" + mock->base_url(), "ANTHROPIC_API_KEY=sk-mock",
                                       "ANTHROPIC_AUTH_TOKEN=", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
                                       "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                                       "CLAUDE_CODE_MAX_RETRIES=2", "SWITCHBOARD_CLAUDE_BIN=" + binary});
    const auto init = client->call("initialize", {{"protocolVersion", 1},
                                                  {"clientInfo", {{"name", "e2e"}}},
                                                  {"capabilities", {{"answersPermissions", true}}}});
    REQUIRE(init.contains("result"));
  }

  void restart() {
    validate_events();
    client->close_stdin();
    REQUIRE(client->daemon().wait(std::chrono::seconds(30)) == 0);
    client.reset();
    // No orphans: nothing the daemon started (the CLI, its tools) outlives it.
    CHECK(eventually([&] { return processes_working_in(work).empty(); }, std::chrono::seconds(10)));
    start_daemon();
  }

  std::string create_session() {
    const auto created = client->call("session.create", {{"agent", "claude"}, {"cwd", work.string()}});
    INFO(created.dump());
    REQUIRE(created.contains("result"));
    return created["result"]["session"]["sessionId"];
  }

  // What the client saw, for failure messages.
  std::string transcript() const {
    std::string out;
    for (const auto& event : client->events()) out += event.dump().substr(0, 400) + "\n";
    return out;
  }

  Json runtime() const {
    std::ifstream in(tmp.path / "data" / "daemon.json");
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str(), nullptr, false);
  }

  void validate_events() const {
    if (!client) return;
    static const switchboard::testing::SchemaValidator validator;
    for (const auto& event : client->events()) {
      INFO(event.dump());
      CHECK(validator.validate_event(event).empty());
    }
  }

  ~ClaudeWorld() {
    if (client) validate_events();
  }
};

Json bash_turn(const std::string& command) {
  return Json{{"text", "Running it."}, {"tool_use", {{"name", "Bash"}, {"input", {{"command", command}, {"description", "test command"}}}}}};
}

}  // namespace

TEST_CASE("claude e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][claude]") {
  ClaudeWorld world(Json::array({Json{{"text", "Hello from the mock"}, {"chunks", 4}}}), /*with_http=*/true);
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto runtime = world.runtime();
  REQUIRE(runtime.is_object());
  RawHttpClient sse(runtime.at("port").get<std::uint16_t>());
  REQUIRE(sse.send_request("GET", "/events", {"Authorization: Bearer " + runtime.at("token").get<std::string>()}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // retry hint

  const auto id = world.create_session();
  const auto done = world.client->call("session.send", {{"sessionId", id}, {"text", "say hello"}});
  INFO(done.dump());
  REQUIRE(done.contains("result"));
  CHECK(done["result"]["stopReason"] == "end_turn");
  CHECK(done["result"]["text"] == "Hello from the mock");

  std::size_t at = 0;
  CHECK_FALSE(world.client->wait_event("message.delta", at).is_null());
  const auto completed = world.client->wait_event("message.completed", at);
  REQUIRE_FALSE(completed.is_null());
  CHECK(completed["data"]["text"] == "Hello from the mock");
  CHECK_FALSE(world.client->wait_event("turn.stopped", at).is_null());

  // The SSE client saw the same events, byte for byte, through turn.stopped.
  const auto lines = world.client->event_lines();
  std::size_t matched = 0;
  for (;;) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto data = frame->substr(frame->find("data: ") + 6);
    REQUIRE(matched < lines.size());
    CHECK(data == lines[matched]);
    ++matched;
    if (Json::parse(data)["type"] == "turn.stopped") break;
  }
  CHECK(matched >= 5);
}

TEST_CASE("claude e2e: a permission allowed by the client runs the tool and its output reaches the client", "[e2e][claude]") {
  ClaudeWorld world(Json::array({bash_turn("touch created_by_tool.txt && echo made"),
                                 Json{{"match", {{"last_user_has_tool_result", true}}}, {"text", "Done."}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto send = world.client->send("session.send", {{"sessionId", id}, {"text", "make the file"}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  REQUIRE_FALSE(asked.is_null());
  const auto& request = asked["data"]["request"];
  CHECK(request["tool"] == "Bash");
  CHECK(request["input"]["command"] == "touch created_by_tool.txt && echo made");
  CHECK_FALSE(request.value("description", "").empty());
  const auto answer = world.client->call("permission.respond", {{"requestId", request["requestId"]}, {"decision", "allow_once"}});
  CHECK(answer.contains("result"));
  const auto tool = world.client->wait_event("tool.completed", at);
  REQUIRE_FALSE(tool.is_null());
  CHECK(tool["data"]["output"].get<std::string>().find("made") != std::string::npos);
  CHECK(tool["data"]["isError"] == false);
  const auto done = world.client->response(send);
  REQUIRE(done.contains("result"));
  CHECK(done["result"]["text"] == "Done.");
  CHECK(fs::exists(world.work / "created_by_tool.txt"));
}

TEST_CASE("claude e2e: a denied permission stops the tool and a second client's late answer gets -32002", "[e2e][claude]") {
  ClaudeWorld world(Json::array({bash_turn("touch must_not_exist.txt"),
                                 Json{{"match", {{"tool_result_is_error", true}}}, {"text", "Understood, not running it."}}}),
                    /*with_http=*/true);
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto send = world.client->send("session.send", {{"sessionId", id}, {"text", "try it"}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  REQUIRE_FALSE(asked.is_null());
  const std::string request_id = asked["data"]["request"]["requestId"];
  const auto answer = world.client->call("permission.respond", {{"requestId", request_id}, {"decision", "deny"}, {"message", "not now"}});
  CHECK(answer.contains("result"));

  // The browser answers too, late.
  const auto runtime = world.runtime();
  RawHttpClient browser(runtime.at("port").get<std::uint16_t>());
  const auto late = browser.request("POST", "/rpc",
                                    {"Authorization: Bearer " + runtime.at("token").get<std::string>(), "Content-Type: application/json"},
                                    Json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "permission.respond"},
                                         {"params", {{"requestId", request_id}, {"decision", "allow_once"}}}}
                                        .dump());
  CHECK(Json::parse(late.body)["error"]["code"] == -32002);

  const auto resolved = world.client->wait_event("permission.resolved", at);
  REQUIRE_FALSE(resolved.is_null());
  CHECK(resolved["data"]["outcome"] == "denied");
  const auto done = world.client->response(send);
  REQUIRE(done.contains("result"));
  CHECK(done["result"]["text"] == "Understood, not running it.");
  CHECK_FALSE(fs::exists(world.work / "must_not_exist.txt"));
}

TEST_CASE("claude e2e: interrupt mid-tool ends the turn cancelled and the tool's process is gone", "[e2e][claude]") {
  ClaudeWorld world(Json::array({bash_turn("touch started.txt && sleep 97531"),
                                 Json{{"match", {{"last_user_text_contains", "still there"}}}, {"text", "Yes."}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  world.client->send("session.send", {{"sessionId", id}, {"text", "sleep a long time"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  world.client->call("permission.respond", {{"requestId", asked["data"]["request"]["requestId"]}, {"decision", "allow_once"}});
  REQUIRE(eventually([] { return !processes_matching("sleep 97531").empty(); }));

  const auto cancelled = world.client->call("session.cancel", {{"sessionId", id}});
  CHECK(cancelled["result"]["cancelled"] == true);
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "cancelled");
  CHECK(eventually([] { return processes_matching("sleep 97531").empty(); }));

  // The CLI stays usable after an interrupt.
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "are you still there?"}});
  REQUIRE(again.contains("result"));
  CHECK(again["result"]["text"] == "Yes.");
}

TEST_CASE("claude e2e: a prompt sent while busy is queued and then runs", "[e2e][claude]") {
  ClaudeWorld world(Json::array({Json{{"text", "first answer, slowly"}, {"chunks", 8}, {"delay_ms", 150}},
                                 Json{{"match", {{"last_user_text_contains", "second prompt"}}}, {"text", "second answer"}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto first = world.client->send("session.send", {{"sessionId", id}, {"text", "first prompt"}});
  std::size_t at = 0;
  REQUIRE_FALSE(world.client->wait_event("turn.started", at).is_null());
  const auto queued = world.client->call("session.send", {{"sessionId", id}, {"text", "second prompt"}, {"wait", false}});
  CHECK(queued["result"]["queued"] == true);
  CHECK_FALSE(world.client->wait_event("turn.queued", at).is_null());
  CHECK(world.client->response(first)["result"]["text"] == "first answer, slowly");
  const auto second_started = world.client->wait_event("turn.started", at);
  REQUIRE_FALSE(second_started.is_null());
  CHECK(second_started["data"]["text"] == "second prompt");
  const auto second_completed = world.client->wait_event("message.completed", at);
  REQUIRE_FALSE(second_completed.is_null());
  CHECK(second_completed["data"]["text"] == "second answer");
}

TEST_CASE("claude e2e: after a daemon restart the cold session resumes with its history", "[e2e][claude]") {
  ClaudeWorld world(Json::array({Json{{"text", "I will remember banana."}},
                                 Json{{"match", {{"any_user_text_contains", "remember the word banana"}}}, {"text", "The word was banana."}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "remember the word banana"}})["result"]["text"] ==
          "I will remember banana.");

  world.restart();
  const auto listed = world.client->call("session.list");
  REQUIRE(listed["result"]["sessions"].size() == 1);
  CHECK(listed["result"]["sessions"][0]["sessionId"] == id);
  CHECK(listed["result"]["sessions"][0]["live"] == false);
  const auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "what was the word?"}});
  INFO(resumed.dump());
  REQUIRE(resumed.contains("result"));
  CHECK(resumed["result"]["text"] == "The word was banana.");
  // The mock saw the earlier exchange in the resumed conversation.
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"]["messages"].dump().find("remember the word banana") != std::string::npos);
}

TEST_CASE("claude e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][claude]") {
  ClaudeWorld world(Json::array({Json{{"text", "a long slow answer that will not finish"}, {"chunks", 40}, {"delay_ms", 250}},
                                 Json{{"match", {{"last_user_text_contains", "come back"}}}, {"text", "Back again."}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  const auto id = world.create_session();
  world.client->send("session.send", {{"sessionId", id}, {"text", "talk slowly"}, {"wait", false}});
  std::size_t at = 0;
  REQUIRE_FALSE(world.client->wait_event("message.delta", at).is_null());
  const auto clis = processes_matching("--permission-prompt-tool stdio");
  std::vector<pid_t> ours;
  for (const auto pid : clis) {
    // Other tests may run a CLI at the same time: ours is the one working in this test's directory.
    std::error_code error;
    if (fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", error) == world.work) ours.push_back(pid);
  }
  REQUIRE(ours.size() == 1);
  ::kill(ours[0], SIGKILL);

  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "error");
  const auto state = world.client->wait_event(
      [&](const Json& e) { return e.value("type", "") == "session.state" && e["data"]["state"] == "stopped"; }, at);
  CHECK_FALSE(state.is_null());
  CHECK(world.client->call("ping").contains("result"));
  // The next send starts a fresh CLI, which resumes the conversation.
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "come back"}});
  INFO(again.dump());
  CHECK(again["result"]["text"] == "Back again.");
}

TEST_CASE("claude e2e: a conversation from the CLI's own history is listed and imported and resumed", "[e2e][claude]") {
  ClaudeWorld world(Json::array({Json{{"text", "Noted: the colour is teal."}},
                                 Json{{"match", {{"any_user_text_contains", "the colour is teal"}}}, {"text", "It was teal."}}}));
  if (claude_missing(world.binary)) return;
  world.start_daemon();
  // A conversation the CLI recorded in its history (made here through a first session of ours).
  const auto first = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", first}, {"text", "remember: the colour is teal"}})["result"]["text"] ==
          "Noted: the colour is teal.");
  const auto listed = world.client->call("history.list", {{"agent", "claude"}, {"cwd", world.work.string()}});
  INFO(listed.dump());
  REQUIRE(listed.contains("result"));
  REQUIRE(listed["result"]["sessions"].size() == 1);
  const std::string provider_id = listed["result"]["sessions"][0]["providerSessionId"];
  // The CLI appends the assistant's line to its history file a moment after it reports the turn's result.
  Json read;
  CHECK(eventually([&] {
    read = world.client->call("history.read", {{"agent", "claude"}, {"cwd", world.work.string()}, {"providerSessionId", provider_id}});
    return read.contains("result") && read["result"]["events"].dump().find("Noted: the colour is teal.") != std::string::npos;
  }, std::chrono::seconds(15)));
  INFO(read.dump());
  CHECK(read["result"]["skippedLines"] == 0);

  const auto imported = world.client->call("session.import", {{"agent", "claude"}, {"cwd", world.work.string()}, {"providerSessionId", provider_id}});
  INFO(imported.dump());
  REQUIRE(imported.contains("result"));
  const std::string id = imported["result"]["session"]["sessionId"];
  CHECK(id != first);
  const auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "which colour?"}});
  INFO(resumed.dump());
  CHECK(resumed["result"]["text"] == "It was teal.");
}

TEST_CASE("claude: a missing CLI is reported by agents.list and refused by session.create", "[e2e][claude]") {
  TempDir tmp;
  DaemonClient client({"--log-level", "off", "stdio", "--data-dir", (tmp.path / "data").string()},
                      {"SWITCHBOARD_CLAUDE_BIN=/nonexistent/claude"});
  REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "e2e"}}}}).contains("result"));
  const auto agents = client.call("agents.list");
  REQUIRE(agents.contains("result"));
  Json claude;
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent["agent"] == "claude") claude = agent;
  }
  REQUIRE(claude.is_object());
  CHECK(claude["installed"] == false);
  CHECK(claude["problem"].get<std::string>().find("not found") != std::string::npos);
  const auto created = client.call("session.create", {{"agent", "claude"}, {"cwd", tmp.path.string()}});
  CHECK(created["error"]["code"] == -32013);
  CHECK(created["error"]["message"].get<std::string>().find("claude") != std::string::npos);
}
