#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/EngineCalls.h"
#include "support/ScriptedAdapter.h"
#include "support/StoredEngineRun.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"

// The engine with its real persistence: a SQLite store in a temporary directory, opened, used and closed once
// per "daemon run", so a test can restart the daemon (or cut it off mid-turn) and see what comes back.

namespace engine_persistence_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
using switchboard::testing::TempDir;
namespace fs = std::filesystem;
namespace p = protocol;

// One run of the daemon's engine over the database in `dir` (a second one over it is the daemon restarted).
struct DaemonRun : testing::StoredEngineRun {
  using StoredEngineRun::StoredEngineRun;

  engine::Outcome<p::SessionInfo> create(std::optional<std::string> title = std::nullopt) {
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = cwd;
    params.title = std::move(title);
    std::optional<engine::Outcome<p::SessionInfo>> outcome;
    engine->create_session(params, [&](engine::Outcome<p::SessionInfo> result) { outcome = std::move(result); });
    settle();
    REQUIRE(outcome);
    return *outcome;
  }

  std::string create_id(std::optional<std::string> title = std::nullopt) {
    auto outcome = create(std::move(title));
    REQUIRE(std::holds_alternative<p::SessionInfo>(outcome));
    return std::get<p::SessionInfo>(outcome).session_id;
  }

  std::shared_ptr<std::optional<engine::Outcome<p::SessionSendResult>>> send(const std::string& session, std::string text) {
    auto slot = std::make_shared<std::optional<engine::Outcome<p::SessionSendResult>>>();
    p::SessionSendParams params;
    params.session_id = session;
    params.text = std::move(text);
    params.wait = false;
    engine->send(params, [slot](engine::Outcome<p::SessionSendResult> outcome) { *slot = std::move(outcome); });
    settle();
    return slot;
  }

  p::SessionAttachResult attach(const std::string& session) {
    auto outcome = testing::attach(*engine, io, session);
    REQUIRE(std::holds_alternative<p::SessionAttachResult>(outcome));
    return std::get<p::SessionAttachResult>(outcome);
  }

  std::vector<std::string> sent_texts() const {
    std::vector<std::string> texts;
    for (const auto& input : control->inputs) texts.push_back(input.text);
    return texts;
  }
};

p::SessionListResult list_all(testing::StoredEngineRun& run, std::optional<bool> archived = std::nullopt) {
  p::SessionListParams params;
  params.archived = archived;
  return testing::listed(*run.engine, run.io, params);
}

TEST_CASE("engine store: sessions and rules and runs survive a restart", "[engine][store]") {
  TempDir dir{"engine-store"};
  std::string kept;
  std::string archived;
  {
    DaemonRun run(dir.path());
    kept = run.create_id("first title");
    archived = run.create_id();
    const auto doomed = run.create_id("to delete");

    std::optional<engine::Outcome<p::SessionInfo>> renamed;
    run.engine->rename(kept, "renamed", [&](auto outcome) { renamed.emplace(std::move(outcome)); });
    run.settle();
    REQUIRE(renamed);
    REQUIRE(std::holds_alternative<p::SessionInfo>(*renamed));
    run.engine->archive(archived, true, [](auto) {});
    run.engine->set_model(kept, "model-b", [](auto) {});
    std::optional<std::optional<engine::EngineError>> deleted;
    run.engine->delete_session(doomed, [&](auto error) { deleted = error; });
    run.settle();
    REQUIRE(deleted);
    CHECK_FALSE(*deleted);

    // A turn that asks once: answered "allow for this project", which must outlive the daemon.
    run.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "npm test"}, ScriptedAdapter::End{}});
    run.send(kept, "run the tests");
    const auto open = run.attach(kept).permissions;
    REQUIRE(open.size() == 1);
    p::PermissionRespondParams answer;
    answer.request_id = open[0].request_id;
    answer.decision = p::PermissionDecision::AllowProject;
    std::optional<std::optional<engine::EngineError>> answered;
    run.engine->respond_permission(answer, std::string("tui"), [&](std::optional<engine::EngineError> error) { answered = error; });
    REQUIRE(answered);
    REQUIRE_FALSE(*answered);
    run.settle();
    CHECK(run.attach(kept).session.state == p::SessionState::Idle);
    CHECK(run.control->start_options.at(0).resume_provider_session_id == std::nullopt);
  }
  {
    DaemonRun run(dir.path());
    const auto live = list_all(run);
    REQUIRE(live.sessions.size() == 1);
    CHECK(live.sessions[0].session_id == kept);
    CHECK(live.sessions[0].title == std::optional<std::string>("renamed"));
    CHECK(live.sessions[0].model == std::optional<std::string>("model-b"));
    CHECK(live.sessions[0].state == p::SessionState::Idle);
    CHECK_FALSE(live.sessions[0].live);  // cold: no agent process yet
    const auto old = list_all(run, true);
    REQUIRE(old.sessions.size() == 1);
    CHECK(old.sessions[0].session_id == archived);

    const auto rules = run.engine->list_rules(std::nullopt, std::nullopt);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].scope == p::RuleScope::Project);
    CHECK(rules[0].cwd == std::optional<std::string>(run.cwd));
    CHECK(rules[0].rule.pattern == std::optional<std::string>("npm test"));

    // The remembered rule answers without asking; the agent resumes its own conversation (the recorded run).
    run.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "npm test"}, ScriptedAdapter::End{}});
    run.send(kept, "again");
    CHECK(run.attach(kept).session.state == p::SessionState::Idle);
    REQUIRE(run.control->permission_answers.size() == 1);
    CHECK(run.control->permission_answers[0].allow);
    REQUIRE(run.control->start_options.size() == 1);
    CHECK(run.control->start_options[0].resume_provider_session_id == std::optional<std::string>("provider-1"));

    // Removing the rule removes it from the store too.
    std::optional<std::optional<engine::EngineError>> removed;
    run.engine->remove_rule(rules[0].rule_id, [&](auto error) { removed = error; });
    run.settle();
    REQUIRE(removed);
    CHECK_FALSE(*removed);
  }
  {
    DaemonRun run(dir.path());
    CHECK(run.engine->list_rules(std::nullopt, std::nullopt).empty());
  }
}

