#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/EngineCalls.h"
#include "support/Settle.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"

namespace session_list_tests {

using namespace switchboard;
namespace p = protocol;

// Where the listed sessions live: in the engine's memory (an engine without persistence), in the store only (a
// daemon started over them: session.list pages through the store), or in the store with every third session
// also in memory (made by a call), whose info then comes from the Session.
enum class Backend { Memory, Store, StoreSomeInMemory };

// An engine holding the given sessions, as after a restart (no agent needed to list them).
struct ListFixture {
  testing::TempDir dir{"session-list"};
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::unique_ptr<store::Store> store;
  std::unique_ptr<daemon::StoredSessions> persistence;
  std::unique_ptr<engine::Engine> engine;

  explicit ListFixture(std::vector<p::SessionInfo> sessions, Backend backend = Backend::Memory) {
    engine::PersistedState state;
    if (backend == Backend::Memory) {
      for (auto& info : sessions) state.sessions.push_back(engine::StoredSession{std::move(info), {}});
    } else {
      auto opened = store::Store::open(io, dir.path() / "switchboard.db");
      REQUIRE(opened.has_value());
      store = std::move(*opened);
      persistence = std::make_unique<daemon::StoredSessions>(*store);
      std::size_t stored = 0;
      for (const auto& info : sessions) {
        persistence->insert_session(engine::StoredSession{info, {}}, std::nullopt, [&](std::optional<engine::EngineError> error) {
          CHECK_FALSE(error);
          ++stored;
        });
      }
      for (int i = 0; i < 5000 && stored < sessions.size(); ++i) testing::settle(io, 1);
      REQUIRE(stored == sessions.size());
      auto loaded = daemon::StoredSessions::load(io, *store);
      REQUIRE(loaded.has_value());
      state = std::move(*loaded);
    }
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{}, engine::EngineConfig{},
                                              persistence.get());
    engine->restore(std::move(state));
    if (backend == Backend::Store) REQUIRE(engine->sessions_in_memory() == 0);
    if (backend == Backend::StoreSomeInMemory) {
      for (std::size_t i = 0; i < sessions.size(); i += 3) {
        REQUIRE(std::holds_alternative<p::SessionAttachResult>(testing::attach(*engine, io, sessions[i].session_id)));
      }
      REQUIRE(engine->sessions_in_memory() == (sessions.size() + 2) / 3);
    }
  }
  ListFixture(const ListFixture&) = delete;
  ListFixture& operator=(const ListFixture&) = delete;
  ~ListFixture() {
    testing::settle(io, 5);
    engine.reset();
    if (store) store->close();
  }

  p::SessionListResult list(const p::SessionListParams& params) { return testing::listed(*engine, io, params); }

  // Every page, in order, with `params` (limit included); each page's ids.
  std::vector<std::vector<std::string>> pages(p::SessionListParams params) {
    std::vector<std::vector<std::string>> out;
    for (;;) {
      const auto result = list(params);
      out.emplace_back();
      for (const auto& s : result.sessions) out.back().push_back(s.session_id);
      if (!result.next_cursor) return out;
      REQUIRE(out.size() < 1000);
      params.cursor = result.next_cursor;
    }
  }

  void remove(const std::string& id) {
    std::optional<std::optional<engine::EngineError>> removed;
    engine->delete_session(id, [&](std::optional<engine::EngineError> error) { removed = std::move(error); });
    for (int i = 0; i < 5000 && !removed; ++i) testing::settle(io, 1);
    REQUIRE(removed);
    REQUIRE_FALSE(*removed);
  }
};

p::SessionInfo session(std::string id, std::int64_t created_at, std::string agent = "claude", std::string cwd = "/w",
                       std::string title = "", bool archived = false) {
  p::SessionInfo info;
  info.session_id = std::move(id);
  info.agent = std::move(agent);
  info.cwd = std::move(cwd);
  if (!title.empty()) info.title = std::move(title);
  info.archived = archived;
  info.created_at = info.updated_at = created_at;
  return info;
}

