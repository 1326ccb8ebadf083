#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "BuiltinAgents.h"
#include "replay/ClaudeRecording.h"
#include "support/DaemonClient.h"
#include "support/Eventually.h"
#include "support/TempDir.h"
#include "support/SourceTree.h"

// The replay agent (adapters/replay/): a recorded Claude Code exchange read into turns, and played by the real
// daemon through the Claude Code adapter, with `switchboard __replay-claude` standing in for the CLI.

namespace replay_agent_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::adapters::replay::ClaudeRecording;
using switchboard::adapters::replay::read_claude_recording;
using switchboard::testing::DaemonClient;
using switchboard::testing::eventually;
using switchboard::testing::TempDir;

std::string recording_path() {
  return switchboard::testing::source_path("tests/fixtures/claude-code/recorded-exchange-stdio-permission.ndjson");
}

std::variant<ClaudeRecording, std::string> read_text(const std::string& text) {
  std::istringstream in(text);
  return read_claude_recording(in);
}

TEST_CASE("replay recording: a recorded exchange gives its initialize answer, version, directory and turns through each result", "[replay]") {
  std::ifstream in(recording_path());
  auto read = read_claude_recording(in);
  REQUIRE(std::holds_alternative<ClaudeRecording>(read));
  const auto& recording = std::get<ClaudeRecording>(read);
  CHECK(recording.version == "2.1.197");
  CHECK(recording.recorded_cwd == "<scratch>/capture/scratch/work");
  CHECK(recording.initialize_response.contains("commands"));
  REQUIRE(recording.turns.size() == 2);
  for (const auto& turn : recording.turns) {
    REQUIRE_FALSE(turn.lines.empty());
    CHECK(turn.lines.back().message["type"] == "result");
    CHECK(turn.lines.front().at <= turn.lines.back().at);
  }
  int permission_requests = 0;
  for (const auto& line : recording.turns[0].lines) permission_requests += line.message.value("type", "") == "control_request";
  CHECK(permission_requests == 1);
  CHECK(recording.turns[1].lines.back().message["result"] == "second turn ok");
}

TEST_CASE("replay recording: lines that are not records and a file with no complete turn are refused, saying why", "[replay]") {
  const auto not_records = read_text("{\"dir\": \"from_cli\", \"t\": 0.1, \"msg\": {\"type\": \"system\"}}\nnot json\n");
  REQUIRE(std::holds_alternative<std::string>(not_records));
  CHECK(std::get<std::string>(not_records).find("line 2") != std::string::npos);

  const auto no_time = read_text("{\"dir\": \"from_cli\", \"msg\": {\"type\": \"system\"}}\n");
  REQUIRE(std::holds_alternative<std::string>(no_time));
  CHECK(std::get<std::string>(no_time).find("line 1") != std::string::npos);

  // A prompt whose result never came is not a turn.
  const auto unfinished = read_text(
      "{\"dir\": \"to_cli\", \"t\": 0.1, \"msg\": {\"type\": \"user\"}}\n"
      "{\"dir\": \"from_cli\", \"t\": 0.2, \"msg\": {\"type\": \"assistant\"}}\n");
  REQUIRE(std::holds_alternative<std::string>(unfinished));
  CHECK(std::get<std::string>(unfinished).find("no complete turn") != std::string::npos);

  const auto empty = read_text("");
  CHECK(std::holds_alternative<std::string>(empty));
}

// A daemon over stdio with the replay agent enabled (or not), on a scratch data directory.
class ReplayDaemon {
 public:
  explicit ReplayDaemon(bool enabled, const std::string& recording = recording_path()) {
    fs::create_directories(work());
    std::vector<std::string> environment;
    if (enabled) environment.push_back("SWITCHBOARD_REPLAY_RECORDING=" + recording);
    m_client = std::make_unique<DaemonClient>(
        std::vector<std::string>{"--log-level", "off", "stdio", "--data-dir", (m_tmp.path() / "data").string()},
        environment);
    // A client that answers permissions: else the daemon's headless policy answers them at once.
    const auto init = m_client->call("initialize", {{"protocolVersion", 1},
                                                    {"clientInfo", {{"name", "replay-test"}}},
                                                    {"capabilities", {{"answersPermissions", true}}}});
    REQUIRE(init.contains("result"));
  }

