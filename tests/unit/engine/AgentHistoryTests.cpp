#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "claude-code/ClaudeCodeAdapter.h"
#include "claude-code/ClaudeHistory.h"
#include "codex/CodexAdapter.h"
#include "daemon/Methods.h"
#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/CallMethod.h"
#include "support/ClaudeFixtures.h"
#include "support/CodexRecording.h"
#include "support/RecordingPeer.h"
#include "support/SchemaValidator.h"
#include "support/ScriptedAdapter.h"
#include "support/Settle.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/support/Clock.h"

// The agent's own history through the daemon's method table: history.list, history.read and session.import, with
// the real Claude descriptor reading a fake config directory built from the recorded history fixture, and a
// scripted agent whose history hooks are Claude's (so an import can be sent to without a CLI).

namespace agent_history_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
namespace fs = std::filesystem;
namespace p = protocol;
using Json = nlohmann::json;
using switchboard::testing::TempDir;

const std::string kRecorded = "11111111-2222-4333-8444-555555555555";
const std::string kRefactor = "22222222-aaaa-4bbb-8ccc-dddddddddddd";

void write_file(const fs::path& file, const std::string& text, int age_seconds) {
  std::ofstream(file, std::ios::binary) << text;
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::seconds(age_seconds));
}

std::string user_line(const std::string& text) {
  return R"({"type":"user","sessionId":"s","cwd":"/elsewhere","timestamp":"2026-01-02T03:04:05.000Z","message":{"role":"user","content":)" +
         Json(text).dump() + "}}\n";
}

// A Claude config directory holding, for `project`: the recorded session, a newer one with two malformed lines,
// a file without a conversation, and a sub-agent transcript.
struct ClaudeHome {
  TempDir root{"agent-history"};
  fs::path project = root.path() / "work" / "project";

  ClaudeHome() {
    fs::create_directories(project);
    const auto sessions = root.path() / "claude" / "projects" / adapters::claude::project_directory_name(project.string());
    fs::create_directories(sessions);
    std::string recorded;
    for (const auto& line : testing::claude_fixture_lines("recorded-history-" + kRecorded + ".jsonl")) recorded += line + "\n";
    write_file(sessions / (kRecorded + ".jsonl"), recorded, /*age_seconds=*/300);
    write_file(sessions / (kRefactor + ".jsonl"),
               R"({"type":"summary","summary":"Refactor the parser","leafUuid":"x"})" "\n" + std::string("garbage\n{\"unterminated\n") +
                   user_line("please refactor the parser") + user_line("and add tests"),
               /*age_seconds=*/100);
    write_file(sessions / "33333333-aaaa-4bbb-8ccc-dddddddddddd.jsonl", R"({"type":"queue-operation","operation":"enqueue"})" "\n", 50);
    write_file(sessions / "agent-1234.jsonl", user_line("a sub-agent transcript"), 10);
  }

  fs::path config_dir() const { return root.path() / "claude"; }
};

// The Claude descriptor over `config_dir`, with a CLI that is not installed (nothing is spawned).
adapters::AgentDescriptor claude_descriptor(boost::asio::io_context& io, const fs::path& config_dir) {
  adapters::claude::ClaudeCodeConfig config;
  config.executable = "/nonexistent/switchboard-test/claude";
  config.endpoint.config_dir = config_dir.string();
  return adapters::claude::claude_code_agent(io, std::move(config));
}

// The scripted agent, able to resume (and to fork, unless told otherwise), with Claude's history hooks: imports of
// it can take turns.
adapters::AgentDescriptor scripted_with_history(boost::asio::io_context& io, std::shared_ptr<ScriptedAdapter::Control> control,
                                                const adapters::AgentDescriptor& claude, const std::string& name = "scripted",
                                                bool can_fork = true) {
  auto descriptor = ScriptedAdapter::descriptor(io, control);
  descriptor.name = name;
  descriptor.discover = [name, can_fork] {
    protocol::AgentInfo info;
    info.agent = name;
    info.installed = true;
    info.capabilities = protocol::AgentCapabilities{true, true, true, /*resume=*/true, true, true, true, true, false, can_fork};
    return info;
  };
  descriptor.list_history = claude.list_history;
  descriptor.read_history = claude.read_history;
  return descriptor;
}

// An installed agent named "fake" that lists and reads a history (its hooks, set by the test) and starts no session.
adapters::AgentDescriptor history_only_agent() {
  adapters::AgentDescriptor fake;
  fake.name = "fake";
  fake.discover = [] {
    protocol::AgentInfo info;
    info.agent = "fake";
    info.installed = true;
    info.capabilities = protocol::AgentCapabilities{false, false, false, false, true, true, false, false, false};
    return info;
  };
  fake.create = [](adapters::AdapterListener&) -> std::unique_ptr<adapters::AgentAdapter> { return nullptr; };
  return fake;
}