// `count` sessions "s-<first_number + i>", created one millisecond apart from `first_created` on.
std::vector<p::SessionInfo> numbered_sessions(int count, int first_number, std::int64_t first_created) {
  std::vector<p::SessionInfo> sessions;
  for (int i = 0; i < count; ++i) sessions.push_back(session("s-" + std::to_string(first_number + i), first_created + i));
  return sessions;
}

// The order the rule states: newest first, the larger id first among sessions created in the same millisecond.
std::vector<std::string> expected_order(std::vector<p::SessionInfo> sessions) {
  std::sort(sessions.begin(), sessions.end(), [](const auto& a, const auto& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : a.session_id > b.session_id;
  });
  std::vector<std::string> ids;
  for (const auto& s : sessions) ids.push_back(s.session_id);
  return ids;
}

std::vector<std::string> flat(const std::vector<std::vector<std::string>>& pages) {
  std::vector<std::string> ids;
  for (const auto& page : pages) ids.insert(ids.end(), page.begin(), page.end());
  return ids;
}

TEST_CASE("session.list pages through every session once, newest first, ties by id, whatever the page size",
          "[engine][session-list]") {
  std::vector<p::SessionInfo> sessions;
  for (int i = 0; i < 37; ++i) sessions.push_back(session("s-" + std::to_string(100 + (i * 7) % 37), 1000 + i / 3));
  const auto backend = GENERATE(Backend::Memory, Backend::Store, Backend::StoreSomeInMemory);
  ListFixture f(sessions, backend);
  const auto expected = expected_order(sessions);
  for (const std::int64_t limit : {1, 5, 36, 37, 50}) {
    CAPTURE(limit);
    p::SessionListParams params;
    params.limit = limit;
    const auto pages = f.pages(params);
    CHECK(flat(pages) == expected);
    for (std::size_t i = 0; i + 1 < pages.size(); ++i) CHECK(pages[i].size() == static_cast<std::size_t>(limit));
    CHECK(!pages.back().empty());  // no empty last page: a cursor is given only when more sessions match
  }
}

TEST_CASE("session.list: a page after sessions deleted meanwhile goes on where the last one ended",
          "[engine][session-list]") {
  const auto sessions = numbered_sessions(12, 10, 5000);
  const auto backend = GENERATE(Backend::Memory, Backend::Store, Backend::StoreSomeInMemory);
  ListFixture f(sessions, backend);
  const auto expected = expected_order(sessions);
  p::SessionListParams params;
  params.limit = 4;
  const auto first = f.list(params);
  REQUIRE(first.next_cursor);
  // The session the cursor is after, and one not yet listed, go away before the next page is asked for.
  f.remove(expected[3]);
  f.remove(expected[5]);
  params.cursor = first.next_cursor;
  const auto second = f.list(params);
  std::vector<std::string> ids;
  for (const auto& s : second.sessions) ids.push_back(s.session_id);
  CHECK(ids == std::vector<std::string>{expected[4], expected[6], expected[7], expected[8]});
}

TEST_CASE("session.list filters by agent, directory, archived and text (title or directory, ASCII case ignored), "
          "and pages through the filtered list",
          "[engine][session-list]") {
  std::vector<p::SessionInfo> sessions;
  for (int i = 0; i < 30; ++i) {
    sessions.push_back(session("s-" + std::to_string(100 + i), 100 + i, i % 2 ? "codex" : "claude",
                               i % 3 ? "/src/app" : "/src/Fixtures", i % 5 ? "" : "Fix the LOGIN bug " + std::to_string(i),
                               i % 7 == 0));
  }
  const auto backend = GENERATE(Backend::Memory, Backend::Store, Backend::StoreSomeInMemory);
  ListFixture f(sessions, backend);
  const auto expect = [&](auto keep) {
    std::vector<p::SessionInfo> kept;
    std::copy_if(sessions.begin(), sessions.end(), std::back_inserter(kept), keep);
    return expected_order(kept);
  };
  p::SessionListParams params;
  params.limit = 2;
  SECTION("agent") {
    params.agent = "codex";
    CHECK(flat(f.pages(params)) == expect([](const auto& s) { return s.agent == "codex" && !s.archived; }));
  }
  SECTION("directory") {
    params.cwd = "/src/app";
    CHECK(flat(f.pages(params)) == expect([](const auto& s) { return s.cwd == "/src/app" && !s.archived; }));
  }
  SECTION("archived only") {
    params.archived = true;
    CHECK(flat(f.pages(params)) == expect([](const auto& s) { return s.archived; }));
  }
  SECTION("text in the title or the directory") {
    params.text = "fix";
    CHECK(flat(f.pages(params)) == expect([](const auto& s) {
      return !s.archived && (s.title.value_or("").find("Fix") != std::string::npos || s.cwd == "/src/Fixtures");
    }));
    params.text = "login bug 1";
    CHECK(flat(f.pages(params)) == expect([](const auto& s) { return !s.archived && s.title.value_or("").find("LOGIN bug 1") != std::string::npos; }));
  }
  SECTION("all of them at once") {
    params.agent = "claude";
    params.text = "LOGIN";
    CHECK(flat(f.pages(params)) == expect([](const auto& s) {
      return s.agent == "claude" && !s.archived && !s.title.value_or("").empty();
    }));
  }
}