TEST_CASE("engine store: a turn cut off by a restart comes back interrupted with its queue and resumes", "[engine][store]") {
  TempDir dir{"engine-store"};
  std::string id;
  {
    DaemonRun run(dir.path());
    id = run.create_id();
    run.control->turns.push_back({ScriptedAdapter::Hold{}});
    run.send(id, "first");
    const auto queued = run.send(id, "second");
    REQUIRE(*queued);
    CHECK(std::get<p::SessionSendResult>(**queued).queued);
    CHECK(run.attach(id).session.state == p::SessionState::Running);
    // The daemon dies here, mid-turn.
  }
  {
    DaemonRun run(dir.path());
    auto snapshot = run.attach(id);
    CHECK(snapshot.session.state == p::SessionState::Interrupted);
    REQUIRE(snapshot.interrupted);
    CHECK(snapshot.interrupted->text == "first");
    REQUIRE(snapshot.queue.size() == 1);
    CHECK(snapshot.queue[0].text == "second");

    std::optional<engine::Outcome<p::SessionSendResult>> resumed;
    p::SessionResumeParams params;
    params.session_id = id;
    run.engine->resume(params, [&](auto outcome) { resumed.emplace(std::move(outcome)); });
    run.settle();
    REQUIRE(resumed);
    REQUIRE(std::holds_alternative<p::SessionSendResult>(*resumed));
    CHECK(std::get<p::SessionSendResult>(*resumed).stop_reason == p::StopReason::EndTurn);
    // The interrupted prompt ran again, then the queue drained, in order.
    CHECK(run.sent_texts() == std::vector<std::string>{"first", "second"});
    snapshot = run.attach(id);
    CHECK(snapshot.session.state == p::SessionState::Idle);
    CHECK_FALSE(snapshot.interrupted);
    CHECK(snapshot.queue.empty());

    std::optional<engine::Outcome<p::SessionSendResult>> again;
    run.engine->resume(params, [&](auto outcome) { again.emplace(std::move(outcome)); });
    REQUIRE(again);
    REQUIRE(std::holds_alternative<engine::EngineError>(*again));
    CHECK(std::get<engine::EngineError>(*again).code == p::ErrorCode::NotInterrupted);
  }
  {
    DaemonRun run(dir.path());
    CHECK(run.attach(id).session.state == p::SessionState::Idle);  // nothing is owed any more
  }
}