  DaemonClient& client() { return *m_client; }
  fs::path work() const { return m_tmp.path() / "work"; }

  std::vector<std::string> agent_names() {
    const auto listed = m_client->call("agents.list");
    std::vector<std::string> names;
    for (const auto& agent : listed["result"]["agents"]) names.push_back(agent.value("agent", ""));
    return names;
  }

  std::string create_session() {
    const auto created = m_client->call("session.create", {{"agent", "replay"}, {"cwd", work().string()}});
    INFO(created.dump());
    REQUIRE(created.contains("result"));
    return created["result"]["session"]["sessionId"];
  }

 private:
  TempDir m_tmp;
  std::unique_ptr<DaemonClient> m_client;
};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST_CASE("replay agent: without a recording it is not listed, with one it is, with the recorded version", "[replay]") {
  ReplayDaemon off(false);
  const auto without = off.agent_names();
  CHECK(contains(without, "claude"));
  CHECK_FALSE(contains(without, "replay"));

  ReplayDaemon on(true);
  // Discovery runs `switchboard __replay-claude --version` in the background: wait for its answer.
  json replay;
  json listed;
  CHECK(eventually([&] {
    listed = on.client().call("agents.list");
    for (const auto& agent : listed["result"]["agents"]) {
      if (agent.value("agent", "") == "replay" && agent.contains("version")) replay = agent;
    }
    return !replay.is_null();
  }, std::chrono::seconds(30)));  // the probe starts this binary anew: slow on a loaded machine
  INFO(listed.dump());
  REQUIRE(replay.is_object());
  CHECK(replay.value("installed", false));
  CHECK(replay.value("version", "") == "2.1.197");
}

// Matches the events of one type of one session.
std::function<bool(const json&)> event_of(const std::string& session, const std::string& type) {
  return [session, type](const json& e) { return e.value("sessionId", "") == session && e.value("type", "") == type; };
}