TEST_CASE("session.list still takes a bare session id as the cursor, as earlier versions gave", "[engine][session-list]") {
  const auto sessions = numbered_sessions(6, 0, 10);
  const auto backend = GENERATE(Backend::Memory, Backend::Store, Backend::StoreSomeInMemory);
  ListFixture f(sessions, backend);
  const auto expected = expected_order(sessions);
  p::SessionListParams params;
  params.cursor = expected[1];
  params.limit = 2;
  const auto page = f.list(params);
  REQUIRE(page.sessions.size() == 2);
  CHECK(page.sessions[0].session_id == expected[2]);
  CHECK(page.sessions[1].session_id == expected[3]);
  params.cursor = "s-gone";
  CHECK(f.list(params).sessions.empty());
}

TEST_CASE("session.list: stored sessions a call makes keep their place and show the change, and the rest stay listed",
          "[engine][session-list]") {
  // Stored sessions stay in the store until a call needs the session: session.get reads the row without making a
  // Session, a rename makes one, attach another; the list shows each where it was, with its change.
  const auto sessions = numbered_sessions(9, 20, 700);
  ListFixture f(sessions, Backend::Store);
  const auto expected = expected_order(sessions);

  const auto before = std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, expected[4]));
  CHECK(before.session_id == expected[4]);
  CHECK_FALSE(before.live);
  CHECK(before.state == p::SessionState::Idle);
  CHECK(f.engine->sessions_in_memory() == 0);

  const auto renamed = testing::awaited<p::SessionInfo>(f.io, [&](auto done) { f.engine->rename(expected[4], "woken", done); });
  REQUIRE(std::holds_alternative<p::SessionInfo>(renamed));
  CHECK(std::get<p::SessionInfo>(renamed).title == std::optional<std::string>("woken"));
  CHECK(f.engine->sessions_in_memory() == 1);

  const auto attached = std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, expected[6]));
  CHECK(attached.session.session_id == expected[6]);
  CHECK(attached.queue.empty());
  CHECK_FALSE(attached.interrupted);
  CHECK(f.engine->sessions_in_memory() == 2);

  f.remove(expected[0]);  // one never in memory goes (it is made for the deletion, as any call makes it)
  CHECK(f.engine->sessions_in_memory() == 2);
  p::SessionListParams params;
  params.limit = 3;
  const auto pages = f.pages(params);
  std::vector<std::string> rest(expected.begin() + 1, expected.end());
  CHECK(flat(pages) == rest);
  p::SessionListParams all;
  all.limit = 50;
  for (const auto& listed : f.list(all).sessions) {
    CAPTURE(listed.session_id);
    CHECK(listed.title == (listed.session_id == expected[4] ? std::optional<std::string>("woken") : std::nullopt));
  }
  const auto gone = testing::get_session(*f.engine, f.io, expected[0]);
  REQUIRE(std::holds_alternative<engine::EngineError>(gone));
  CHECK(std::get<engine::EngineError>(gone).code == p::ErrorCode::UnknownSession);
}

}  // namespace session_list_tests