// One run of the daemon's method table over a store in `data_dir`, with three agents: claude (history, no CLI),
// scripted-with-history ("scripted") and a plain scripted agent without history hooks ("plain").
struct HistoryRun {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::unique_ptr<store::Store> store;
  std::unique_ptr<daemon::StoredSessions> persistence;
  std::unique_ptr<engine::Engine> engine;
  daemon::EventLogAccess history;
  rpc::Dispatcher dispatcher;
  std::shared_ptr<testing::RecordingPeer> peer = std::make_shared<testing::RecordingPeer>(false);
  std::vector<bus::BusEvent> events;
  bus::Subscription recorder = bus.subscribe_all([this](const bus::BusEvent& e) { events.push_back(e); });

  HistoryRun(const fs::path& data_dir, const fs::path& claude_config, std::vector<adapters::AgentDescriptor> extra = {}) {
    auto opened = store::Store::open(io, data_dir / "switchboard.db");
    REQUIRE(opened.has_value());
    store = std::move(*opened);
    persistence = std::make_unique<daemon::StoredSessions>(*store);
    auto state = daemon::StoredSessions::load(io, *store);
    REQUIRE(state.has_value());
    auto claude = claude_descriptor(io, claude_config);
    auto plain = ScriptedAdapter::descriptor(io, control);
    plain.name = "plain";
    std::vector<adapters::AgentDescriptor> agents{claude, scripted_with_history(io, control, claude), plain};
    for (auto& descriptor : extra) agents.push_back(std::move(descriptor));
    engine = std::make_unique<engine::Engine>(io, bus, std::move(agents), engine::EngineConfig{}, persistence.get());
    engine->restore(std::move(*state));
    daemon::bind_methods(dispatcher, *engine, history, {1024 * 1024});
    bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
  }
  ~HistoryRun() {
    settle();
    engine.reset();
    store->close();
  }

  // Store and helper-thread results arrive from other threads.
  void settle() { testing::settle(io); }

  // The answer may wait for a file read on the engine's helper thread.
  Json call(const std::string& method, const Json& params) { return testing::call_method(io, dispatcher, peer, method, params); }

  std::vector<std::string> event_types() const {
    std::vector<std::string> out;
    for (const auto& e : events) out.emplace_back(p::event_info(e.kind()).type);
    return out;
  }
};

// What the store binds a session to (its newest run), read through the engine's persistence.
std::optional<engine::ConversationBinding> latest_run(HistoryRun& run, const std::string& session_id) {
  std::optional<std::optional<engine::ConversationBinding>> bound;
  run.persistence->latest_run(session_id, [&](std::optional<engine::ConversationBinding> binding) { bound = std::move(binding); });
  run.settle();
  REQUIRE(bound);
  return *bound;
}

std::string import_recorded(HistoryRun& run, const fs::path& project, const std::string& agent = "scripted") {
  const auto imported = run.call("session.import", {{"agent", agent}, {"cwd", project.string()}, {"providerSessionId", kRecorded}});
  INFO(imported.dump());
  REQUIRE(imported.contains("result"));
  return imported.at("result").at("session").at("sessionId");
}

std::vector<std::string> types_of(const Json& events) {
  std::vector<std::string> out;
  for (const auto& event : events) out.push_back(event.at("type"));
  return out;
}

TEST_CASE("iso 8601 timestamps parse to Unix milliseconds and nonsense does not", "[history]") {
  CHECK(parse_iso8601_millis("1970-01-01T00:00:00Z") == std::optional<std::int64_t>(0));
  CHECK(parse_iso8601_millis("2026-11-29T22:22:44.284Z") == std::optional<std::int64_t>(1795990964284));
  CHECK(parse_iso8601_millis("2026-11-29T22:22:44.2Z") == std::optional<std::int64_t>(1795990964200));
  CHECK(parse_iso8601_millis("2026-11-29T22:22:44.284999Z") == std::optional<std::int64_t>(1795990964284));
  CHECK(parse_iso8601_millis("2026-11-30T00:22:44.284+02:00") == std::optional<std::int64_t>(1795990964284));
  CHECK(parse_iso8601_millis("2026-11-29 22:22:44Z") == std::optional<std::int64_t>(1795990964000));
  CHECK_FALSE(parse_iso8601_millis(""));
  CHECK_FALSE(parse_iso8601_millis("2026-11-29T22:22:44"));  // local time: no instant
  CHECK_FALSE(parse_iso8601_millis("2026-02-30T00:00:00Z"));
  CHECK_FALSE(parse_iso8601_millis("2026-11-29T24:00:00Z"));
  CHECK_FALSE(parse_iso8601_millis("2026-11-29T22:22:44.Z"));
  CHECK_FALSE(parse_iso8601_millis("2026-11-29T22:22:44Zjunk"));
  CHECK_FALSE(parse_iso8601_millis("yesterday"));
}

TEST_CASE("unix milliseconds format as the iso 8601 timestamps that parse back to them", "[history]") {
  CHECK(format_iso8601_millis(0) == "1970-01-01T00:00:00.000Z");
  CHECK(format_iso8601_millis(1795990964284) == "2026-11-29T22:22:44.284Z");
  CHECK(format_iso8601_millis(1796143713738) == "2026-12-01T16:48:33.738Z");
  for (const std::int64_t millis : {std::int64_t{1}, std::int64_t{951782400000}, std::int64_t{4102444799999}}) {
    CHECK(parse_iso8601_millis(format_iso8601_millis(millis)) == std::optional<std::int64_t>(millis));
  }
}

