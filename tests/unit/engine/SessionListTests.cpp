#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/Engine.h"
#include "switchboard/bus/EventBus.h"

namespace session_list_tests {

using namespace switchboard;
namespace p = protocol;

// An engine holding the given sessions, as after a restart (no agent needed to list them).
struct ListFixture {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::unique_ptr<engine::Engine> engine;

  explicit ListFixture(std::vector<p::SessionInfo> sessions) {
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{}, engine::EngineConfig{});
    engine::PersistedState state;
    for (auto& info : sessions) state.sessions.push_back(engine::StoredSession{std::move(info), {}});
    engine->restore(std::move(state));
  }

  // Every page, in order, with `params` (limit included); each page's ids.
  std::vector<std::vector<std::string>> pages(p::SessionListParams params) const {
    std::vector<std::vector<std::string>> out;
    for (;;) {
      const auto result = engine->list_sessions(params);
      out.emplace_back();
      for (const auto& s : result.sessions) out.back().push_back(s.session_id);
      if (!result.next_cursor) return out;
      REQUIRE(out.size() < 1000);
      params.cursor = result.next_cursor;
    }
  }

  void remove(const std::string& id) {
    bool done = false;
    engine->delete_session(id, [&](std::optional<engine::EngineError> error) { done = !error; });
    io.run();
    io.restart();
    REQUIRE(done);
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
  ListFixture f(sessions);
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
  ListFixture f(sessions);
  const auto expected = expected_order(sessions);
  p::SessionListParams params;
  params.limit = 4;
  const auto first = f.engine->list_sessions(params);
  REQUIRE(first.next_cursor);
  // The session the cursor is after, and one not yet listed, go away before the next page is asked for.
  f.remove(expected[3]);
  f.remove(expected[5]);
  params.cursor = first.next_cursor;
  const auto second = f.engine->list_sessions(params);
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
  ListFixture f(sessions);
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
  ListFixture f(sessions);
  const auto expected = expected_order(sessions);
  p::SessionListParams params;
  params.cursor = expected[1];
  params.limit = 2;
  const auto page = f.engine->list_sessions(params);
  REQUIRE(page.sessions.size() == 2);
  CHECK(page.sessions[0].session_id == expected[2]);
  CHECK(page.sessions[1].session_id == expected[3]);
  params.cursor = "s-gone";
  CHECK(f.engine->list_sessions(params).sessions.empty());
}

TEST_CASE("session.list: restored sessions a call wakes keep their place and show the change, and the rest stay listed",
          "[engine][session-list]") {
  // Restored sessions stay dormant (their stored info only) until a call needs the session: a rename wakes one,
  // session.get and attach see the same info before and after, and the list shows it where it was.
  const auto sessions = numbered_sessions(9, 20, 700);
  ListFixture f(sessions);
  const auto expected = expected_order(sessions);

  const auto before = std::get<p::SessionInfo>(f.engine->get_session(expected[4]));
  CHECK(before.session_id == expected[4]);
  CHECK_FALSE(before.live);
  CHECK(before.state == p::SessionState::Idle);

  std::optional<engine::Outcome<p::SessionInfo>> renamed;
  f.engine->rename(expected[4], "woken", [&](auto outcome) { renamed = std::move(outcome); });
  f.io.run();
  f.io.restart();
  REQUIRE(renamed);
  REQUIRE(std::holds_alternative<p::SessionInfo>(*renamed));
  CHECK(std::get<p::SessionInfo>(*renamed).title == std::optional<std::string>("woken"));

  const auto attached = std::get<p::SessionAttachResult>(f.engine->attach(expected[6]));  // wakes a second one
  CHECK(attached.session.session_id == expected[6]);
  CHECK(attached.queue.empty());
  CHECK_FALSE(attached.interrupted);

  f.remove(expected[0]);  // a dormant one goes, never woken by anything else
  p::SessionListParams params;
  params.limit = 3;
  const auto pages = f.pages(params);
  std::vector<std::string> rest(expected.begin() + 1, expected.end());
  CHECK(flat(pages) == rest);
  p::SessionListParams all;
  all.limit = 50;
  for (const auto& listed : f.engine->list_sessions(all).sessions) {
    CAPTURE(listed.session_id);
    CHECK(listed.title == (listed.session_id == expected[4] ? std::optional<std::string>("woken") : std::nullopt));
  }
  CHECK(std::holds_alternative<engine::EngineError>(f.engine->get_session(expected[0])));
}

}  // namespace session_list_tests