TEST_CASE("engine store: a graceful shutdown mid-turn reports the turn and stopped, and the session still comes back interrupted", "[engine][store]") {
  TempDir dir{"engine-store"};
  std::string id;
  {
    DaemonRun run(dir.path());
    id = run.create_id();
    run.control->turns.push_back({ScriptedAdapter::Hold{}});
    run.control->stop_delays = {std::chrono::milliseconds(30)};
    run.send(id, "first");
    run.send(id, "second");  // queued: must not start during the shutdown
    std::vector<bus::BusEvent> seen;
    auto recorder = run.bus.subscribe_all([&](const bus::BusEvent& e) { seen.push_back(e); });
    bool done = false;
    run.engine->shut_down(std::chrono::seconds(5), [&] { done = true; });
    for (int i = 0; i < 200 && !done; ++i) {
      run.io.restart();
      run.io.run_one_for(std::chrono::milliseconds(20));
    }
    REQUIRE(done);
    CHECK(run.engine->sealed());
    // The cut-off turn ended for clients, then the session stopped; nothing else started.
    std::vector<std::string> types;
    for (const auto& e : seen) types.emplace_back(p::event_info(e.kind()).type);
    CHECK(types == std::vector<std::string>{"turn.stopped", "session.state"});
    CHECK(run.sent_texts() == std::vector<std::string>{"first"});
    run.settle();
  }
  {
    DaemonRun run(dir.path());
    const auto snapshot = run.attach(id);
    CHECK(snapshot.session.state == p::SessionState::Interrupted);
    REQUIRE(snapshot.interrupted);
    CHECK(snapshot.interrupted->text == "first");
    REQUIRE(snapshot.queue.size() == 1);
    CHECK(snapshot.queue[0].text == "second");
  }
}

TEST_CASE("engine store: a send to an interrupted session runs the cut-off prompt first and nothing overtakes", "[engine][store]") {
  TempDir dir{"engine-store"};
  std::string id;
  {
    DaemonRun run(dir.path());
    id = run.create_id();
    run.control->turns.push_back({ScriptedAdapter::Hold{}});
    run.send(id, "cut off");
  }
  DaemonRun run(dir.path());
  const auto result = run.send(id, "new prompt");
  REQUIRE(*result);
  CHECK(std::get<p::SessionSendResult>(**result).queued);
  CHECK(run.sent_texts() == std::vector<std::string>{"cut off", "new prompt"});
  CHECK(run.attach(id).session.state == p::SessionState::Idle);
}

TEST_CASE("engine store: cancel discards the interrupted prompt visibly", "[engine][store]") {
  TempDir dir{"engine-store"};
  std::string id;
  {
    DaemonRun run(dir.path());
    id = run.create_id();
    run.control->turns.push_back({ScriptedAdapter::Hold{}});
    run.send(id, "cut off");
  }
  {
    DaemonRun run(dir.path());
    std::vector<p::SessionStateEvent> states;
    auto watch = run.bus.subscribe(p::EventKind::SessionState, [&](const bus::BusEvent& event) {
      states.push_back(std::get<p::SessionStateEvent>(event.payload));
    });
    const auto cancelled = testing::cancel(*run.engine, run.io, id);
    REQUIRE(std::holds_alternative<bool>(cancelled));
    CHECK(std::get<bool>(cancelled));
    run.settle();
    REQUIRE(states.size() == 1);
    CHECK(states[0].state == p::SessionState::Idle);
    CHECK(states[0].reason.value_or("").find("discarded") != std::string::npos);
    CHECK_FALSE(run.attach(id).interrupted);
    CHECK(run.control->inputs.empty());
  }
  DaemonRun run(dir.path());
  CHECK(run.attach(id).session.state == p::SessionState::Idle);
}

TEST_CASE("engine store: a storage failure reaches the caller as StoreFailure and creates nothing", "[engine][store]") {
  TempDir dir{"engine-store"};
  DaemonRun run(dir.path());
  run.store->close();  // every later store job fails: the situation of a database that became unusable
  const auto outcome = run.create("never stored");
  REQUIRE(std::holds_alternative<engine::EngineError>(outcome));
  CHECK(std::get<engine::EngineError>(outcome).code == p::ErrorCode::StoreFailure);
  CHECK(run.engine->sessions_in_memory() == 0);
  // session.list reads the store: it says the store failed rather than showing an empty list.
  const auto listed = testing::list_sessions(*run.engine, run.io, p::SessionListParams{});
  REQUIRE(std::holds_alternative<engine::EngineError>(listed));
  CHECK(std::get<engine::EngineError>(listed).code == p::ErrorCode::StoreFailure);
}

}  // namespace engine_persistence_tests