TEST_CASE("history.list shows the agent's sessions for a directory newest first and counts what it skipped", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const auto listed = run.call("history.list", {{"agent", "claude"}, {"cwd", home.project.string()}});
  REQUIRE(listed.contains("result"));
  const auto& result = listed.at("result");
  testing::SchemaValidator validator;
  CHECK(validator.validate_result("history.list", result).empty());
  REQUIRE(result.at("sessions").size() == 2);
  const auto& newest = result.at("sessions").at(0);
  CHECK(newest.at("providerSessionId") == kRefactor);
  CHECK(newest.at("title") == "Refactor the parser");
  CHECK(newest.at("promptCount") == 2);
  CHECK(newest.at("cwd") == "/elsewhere");  // what the agent recorded
  CHECK(newest.at("createdAt") == 1767323045000);
  const auto& recorded = result.at("sessions").at(1);
  CHECK(recorded.at("providerSessionId") == kRecorded);
  CHECK(recorded.at("title") == "create [[bash: touch created_bypass.txt && echo bypassed]]");
  CHECK(recorded.at("promptCount") == 2);
  CHECK(recorded.at("createdAt") == parse_iso8601_millis("2026-11-29T22:22:44.198Z").value());
  CHECK(recorded.at("path").get<std::string>().ends_with(kRecorded + ".jsonl"));
  CHECK(newest.at("updatedAt").get<std::int64_t>() > recorded.at("updatedAt").get<std::int64_t>());
  CHECK(recorded.at("updatedAt").get<std::int64_t>() > unix_millis_now() - 3600 * 1000);
  CHECK(result.at("skippedLines") == 2);  // "garbage" and the unterminated object
  CHECK(result.at("skippedFiles") == 1);  // the queue-only file; the sub-agent transcript is not a session

  // A directory the agent never worked in has no history, which is not an error.
  const auto empty = run.call("history.list", {{"agent", "claude"}, {"cwd", "/nowhere/at/all"}});
  CHECK(empty.at("result") == Json{{"sessions", Json::array()}, {"skippedFiles", 0}, {"skippedLines", 0}});
  // Nothing of ours was created by looking.
  CHECK(run.call("session.list", Json::object()).at("result").at("sessions").empty());
}

TEST_CASE("history.read replays a recorded session as the live events' types and payloads", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const auto read = run.call("history.read", {{"agent", "claude"}, {"cwd", home.project.string()}, {"providerSessionId", kRecorded}});
  REQUIRE(read.contains("result"));
  const auto& result = read.at("result");
  testing::SchemaValidator validator;
  CHECK(validator.validate_result("history.read", result).empty());
  CHECK(result.at("providerSessionId") == kRecorded);
  CHECK(result.at("skippedLines") == 0);
  const auto& events = result.at("events");
  CHECK(types_of(events) == std::vector<std::string>{"turn.started", "message.completed", "tool.started", "tool.completed",
                                                      "message.completed", "turn.stopped", "turn.started", "message.completed",
                                                      "turn.stopped"});
  // Each payload is exactly what the live event of its type carries.
  for (const auto& event : events) {
    const Json envelope{{"seq", 1}, {"type", event.at("type")}, {"ts", 0}, {"sessionId", "s-x"}, {"data", event.at("data")}};
    CHECK(validator.validate_event(envelope).empty());
  }
  const std::string first_turn = "ed292b8e-b39b-4226-85bd-484dc4c62751";  // the prompt's id: stable across reads
  CHECK(events.at(0).at("data") == Json{{"turnId", first_turn}, {"text", "create [[bash: touch created_bypass.txt && echo bypassed]]"}});
  CHECK(events.at(0).at("ts") == parse_iso8601_millis("2026-11-29T22:22:44.284Z").value());
  CHECK(events.at(1).at("data").at("text") == "Mock model: calling Bash.");
  CHECK(events.at(1).at("data").at("role") == "assistant");
  CHECK(events.at(2).at("data").at("tool") == "Bash");
  CHECK(events.at(2).at("data").at("input").at("command") == "touch created_bypass.txt && echo bypassed");
  CHECK(events.at(3).at("data") == Json{{"turnId", first_turn}, {"toolCallId", "toolu_mock_0001"}, {"output", "bypassed"}, {"isError", false}});
  CHECK(events.at(5).at("data").at("turnId") == first_turn);
  CHECK(events.at(5).at("data").at("stopReason") == "end_turn");
  CHECK(events.at(5).at("data").at("text") == "Mock model: the tool returned: bypassed");
  CHECK(events.at(5).at("data").at("usage").at("outputTokens") == 74);
  CHECK_FALSE(events.at(5).contains("ts"));
  CHECK(events.at(6).at("data").at("turnId") == "abc8b147-664e-4d0c-ab77-bc423be6a690");
  CHECK(events.at(8).at("data").at("text") == "resumed ok");

  // Malformed lines are skipped and counted, never fatal.
  const auto damaged = run.call("history.read", {{"agent", "claude"}, {"cwd", home.project.string()}, {"providerSessionId", kRefactor}});
  REQUIRE(damaged.contains("result"));
  CHECK(damaged.at("result").at("skippedLines") == 2);
  CHECK(types_of(damaged.at("result").at("events")) == std::vector<std::string>{"turn.started", "turn.stopped", "turn.started", "turn.stopped"});
}