TEST_CASE("replay agent: a prompt plays the recorded turn through the Claude Code adapter, waits for the permission answer, and the turns go round", "[replay]") {
  ReplayDaemon daemon(true);
  const auto id = daemon.create_session();
  auto& client = daemon.client();
  client.send("session.send", {{"sessionId", id}, {"text", "anything at all"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = client.wait_event(event_of(id, "permission.requested"), at, std::chrono::seconds(30));
  INFO(json(client.events()).dump(1));
  REQUIRE_FALSE(asked.is_null());
  CHECK(asked["data"]["request"]["input"]["command"] == "touch created_by_tool.txt && echo made");
  // The turn waits for the answer, however long it takes. The clock is the recording itself: meanwhile a second
  // session plays the same recorded turn from its prompt to its end, which is longer than what is left of the
  // first turn after its request. Once that turn has ended, the first one still has not.
  const auto other = daemon.create_session();
  client.send("session.send", {{"sessionId", other}, {"text", "meanwhile"}, {"wait", false}});
  std::size_t other_at = at;
  const auto other_asked = client.wait_event(event_of(other, "permission.requested"), other_at, std::chrono::seconds(30));
  REQUIRE_FALSE(other_asked.is_null());
  CHECK(client.call("permission.respond", {{"requestId", other_asked["data"]["request"]["requestId"]}, {"decision", "allow_once"}})
            .contains("result"));
  REQUIRE_FALSE(client.wait_event(event_of(other, "turn.stopped"), other_at, std::chrono::seconds(30)).is_null());
  std::size_t probe = at;
  CHECK(client.wait_event(event_of(id, "turn.stopped"), probe, std::chrono::milliseconds(0)).is_null());
  CHECK(client.call("session.get", {{"sessionId", id}})["result"]["session"]["state"] == "awaiting_input");

  const auto answered = client.call("permission.respond", {{"requestId", asked["data"]["request"]["requestId"]}, {"decision", "allow_once"}});
  CHECK(answered.contains("result"));
  const auto stopped = client.wait_event(event_of(id, "turn.stopped"), at, std::chrono::seconds(30));
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "end_turn");
  // The recording's tool output arrived; the command itself never ran.
  std::size_t tools = 0;
  const auto tool = client.wait_event(event_of(id, "tool.completed"), tools, std::chrono::seconds(1));
  REQUIRE_FALSE(tool.is_null());
  CHECK_FALSE(fs::exists(daemon.work() / "created_by_tool.txt"));

  const auto second = client.call("session.send", {{"sessionId", id}, {"text", "and again"}});
  INFO(second.dump());
  REQUIRE(second.contains("result"));
  CHECK(second["result"]["text"] == "second turn ok");
  // After the last recorded turn the first comes again, with its permission request.
  client.send("session.send", {{"sessionId", id}, {"text", "once more"}, {"wait", false}});
  const auto asked_again = client.wait_event(event_of(id, "permission.requested"), at, std::chrono::seconds(30));
  CHECK_FALSE(asked_again.is_null());
}

TEST_CASE("replay agent: a cancel while the recorded permission waits ends the turn cancelled and the next prompt plays", "[replay]") {
  ReplayDaemon daemon(true);
  const auto id = daemon.create_session();
  auto& client = daemon.client();
  client.send("session.send", {{"sessionId", id}, {"text", "start"}, {"wait", false}});
  std::size_t at = 0;
  REQUIRE_FALSE(client.wait_event("permission.requested", at, std::chrono::seconds(30)).is_null());
  const auto cancelled = client.call("session.cancel", {{"sessionId", id}});
  CHECK(cancelled["result"]["cancelled"] == true);
  const auto stopped = client.wait_event("turn.stopped", at, std::chrono::seconds(30));
  INFO(json(client.events()).dump(1));
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "cancelled");
  const auto next = client.call("session.send", {{"sessionId", id}, {"text", "next"}});
  INFO(next.dump());
  CHECK(next.contains("result"));
}

TEST_CASE("replay agent: a recording that cannot be read makes it unavailable, and a session is refused, saying so", "[replay]") {
  ReplayDaemon daemon(true, (fs::temp_directory_path() / "no-such-replay-recording.ndjson").string());
  json replay;
  json listed;
  CHECK(eventually([&] {
    listed = daemon.client().call("agents.list");
    for (const auto& agent : listed["result"]["agents"]) {
      if (agent.value("agent", "") == "replay" && agent.contains("problem")) replay = agent;
    }
    return !replay.is_null();
  }, std::chrono::seconds(30)));  // the probe starts this binary anew: slow on a loaded machine
  INFO(listed.dump());
  REQUIRE(replay.is_object());
  CHECK_FALSE(replay.value("installed", true));
  CHECK(replay.value("problem", "").find("--version") != std::string::npos);
  const auto created = daemon.client().call("session.create", {{"agent", "replay"}, {"cwd", daemon.work().string()}});
  INFO(created.dump());
  REQUIRE(created.contains("error"));
  CHECK(created["error"]["code"] == -32013);
}

// argv for a call of the binary with `words` after its name.
struct Argv {
  std::vector<std::string> words;
  std::vector<char*> pointers;
  explicit Argv(std::vector<std::string> given) : words(std::move(given)) {
    for (auto& word : words) pointers.push_back(word.data());
    pointers.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  char** argv() { return pointers.data(); }
};

TEST_CASE("agent registry: a call of an agent's helper command runs its entry point, any other call none", "[replay]") {
  using switchboard::adapters::AgentRegistration;
  using switchboard::adapters::run_agent_helper;
  const std::array agents{
      AgentRegistration{.name = "plain", .settings = nullptr, .make = nullptr},
      AgentRegistration{.name = "helped", .settings = nullptr, .make = nullptr, .helper_command = "__helped",
                        .run_helper = [](int argc, char**) { return 40 + argc; }},
  };
  Argv helped({"switchboard", "__helped", "--flag"});
  CHECK(run_agent_helper(agents, helped.argc(), helped.argv()) == 43);
  Argv daemon({"switchboard", "stdio"});
  CHECK_FALSE(run_agent_helper(agents, daemon.argc(), daemon.argv()));
  Argv bare({"switchboard"});
  CHECK_FALSE(run_agent_helper(agents, bare.argc(), bare.argv()));

  // The binary's own registry hands `__replay-claude` to the replay agent's stand-in CLI, which refuses a call
  // without its recording as a usage error.
  Argv replay({"switchboard", "__replay-claude"});
  CHECK(run_agent_helper(switchboard::adapters::builtin_agent_entries(), replay.argc(), replay.argv()) == 2);
}

}  // namespace replay_agent_tests
