#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "store/Migrations.h"
#include "store/SearchIndex.h"
#include "store/Store.h"
#include "support/StoreTestSupport.h"

// The event log's full-text index (store/SearchIndex.h): built for an older data directory by its migration,
// kept by commits, left by deleted sessions and by retention.

namespace store_search_tests {

using namespace switchboard::store;
using switchboard::testing::await_store;
using switchboard::testing::migrate_to_version;
using switchboard::testing::StoreTempDir;
using Json = nlohmann::json;

// An egress-shaped event row as an earlier version stored it.
void insert_event(SQLite::Database& db, std::int64_t seq, const std::string& session, const std::string& type, Json data) {
  const std::string turn = data.value("turnId", "");
  const Json event = {{"seq", seq}, {"type", type}, {"ts", 1'700'000'000'000 + seq}, {"sessionId", session}, {"data", std::move(data)}};
  SQLite::Statement insert(db, "INSERT INTO events(seq, session_id, type, json, turn_id) VALUES (?, ?, ?, ?, ?)");
  insert.bind(1, seq);
  insert.bind(2, session);
  insert.bind(3, type);
  insert.bind(4, event.dump());
  insert.bind(5, turn);
  insert.exec();
}

void insert_session(SQLite::Database& db, const std::string& id, const std::string& agent, const std::string& cwd) {
  SQLite::Statement insert(db, "INSERT INTO sessions(id, agent, cwd, created_at, updated_at) VALUES (?, ?, ?, 1, 1)");
  insert.bind(1, id);
  insert.bind(2, agent);
  insert.bind(3, cwd);
  insert.exec();
}

SearchPage search(boost::asio::io_context& io, Store& store, SearchQuery query) {
  auto page = await_store<SearchPage>(io, [&](auto done) { store.events().search(query, done); });
  REQUIRE(page);
  return *page;
}

SearchQuery words(std::string text) {
  SearchQuery query;
  query.text = std::move(text);
  return query;
}

TEST_CASE("store search: a data directory from before the index gains it on start, every session findable", "[store][search]") {
  StoreTempDir dir;
  // Schema version 6 made the index; later migrations must keep what it built.
  constexpr int before_index = 5;
  {
    // The file as the previous version left it: its own migrations only, and rows written by hand.
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to_version(db, before_index);
    insert_session(db, "s-a", "claude", "/work/a");
    insert_session(db, "s-b", "codex", "/work/b");
    insert_event(db, 1, "s-a", "turn.started", {{"turnId", "t-1"}, {"text", "fix the login bug"}});
    insert_event(db, 2, "s-a", "tool.started",
                 {{"turnId", "t-1"}, {"toolCallId", "c"}, {"tool", "Bash"}, {"input", {{"command", "grep -r sessiontoken src"}}}});
    insert_event(db, 3, "s-a", "tool.completed", {{"turnId", "t-1"}, {"toolCallId", "c"}, {"output", "src/auth.cpp: expired"}, {"isError", false}});
    insert_event(db, 4, "s-a", "message.delta", {{"turnId", "t-1"}, {"messageId", "m"}, {"kind", "text"}, {"text", "deltaonly"}});
    insert_event(db, 5, "s-a", "message.completed",
                 {{"turnId", "t-1"}, {"messageId", "m"}, {"role", "assistant"}, {"kind", "text"}, {"text", "The login bug is fixed"}});
    insert_event(db, 6, "s-b", "turn.started", {{"turnId", "t-9"}, {"text", "login page looks résumé wrong"}});
    insert_event(db, 7, "s-gone", "turn.started", {{"turnId", "t-0"}, {"text", "login from a deleted session"}});
  }
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE(store);
  CHECK((*store)->info().migrated_from == before_index);

  const auto login = search(io, **store, words("login"));
  std::vector<std::uint64_t> seqs;
  for (const auto& hit : login.hits) seqs.push_back(hit.seq);
  std::sort(seqs.begin(), seqs.end());
  CHECK(seqs == std::vector<std::uint64_t>{1, 5, 6});  // not the deleted session's event
  const auto output = search(io, **store, words("expired"));
  REQUIRE(output.hits.size() == 1);
  CHECK(output.hits[0].session_id == "s-a");
  CHECK(output.hits[0].turn_id == "t-1");
  CHECK(output.hits[0].type == "tool.completed");
  CHECK(output.hits[0].snippet == "src/auth.cpp: «expired»");
  const auto input = search(io, **store, words("sessiontoken"));
  REQUIRE(input.hits.size() == 1);
  CHECK(input.hits[0].seq == 2);
  CHECK(search(io, **store, words("deltaonly")).hits.empty());  // deltas are not indexed
  CHECK(search(io, **store, words("resume")).hits.size() == 1);  // accents do not matter

  SearchQuery codex = words("login");
  codex.agent = "codex";
  REQUIRE(search(io, **store, codex).hits.size() == 1);
  CHECK(search(io, **store, codex).hits[0].session_id == "s-b");
  SearchQuery in_a = words("login");
  in_a.cwd = "/work/a";
  CHECK(search(io, **store, in_a).hits.size() == 2);
  SearchQuery recent = words("login");
  recent.since = 1'700'000'000'000 + 6;
  CHECK(search(io, **store, recent).hits.size() == 1);

  REQUIRE(await_store<void>(io, [&](auto done) { (*store)->sessions().delete_session("s-a", done); }));
  CHECK(search(io, **store, words("expired")).hits.empty());
  CHECK(search(io, **store, words("login")).hits.size() == 1);
  (*store)->close();
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM event_search").getInt() == 1);  // the deleted session's rows are gone
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 7);        // and no event was lost
}