TEST_CASE("history methods refuse unknown agents and sessions and agents without history", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const std::string cwd = home.project.string();
  const auto code = [&](const std::string& method, const Json& params) {
    const auto response = run.call(method, params);
    REQUIRE(response.contains("error"));
    return response.at("error").at("code").get<int>();
  };
  CHECK(code("history.list", {{"agent", "nope"}, {"cwd", cwd}}) == -32012);
  CHECK(code("history.read", {{"agent", "nope"}, {"cwd", cwd}, {"providerSessionId", kRecorded}}) == -32012);
  CHECK(code("session.import", {{"agent", "nope"}, {"cwd", cwd}, {"providerSessionId", kRecorded}}) == -32012);

  CHECK(code("history.list", {{"agent", "plain"}, {"cwd", cwd}}) == -32015);
  CHECK(code("history.read", {{"agent", "plain"}, {"cwd", cwd}, {"providerSessionId", kRecorded}}) == -32015);
  CHECK(code("session.import", {{"agent", "plain"}, {"cwd", cwd}, {"providerSessionId", kRecorded}}) == -32015);

  CHECK(code("history.list", {{"agent", "claude"}, {"cwd", "work/project"}}) == -32014);
  CHECK(code("history.read", {{"agent", "claude"}, {"cwd", "relative"}, {"providerSessionId", kRecorded}}) == -32014);
  CHECK(code("session.import", {{"agent", "claude"}, {"cwd", cwd + "/missing"}, {"providerSessionId", kRecorded}}) == -32014);

  CHECK(code("history.read", {{"agent", "claude"}, {"cwd", cwd}, {"providerSessionId", "99999999-0000-4000-8000-000000000000"}}) == -32019);
  CHECK(code("history.read", {{"agent", "claude"}, {"cwd", "/nowhere"}, {"providerSessionId", kRecorded}}) == -32019);
  // An id is a file name in the agent's project directory, never a path out of it.
  CHECK(code("history.read", {{"agent", "claude"}, {"cwd", cwd}, {"providerSessionId", "../" + kRecorded}}) == -32019);
  CHECK(code("history.read", {{"agent", "claude"}, {"cwd", cwd}, {"providerSessionId", "agent-1234"}}) == -32019);
  CHECK(code("session.import", {{"agent", "claude"}, {"cwd", cwd}, {"providerSessionId", "33333333-aaaa-4bbb-8ccc-dddddddddddd"}}) == -32019);
  CHECK(run.call("session.list", Json::object()).at("result").at("sessions").empty());
  CHECK(run.events.empty() == false);  // the client attached
  for (const auto& type : run.event_types()) CHECK(type != "session.created");
}

TEST_CASE("history methods answer -32602 naming the bad field", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const auto missing = run.call("history.read", {{"agent", "claude"}, {"cwd", home.project.string()}});
  CHECK(missing.at("error").at("code") == -32602);
  CHECK(missing.at("error").at("message").get<std::string>().find("providerSessionId") != std::string::npos);
  const auto wrong_type = run.call("history.list", {{"agent", "claude"}, {"cwd", 7}});
  CHECK(wrong_type.at("error").at("code") == -32602);
  CHECK(wrong_type.at("error").at("data").at("pointer") == "/cwd");
  const auto empty_id = run.call("session.import", {{"agent", "claude"}, {"cwd", home.project.string()}, {"providerSessionId", ""}});
  CHECK(empty_id.at("error").at("code") == -32602);
  CHECK(empty_id.at("error").at("data").at("pointer") == "/providerSessionId");
  const auto unknown = run.call("session.import", {{"agent", "claude"}, {"cwd", home.project.string()}, {"providerSessionId", kRecorded}, {"resume", true}});
  CHECK(unknown.at("error").at("code") == -32602);
  CHECK(unknown.at("error").at("data").at("pointer") == "/resume");
}

