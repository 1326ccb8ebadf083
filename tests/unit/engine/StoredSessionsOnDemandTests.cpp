#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "switchboard/support/Bug.h"
#include "support/EngineCalls.h"
#include "support/ScriptedAdapter.h"
#include "support/StoredEngineRun.h"
#include "support/TempDir.h"

// A daemon holds in memory only the sessions something uses: a restart makes none of the stored ones (bar those
// owing prompts), and the first call that needs one makes it from its stored row, once, whatever calls race.

namespace stored_sessions_on_demand_tests {

using namespace switchboard;
using switchboard::testing::StoredEngineRun;
using switchboard::testing::TempDir;
namespace p = protocol;

std::string create(StoredEngineRun& run, const std::string& title) {
  p::SessionCreateParams params;
  params.agent = "scripted";
  params.cwd = run.cwd;
  params.title = title;
  const auto created = testing::awaited<p::SessionInfo>(run.io, [&](auto done) { run.engine->create_session(params, done); });
  REQUIRE(std::holds_alternative<p::SessionInfo>(created));
  return std::get<p::SessionInfo>(created).session_id;
}

// The daemon's persistence, counting the sessions the engine reads from the store; while `hold` is set, each read
// happens but its answer waits in `held` until the test lets it go.
struct CountedLoads : daemon::StoredSessions {
  using StoredSessions::StoredSessions;
  int loads = 0;
  bool hold = false;
  std::vector<std::function<void()>> held;
  void load_session(const std::string& session_id,
                    std::function<void(engine::Outcome<std::optional<engine::StoredSession>>)> done) override {
    ++loads;
    if (!hold) return StoredSessions::load_session(session_id, std::move(done));
    StoredSessions::load_session(session_id, [this, done = std::move(done)](engine::Outcome<std::optional<engine::StoredSession>> read) {
      held.push_back([done, read = std::move(read)] { done(read); });
    });
  }
};

StoredEngineRun::MakePersistence counted(CountedLoads*& made) {
  return [&made](store::Store& store) {
    auto persistence = std::make_unique<CountedLoads>(store);
    made = persistence.get();
    return persistence;
  };
}

engine::Outcome<p::SessionSendResult> send(StoredEngineRun& run, const std::string& session, const std::string& text) {
  p::SessionSendParams params;
  params.session_id = session;
  params.text = text;
  return testing::awaited<p::SessionSendResult>(run.io, [&](auto done) { run.engine->send(params, done); });
}

TEST_CASE("stored sessions: one an earlier daemon stored and nothing touched since is listed, found, and takes a prompt",
          "[engine][store][on-demand]") {
  TempDir dir{"on-demand"};
  std::string session;
  {
    StoredEngineRun run(dir.path());
    session = create(run, "from the first daemon");
    REQUIRE(std::holds_alternative<p::SessionSendResult>(send(run, session, "hello")));
    run.settle();
  }
  StoredEngineRun run(dir.path());
  CHECK(run.engine->sessions_in_memory() == 0);

  const auto listed = testing::listed(*run.engine, run.io, p::SessionListParams{});
  REQUIRE(listed.sessions.size() == 1);
  CHECK(listed.sessions[0].session_id == session);
  CHECK(listed.sessions[0].title == std::optional<std::string>("from the first daemon"));
  CHECK_FALSE(listed.sessions[0].live);
  const auto found = testing::get_session(*run.engine, run.io, session);
  REQUIRE(std::holds_alternative<p::SessionInfo>(found));
  CHECK(std::get<p::SessionInfo>(found).title == std::optional<std::string>("from the first daemon"));
  CHECK(run.engine->sessions_in_memory() == 0);  // reading it made no Session

  const auto sent = send(run, session, "again");
  REQUIRE(std::holds_alternative<p::SessionSendResult>(sent));
  CHECK(run.engine->sessions_in_memory() == 1);
  REQUIRE(run.control->start_options.size() == 1);
  // Made from its stored row: its agent resumes the conversation the first daemon's run recorded.
  CHECK(run.control->start_options[0].resume_provider_session_id == std::optional<std::string>("provider-1"));
  REQUIRE_FALSE(run.control->inputs.empty());
  CHECK(run.control->inputs.back().text == "again");

  // The list now shows the session as it is in memory (the same place, its new state).
  const auto again = testing::listed(*run.engine, run.io, p::SessionListParams{});
  REQUIRE(again.sessions.size() == 1);
  CHECK(again.sessions[0].session_id == session);
  CHECK(again.sessions[0].live);
}

TEST_CASE("stored sessions: calls racing for one not in memory make one Session and see each other's changes",
          "[engine][store][on-demand]") {
  TempDir dir{"on-demand"};
  std::string session;
  std::string other;
  {
    StoredEngineRun run(dir.path());
    session = create(run, "cold");
    other = create(run, "another");
  }
  CountedLoads* persistence = nullptr;
  StoredEngineRun run(dir.path(), {}, counted(persistence));
  REQUIRE(run.engine->sessions_in_memory() == 0);

  // All asked before the store answers any of them.
  std::optional<engine::Outcome<p::SessionInfo>> renamed;
  std::optional<engine::Outcome<p::SessionAttachResult>> attached;
  std::optional<engine::Outcome<bool>> cancelled;
  std::optional<engine::Outcome<p::RememberedRule>> rule;
  run.engine->rename(session, "renamed", [&](auto outcome) { renamed = std::move(outcome); });
  run.engine->attach(session, [&](auto outcome) { attached = std::move(outcome); });
  run.engine->cancel(session, [&](auto outcome) { cancelled = std::move(outcome); });
  run.engine->add_session_rule(session, p::PermissionRule{"Bash", std::nullopt}, true, [&](auto outcome) { rule = std::move(outcome); });
  CHECK_FALSE(attached);  // not in memory: the store is read first
  run.settle();

  REQUIRE(renamed);
  REQUIRE(attached);
  REQUIRE(cancelled);
  REQUIRE(rule);
  CHECK(persistence->loads == 1);  // the later calls waited for the first one's read
  CHECK(run.engine->sessions_in_memory() == 1);
  REQUIRE(std::holds_alternative<p::SessionInfo>(*renamed));
  REQUIRE(std::holds_alternative<p::SessionAttachResult>(*attached));
  // The attach came after the rename: it sees the new title, on the one Session both reached.
  CHECK(std::get<p::SessionAttachResult>(*attached).session.title == std::optional<std::string>("renamed"));
  REQUIRE(std::holds_alternative<bool>(*cancelled));
  CHECK_FALSE(std::get<bool>(*cancelled));  // nothing was running
  REQUIRE(std::holds_alternative<p::RememberedRule>(*rule));
  CHECK(run.engine->list_rules(session, std::nullopt).size() == 1);

  // A deletion racing a prompt for another cold session: the prompt, asked first, is answered; the session is gone.
  std::optional<engine::Outcome<p::SessionSendResult>> sent;
  std::optional<std::optional<engine::EngineError>> deleted;
  p::SessionSendParams params;
  params.session_id = other;
  params.text = "before the deletion";
  params.wait = false;
  run.engine->send(params, [&](auto outcome) { sent = std::move(outcome); });
  run.engine->delete_session(other, [&](auto error) { deleted = std::move(error); });
  run.settle();
  REQUIRE(sent);
  CHECK(std::holds_alternative<p::SessionSendResult>(*sent));
  CHECK(persistence->loads == 2);
  REQUIRE(deleted);
  CHECK_FALSE(*deleted);
  const auto gone = testing::get_session(*run.engine, run.io, other);
  REQUIRE(std::holds_alternative<engine::EngineError>(gone));
  CHECK(std::get<engine::EngineError>(gone).code == p::ErrorCode::UnknownSession);
  CHECK(run.engine->sessions_in_memory() == 1);
}

TEST_CASE("stored sessions: one whose read from the store ends after the shutdown began is not made, and its prompt gets ShuttingDown",
          "[engine][store][on-demand]") {
  TempDir dir{"on-demand"};
  std::string session;
  {
    StoredEngineRun run(dir.path());
    session = create(run, "cold");
  }
  CountedLoads* persistence = nullptr;
  StoredEngineRun run(dir.path(), {}, counted(persistence));
  persistence->hold = true;

  // The prompt arrives just before the shutdown; the store answers its read only after the shutdown began.
  std::optional<engine::Outcome<p::SessionSendResult>> sent;
  p::SessionSendParams params;
  params.session_id = session;
  params.text = "too late";
  params.wait = false;
  run.engine->send(params, [&](auto outcome) { sent = std::move(outcome); });
  run.settle();
  REQUIRE(persistence->held.size() == 1);
  bool stopped = false;
  run.engine->shut_down(std::chrono::seconds(5), [&] { stopped = true; });
  for (auto& answer : std::exchange(persistence->held, {})) answer();
  run.settle();

  REQUIRE(sent);
  REQUIRE(std::holds_alternative<engine::EngineError>(*sent));
  CHECK(std::get<engine::EngineError>(*sent).code == p::ErrorCode::ShuttingDown);
  CHECK(run.engine->sessions_in_memory() == 0);
  CHECK(run.control->start_options.empty());  // no agent started that the shutdown would not wait for
  CHECK(stopped);

  // A call for a session not in memory after the shutdown began is not read at all.
  std::optional<engine::Outcome<p::SessionInfo>> renamed;
  run.engine->rename(session, "renamed", [&](auto outcome) { renamed = std::move(outcome); });
  run.settle();
  REQUIRE(renamed);
  REQUIRE(std::holds_alternative<engine::EngineError>(*renamed));
  CHECK(std::get<engine::EngineError>(*renamed).code == p::ErrorCode::ShuttingDown);
  CHECK(persistence->loads == 1);
}

TEST_CASE("stored sessions: a session restored under an id already in memory is a bug that leaves the live one alone",
          "[engine][store][on-demand]") {
  TempDir dir{"on-demand"};
  StoredEngineRun run(dir.path());
  const auto session = create(run, "live");
  std::vector<std::string> bugs;
  const auto previous = switchboard::set_bug_handler([&](std::string_view what) { bugs.emplace_back(what); });
  engine::PersistedState state;
  engine::StoredSession again;
  again.info.session_id = session;
  again.info.agent = "scripted";
  again.info.cwd = run.cwd;
  again.info.title = "a second one";
  state.sessions.push_back(again);
  run.engine->restore(std::move(state));
  switchboard::set_bug_handler(previous);

  REQUIRE(bugs.size() == 1);
  CHECK(bugs[0].find(session) != std::string::npos);
  CHECK(run.engine->sessions_in_memory() == 1);
  const auto attached = testing::attach(*run.engine, run.io, session);
  REQUIRE(std::holds_alternative<p::SessionAttachResult>(attached));
  CHECK(std::get<p::SessionAttachResult>(attached).session.title == std::optional<std::string>("live"));
}

TEST_CASE("stored sessions: a restart over many stored sessions makes only the one that owes a prompt",
          "[engine][store][on-demand]") {
  TempDir dir{"on-demand"};
  std::vector<std::string> sessions;
  std::string owing;
  {
    StoredEngineRun run(dir.path());
    for (int i = 0; i < 60; ++i) sessions.push_back(create(run, "session " + std::to_string(i)));
    owing = sessions[7];
    // A turn that never ends: the daemon goes away with its prompt outstanding.
    run.control->turns.push_back({testing::ScriptedAdapter::Hold{}});
    p::SessionSendParams params;
    params.session_id = owing;
    params.text = "cut off";
    params.wait = false;
    run.engine->send(params, [](auto) {});
    run.settle();
  }
  StoredEngineRun run(dir.path());
  CHECK(run.engine->sessions_in_memory() == 1);
  const auto attached = testing::attach(*run.engine, run.io, owing);
  REQUIRE(std::holds_alternative<p::SessionAttachResult>(attached));
  CHECK(std::get<p::SessionAttachResult>(attached).session.state == p::SessionState::Interrupted);
  CHECK(run.engine->sessions_in_memory() == 1);

  p::SessionListParams params;
  params.limit = 50;
  const auto first = testing::listed(*run.engine, run.io, params);
  CHECK(first.sessions.size() == 50);
  REQUIRE(first.next_cursor);
  params.cursor = first.next_cursor;
  const auto second = testing::listed(*run.engine, run.io, params);
  CHECK(second.sessions.size() == 10);
  CHECK_FALSE(second.next_cursor);
  std::vector<std::string> listed;
  std::int64_t previous = INT64_MAX;
  for (const auto* page : {&first, &second}) {
    for (const auto& info : page->sessions) {
      CHECK(info.created_at <= previous);  // newest first
      previous = info.created_at;
      listed.push_back(info.session_id);
    }
  }
  std::sort(listed.begin(), listed.end());
  std::sort(sessions.begin(), sessions.end());
  CHECK(listed == sessions);  // each once
  CHECK(run.engine->sessions_in_memory() == 1);  // listing made none

  const auto unknown = send(run, "s-never", "hello");
  REQUIRE(std::holds_alternative<engine::EngineError>(unknown));
  CHECK(std::get<engine::EngineError>(unknown).code == p::ErrorCode::UnknownSession);
}

}  // namespace stored_sessions_on_demand_tests