TEST_CASE("store search: committed events are indexed once, and retention takes their rows with them", "[store][search]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreOptions options;
  options.event_log.max_events = 3;
  auto store = Store::open(io, dir.db(), options);
  REQUIRE(store);
  SessionRecord session;
  session.id = "s-1";
  session.agent = "claude";
  session.cwd = "/w";
  REQUIRE(await_store<SessionRecord>(io, [&](auto done) { (*store)->sessions().insert_session(session, done); }));
  auto& log = (*store)->events();
  const auto base = log.last_seq();
  for (std::uint64_t i = 1; i <= 6; ++i) {
    log.on_event(switchboard::testing::make_store_event(base + i, "s-1", switchboard::protocol::EventKind::MessageCompleted, "t-1",
                                                        "albatross number" + std::to_string(i)));
  }
  REQUIRE(await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); }));
  // Retention trims after the commit, in the background: wait until the oldest are gone from the index too.
  std::size_t hits = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    SearchQuery query = words("albatross");
    hits = search(io, **store, query).hits.size();
    if (hits <= 3) break;
    io.run_for(std::chrono::milliseconds(10));
  }
  CHECK(hits == 3);
  CHECK(search(io, **store, words("number1")).hits.empty());
  CHECK(search(io, **store, words("number6")).hits.size() == 1);
}

TEST_CASE("store search: the user's words become an FTS5 expression that cannot fail", "[store][search]") {
  CHECK(fts_match_expression("login bug") == std::optional<std::string>("\"login\" \"bug\""));
  CHECK(fts_match_expression("  log*  ") == std::optional<std::string>("\"log\"*"));
  CHECK(fts_match_expression("say \"hi\"") == std::optional<std::string>("\"say\" \"\"\"hi\"\"\""));
  CHECK(fts_match_expression("*") == std::optional<std::string>("\"*\""));
  CHECK_FALSE(fts_match_expression(" \t\n"));
}

TEST_CASE("store search: pages follow each other without repeats, and say when more follow", "[store][search]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE(store);
  SessionRecord session;
  session.id = "s-1";
  session.agent = "claude";
  session.cwd = "/w";
  REQUIRE(await_store<SessionRecord>(io, [&](auto done) { (*store)->sessions().insert_session(session, done); }));
  auto& log = (*store)->events();
  const auto base = log.last_seq();
  for (std::uint64_t i = 1; i <= 5; ++i) {
    log.on_event(switchboard::testing::make_store_event(base + i, "s-1", switchboard::protocol::EventKind::MessageCompleted, "t-1", "heron"));
  }
  REQUIRE(await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); }));
  SearchQuery query = words("heron");
  query.limit = 3;
  const auto first = search(io, **store, query);
  CHECK(first.hits.size() == 3);
  CHECK(first.more);
  query.offset = 3;
  const auto second = search(io, **store, query);
  CHECK(second.hits.size() == 2);
  CHECK_FALSE(second.more);
  std::set<std::uint64_t> seqs;
  for (const auto* page : {&first, &second}) {
    for (const auto& hit : page->hits) seqs.insert(hit.seq);
  }
  CHECK(seqs.size() == 5);
}

}  // namespace store_search_tests