TEST_CASE("session.import makes a cold session of ours whose first send resumes the agent's session", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  std::string imported_id;
  {
    HistoryRun run(data.path(), home.config_dir());
    const auto imported = run.call("session.import", {{"agent", "scripted"}, {"cwd", home.project.string()}, {"providerSessionId", kRecorded}});
    REQUIRE(imported.contains("result"));
    testing::SchemaValidator validator;
    CHECK(validator.validate_result("session.import", imported.at("result")).empty());
    const auto& session = imported.at("result").at("session");
    imported_id = session.at("sessionId");
    CHECK(session.at("agent") == "scripted");
    CHECK(session.at("cwd") == home.project.string());
    CHECK(session.at("title") == "create [[bash: touch created_bypass.txt && echo bypassed]]");  // the agent's title
    CHECK(session.at("live") == false);
    CHECK(session.at("state") == "idle");
    CHECK(run.event_types().back() == "session.created");
    CHECK(run.events.back().session_id == imported_id);
    CHECK(run.control->starts == 0);  // cold: nothing runs until the first prompt

    REQUIRE(run.call("session.send", {{"sessionId", imported_id}, {"text", "go on"}}).at("result").at("stopReason") == "end_turn");
    REQUIRE(run.control->start_options.size() == 1);
    CHECK(run.control->start_options.at(0).resume_provider_session_id == std::optional<std::string>(kRecorded));
    CHECK(run.control->start_options.at(0).session_id == imported_id);
  }
  // After a restart the stored run still binds it: the agent resumes the same conversation.
  {
    HistoryRun run(data.path(), home.config_dir());
    const auto listed = run.call("session.list", Json::object()).at("result").at("sessions");
    REQUIRE(listed.size() == 1);
    CHECK(listed.at(0).at("sessionId") == imported_id);
    REQUIRE(run.call("session.send", {{"sessionId", imported_id}, {"text", "still there?"}}).contains("result"));
    REQUIRE(run.control->start_options.size() == 1);
    // The scripted agent reported its own id at the first start ("provider-1"); that is the newest run.
    CHECK(run.control->start_options.at(0).resume_provider_session_id == std::optional<std::string>("provider-1"));
  }
}

TEST_CASE("session.import takes a title and works for an agent whose CLI is not installed", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const auto imported = run.call("session.import", {{"agent", "claude"}, {"cwd", home.project.string()}, {"providerSessionId", kRefactor},
                                                    {"title", "my parser work"}, {"model", "opus"}});
  REQUIRE(imported.contains("result"));
  const auto& session = imported.at("result").at("session");
  CHECK(session.at("title") == "my parser work");
  CHECK(session.at("model") == "opus");
  const auto bound = latest_run(run, session.at("sessionId"));
  REQUIRE(bound);
  CHECK(bound->provider_session_id == kRefactor);
  CHECK_FALSE(bound->fork);
}

TEST_CASE("history hooks run off the reactor thread and their transcript keeps turns apart", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  auto hook_threads = std::make_shared<std::vector<std::thread::id>>();
  auto mutex = std::make_shared<std::mutex>();
  auto fake = history_only_agent();
  fake.list_history = [hook_threads, mutex](const std::string&) -> adapters::HistoryOutcome<adapters::HistoryList> {
    const std::lock_guard lock(*mutex);
    hook_threads->push_back(std::this_thread::get_id());
    return adapters::HistoryList{};
  };
  fake.read_history = [hook_threads, mutex](const std::string&, const std::string& id,
                                            adapters::HistorySink& sink) -> adapters::HistoryOutcome<adapters::HistoryReadStats> {
    {
      const std::lock_guard lock(*mutex);
      hook_threads->push_back(std::this_thread::get_id());
    }
    if (id == "broken") return adapters::AdapterError{p::ErrorCode::UnknownHistorySession, "no such session"};
    // Activity before any prompt, then two prompts with the same id and one without, a tool input that is no
    // object, and a turn the history never closed.
    sink.on_message({"m0", p::DeltaKind::Text, "earlier", std::nullopt});
    sink.on_turn_end(adapters::TurnResult{});
    sink.on_user_prompt({"p", "one", "not a time"});
    sink.on_tool_started({"t1", "Bash", Json("ls"), std::nullopt});
    sink.on_delta({"m1", p::DeltaKind::Text, "dropped", std::nullopt});
    sink.on_status(adapters::AgentStatus{});
    sink.on_turn_end(adapters::TurnResult{p::StopReason::Cancelled, "", std::nullopt, std::nullopt});
    sink.on_user_prompt({"p", "two", "2026-01-02T03:04:05Z"});
    sink.on_message({"m2", p::DeltaKind::Text, "answer", std::nullopt});
    p::PlanEntry step;
    step.content = "write the test";
    step.status = p::PlanEntryStatus::InProgress;
    sink.on_plan(adapters::PlanUpdate{{step}});
    sink.on_message({"m3", p::DeltaKind::Text, "sub-agent", std::string("t1")});
    sink.on_turn_end(adapters::TurnResult{});
    sink.on_user_prompt({"", "three", ""});
    return adapters::HistoryReadStats{12, 3};
  };
  std::vector<adapters::AgentDescriptor> extra{fake};
  HistoryRun run(data.path(), home.config_dir(), std::move(extra));

  CHECK(run.call("history.list", {{"agent", "fake"}, {"cwd", "/x"}}).at("result").at("sessions").empty());
  const auto read = run.call("history.read", {{"agent", "fake"}, {"cwd", "/x"}, {"providerSessionId", "s"}});
  REQUIRE(read.contains("result"));
  testing::SchemaValidator validator;
  CHECK(validator.validate_result("history.read", read.at("result")).empty());
  CHECK(read.at("result").at("skippedLines") == 3);
  const auto& events = read.at("result").at("events");
  CHECK(types_of(events) == std::vector<std::string>{"message.completed", "turn.stopped", "turn.started", "tool.started",
                                                      "turn.stopped", "turn.started", "message.completed", "plan.updated",
                                                      "message.completed", "turn.stopped", "turn.started"});
  CHECK(events.at(0).at("data").at("turnId") == "turn-1");
  CHECK(events.at(1).at("data").at("turnId") == "turn-1");
  CHECK(events.at(1).at("data").at("text") == "earlier");
  CHECK(events.at(2).at("data").at("turnId") == "p");
  CHECK_FALSE(events.at(2).contains("ts"));  // "not a time"
  CHECK(events.at(3).at("data").at("input") == Json{{"input", "ls"}});
  CHECK(events.at(4).at("data").at("stopReason") == "cancelled");
  CHECK(events.at(5).at("data").at("turnId") == "turn-3");  // "p" was taken
  CHECK(events.at(5).at("ts") == 1767323045000);
  CHECK(events.at(7).at("data").at("turnId") == "turn-3");  // a plan replayed inside its turn, whole
  CHECK(events.at(7).at("data").at("entries") == Json::array({{{"content", "write the test"}, {"status", "in_progress"}}}));
  CHECK(events.at(9).at("data").at("text") == "answer");  // the sub-agent's text is not the answer
  CHECK(events.at(10).at("data").at("turnId") == "turn-4");
  for (const auto& event : events) {
    const Json envelope{{"seq", 1}, {"type", event.at("type")}, {"ts", 0}, {"sessionId", "s-x"}, {"data", event.at("data")}};
    CHECK(validator.validate_event(envelope).empty());
  }
  CHECK(run.call("history.read", {{"agent", "fake"}, {"cwd", "/x"}, {"providerSessionId", "broken"}}).at("error").at("code") == -32019);
  // The fake cannot resume, so its sessions cannot become ours.
  CHECK(run.call("session.import", {{"agent", "fake"}, {"cwd", home.project.string()}, {"providerSessionId", "s"}}).at("error").at("code") == -32015);

  const std::lock_guard lock(*mutex);
  REQUIRE(hook_threads->size() == 3);
  for (const auto& id : *hook_threads) CHECK(id != std::this_thread::get_id());
}

TEST_CASE("work on the engine's helper thread that throws answers an internal error saying which work failed, "
          "without the exception's text",
          "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  auto fake = history_only_agent();
  fake.list_history = [](const std::string&) -> adapters::HistoryOutcome<adapters::HistoryList> {
    throw std::runtime_error("internal detail");
  };
  fake.read_history = [](const std::string&, const std::string&,
                         adapters::HistorySink&) -> adapters::HistoryOutcome<adapters::HistoryReadStats> {
    throw std::runtime_error("internal detail");
  };
  std::vector<adapters::AgentDescriptor> extra{fake};
  HistoryRun run(data.path(), home.config_dir(), std::move(extra));

  const auto listed = run.call("history.list", {{"agent", "fake"}, {"cwd", "/x"}});
  INFO(listed.dump());
  REQUIRE(listed.contains("error"));
  CHECK(listed.at("error").at("code") == -32603);
  CHECK(listed.at("error").at("message") == "listing the agent's history failed");
  const auto read = run.call("history.read", {{"agent", "fake"}, {"cwd", "/x"}, {"providerSessionId", "s"}});
  INFO(read.dump());
  REQUIRE(read.contains("error"));
  CHECK(read.at("error").at("message") == "reading the agent's history failed");
  // The helper thread lives on: the next piece of work runs and answers.
  CHECK(run.call("history.list", {{"agent", "fake"}, {"cwd", "/x"}}).at("error").at("code") == -32603);
}

TEST_CASE("Codex threads list read and import through the history methods and resume on the first send", "[history][codex]") {
  // A private CODEX_HOME holding the recorded rollout, for a project beside it ("<scratch>" in the fixture).
  ClaudeHome claude;
  TempDir scratch{"agent-history"};
  const std::string thread = "01a22af6-cf76-7173-bc2a-5e4304033bc4";
  const fs::path project = scratch.path() / "work";
  const fs::path day = scratch.path() / "codex-home" / "sessions" / "2026" / "11" / "30";
  fs::create_directories(project);
  fs::create_directories(day);
  {
    std::ofstream out(day / ("rollout-2026-11-30T05-39-07-" + thread + ".jsonl"), std::ios::binary);
    for (auto line : testing::codex_fixture_lines("rollout/rollout-2026-11-30T05-39-07-" + thread + ".jsonl")) {
      for (auto at = line.find("<scratch>"); at != std::string::npos; at = line.find("<scratch>", at)) line.replace(at, 9, scratch.path().string());
      out << line << "\n";
    }
  }
  boost::asio::io_context descriptors_io;
  adapters::codex::CodexConfig config;
  config.executable = "/nonexistent/switchboard-test/codex";
  adapters::codex::ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:1/v1";
  endpoint.codex_home = scratch.path() / "codex-home";
  config.endpoint = endpoint;

  TempDir data{"agent-history"};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::vector<adapters::AgentDescriptor> extra;
  extra.push_back(adapters::codex::codex_agent(descriptors_io, config));
  // A scripted agent with Codex's hooks: what an import's first send asks the agent to resume is visible. Its
  // adapters live on the run's io_context, which exists only once the run does.
  auto run_io = std::make_shared<boost::asio::io_context*>(nullptr);
  auto scripted = ScriptedAdapter::descriptor(descriptors_io, control);
  scripted.name = "codex-scripted";
  scripted.create = [run_io, control](adapters::AdapterListener& listener) {
    return std::make_unique<ScriptedAdapter>(**run_io, listener, control);
  };
  scripted.discover = [] {
    protocol::AgentInfo info;
    info.agent = "codex-scripted";
    info.installed = true;
    info.capabilities = protocol::AgentCapabilities{true, true, false, /*resume=*/true, true, true, true, true, false};
    return info;
  };
  scripted.list_history = extra.front().list_history;
  scripted.read_history = extra.front().read_history;
  extra.push_back(std::move(scripted));
  HistoryRun run(data.path(), claude.config_dir(), std::move(extra));
  *run_io = &run.io;
  testing::SchemaValidator validator;

  const auto listed = run.call("history.list", {{"agent", "codex"}, {"cwd", project.string()}});
  REQUIRE(listed.contains("result"));
  CHECK(validator.validate_result("history.list", listed.at("result")).empty());
  REQUIRE(listed.at("result").at("sessions").size() == 1);
  CHECK(listed.at("result").at("sessions").at(0).at("providerSessionId") == thread);
  CHECK(listed.at("result").at("sessions").at(0).at("title") == "say hello");
  CHECK(listed.at("result").at("sessions").at(0).at("promptCount") == 7);

  const auto read = run.call("history.read", {{"agent", "codex"}, {"cwd", project.string()}, {"providerSessionId", thread}});
  REQUIRE(read.contains("result"));
  CHECK(validator.validate_result("history.read", read.at("result")).empty());
  const auto& events = read.at("result").at("events");
  CHECK(types_of(events).size() == 28);  // the replay's calls but on_provider_session
  for (const auto& event : events) {
    const Json envelope{{"seq", 1}, {"type", event.at("type")}, {"ts", 0}, {"sessionId", "s-x"}, {"data", event.at("data")}};
    CHECK(validator.validate_event(envelope).empty());
  }
  CHECK(events.at(0).at("data") == Json{{"turnId", "01a22af6-cfc5-7931-b06d-62fa44f1c282"}, {"text", "say hello"}});
  CHECK(run.call("history.read", {{"agent", "codex"}, {"cwd", project.string()}, {"providerSessionId", "../" + thread}}).at("error").at("code") == -32019);

  // Imported into the scripted agent: cold, titled, and its first send resumes the thread.
  const auto imported = run.call("session.import", {{"agent", "codex-scripted"}, {"cwd", project.string()}, {"providerSessionId", thread}});
  REQUIRE(imported.contains("result"));
  const std::string session_id = imported.at("result").at("session").at("sessionId");
  CHECK(imported.at("result").at("session").at("title") == "say hello");
  CHECK(control->starts == 0);
  REQUIRE(run.call("session.send", {{"sessionId", session_id}, {"text", "go on"}}).contains("result"));
  REQUIRE(control->start_options.size() == 1);
  CHECK(control->start_options.at(0).resume_provider_session_id == std::optional<std::string>(thread));

  // Imported for the real descriptor (whose CLI is not installed here): the stored run is bound to the thread,
  // which is what CodexAdapter::start() passes to thread/resume.
  const auto real = run.call("session.import", {{"agent", "codex"}, {"cwd", project.string()}, {"providerSessionId", thread}});
  REQUIRE(real.contains("result"));
  const auto bound = latest_run(run, real.at("result").at("session").at("sessionId"));
  REQUIRE(bound);
  CHECK(bound->provider_session_id == thread);
  CHECK_FALSE(bound->fork);
}

}  // namespace agent_history_tests

namespace agent_history_tests {

TEST_CASE("session.import of a conversation a live session of ours continues makes the new session continue a fork of it", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  std::string original;
  std::string copy;
  {
    HistoryRun run(data.path(), home.config_dir());
    run.control->keep_resumed_id = true;
    original = import_recorded(run, home.project);
    REQUIRE(run.call("session.send", {{"sessionId", original}, {"text", "go on"}}).contains("result"));
    REQUIRE(run.control->start_options.size() == 1);
    CHECK_FALSE(run.control->start_options.at(0).fork);  // nobody else continued it: the conversation itself

    copy = import_recorded(run, home.project);
    const auto stored = latest_run(run, copy);
    REQUIRE(stored);
    CHECK(stored->provider_session_id == kRecorded);
    CHECK(stored->fork);
    REQUIRE(run.call("session.send", {{"sessionId", copy}, {"text", "and you?"}}).contains("result"));
    REQUIRE(run.control->start_options.size() == 2);
    CHECK(run.control->start_options.at(1).session_id == copy);
    CHECK(run.control->start_options.at(1).resume_provider_session_id == std::optional<std::string>(kRecorded));
    CHECK(run.control->start_options.at(1).fork);
    // The fork's own id is the copy's conversation from now on.
    const auto forked = latest_run(run, copy);
    REQUIRE(forked);
    CHECK(forked->provider_session_id == "provider-2");
    CHECK_FALSE(forked->fork);
    // The original still answers, in its own conversation.
    REQUIRE(run.call("session.send", {{"sessionId", original}, {"text", "still yours?"}}).contains("result"));
    CHECK(run.control->start_options.size() == 2);
  }
  // After a restart each resumes its own conversation; neither forks again.
  HistoryRun run(data.path(), home.config_dir());
  REQUIRE(run.call("session.send", {{"sessionId", copy}, {"text", "one"}}).contains("result"));
  REQUIRE(run.call("session.send", {{"sessionId", original}, {"text", "two"}}).contains("result"));
  REQUIRE(run.control->start_options.size() == 2);
  CHECK(run.control->start_options.at(0).resume_provider_session_id == std::optional<std::string>("provider-2"));
  CHECK_FALSE(run.control->start_options.at(0).fork);
  CHECK(run.control->start_options.at(1).resume_provider_session_id == std::optional<std::string>(kRecorded));
  CHECK_FALSE(run.control->start_options.at(1).fork);
}

TEST_CASE("session.import forks a conversation a stored session continues, and a fork not made yet survives a restart", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  std::string copy;
  {
    HistoryRun run(data.path(), home.config_dir());
    import_recorded(run, home.project);  // cold, never started: it continues the conversation all the same
  }
  {
    // The first session is only stored now (dormant): the store says who continues the conversation.
    HistoryRun run(data.path(), home.config_dir());
    copy = import_recorded(run, home.project);
    CHECK(run.control->starts == 0);
  }
  HistoryRun run(data.path(), home.config_dir());
  REQUIRE(run.call("session.send", {{"sessionId", copy}, {"text", "go on"}}).contains("result"));
  REQUIRE(run.control->start_options.size() == 1);
  CHECK(run.control->start_options.at(0).resume_provider_session_id == std::optional<std::string>(kRecorded));
  CHECK(run.control->start_options.at(0).fork);
}

TEST_CASE("session.import of a conversation a session of ours continues is refused for an agent that cannot fork", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  boost::asio::io_context descriptors_io;
  auto claude = claude_descriptor(descriptors_io, home.config_dir());
  auto control = std::make_shared<ScriptedAdapter::Control>();
  std::vector<adapters::AgentDescriptor> extra{scripted_with_history(descriptors_io, control, claude, "no-fork", /*can_fork=*/false)};
  HistoryRun run(data.path(), home.config_dir(), std::move(extra));
  const auto first = import_recorded(run, home.project, "no-fork");
  const auto refused = run.call("session.import", {{"agent", "no-fork"}, {"cwd", home.project.string()}, {"providerSessionId", kRecorded}});
  INFO(refused.dump());
  REQUIRE(refused.contains("error"));
  CHECK(refused.at("error").at("code") == -32021);
  CHECK(refused.at("error").at("message").get<std::string>().find(first) != std::string::npos);
  CHECK(run.call("session.list", Json::object()).at("result").at("sessions").size() == 1);
  // Another agent's session of the same id is no obstacle, and once the first is gone the conversation is free.
  import_recorded(run, home.project, "scripted");
  REQUIRE(run.call("session.delete", {{"sessionId", first}}).contains("result"));
  const auto again = import_recorded(run, home.project, "no-fork");
  const auto bound = latest_run(run, again);
  REQUIRE(bound);
  CHECK_FALSE(bound->fork);
}

TEST_CASE("two imports of one conversation at once: one continues it, the other a fork of it", "[history]") {
  ClaudeHome home;
  TempDir data{"agent-history"};
  HistoryRun run(data.path(), home.config_dir());
  const Json params{{"agent", "scripted"}, {"cwd", home.project.string()}, {"providerSessionId", kRecorded}};
  const auto before = run.peer->responses.size();
  for (int id : {901, 902}) {
    run.dispatcher.handle_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session.import"}, {"params", params}}.dump(), run.peer);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (run.peer->responses.size() < before + 2 && std::chrono::steady_clock::now() < deadline) {
    run.io.restart();
    run.io.run_for(std::chrono::milliseconds(10));
  }
  run.settle();
  REQUIRE(run.peer->responses.size() == before + 2);
  int forks = 0;
  for (std::size_t i = before; i < before + 2; ++i) {
    const auto& response = run.peer->responses[i];
    INFO(response.dump());
    REQUIRE(response.contains("result"));
    const auto bound = latest_run(run, response.at("result").at("session").at("sessionId"));
    REQUIRE(bound);
    forks += bound->fork ? 1 : 0;
  }
  CHECK(forks == 1);
}

}  // namespace agent_history_tests
