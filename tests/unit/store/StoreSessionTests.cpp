#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <boost/asio/io_context.hpp>

#include "store/Migrations.h"
#include "store/SessionListSql.h"
#include "store/Store.h"
#include "support/StoreTestSupport.h"

namespace store_session_tests {

using namespace switchboard::store;
using switchboard::testing::await_store;
using switchboard::testing::migrate_to_version;
using switchboard::testing::StoreTempDir;

struct Fixture {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  std::unique_ptr<Store> store;

  Fixture() {
    auto opened = Store::open(io, dir.db());
    REQUIRE(opened);
    store = std::move(*opened);
  }

  SessionStore& sessions() { return store->sessions(); }

  StoreResult<SessionRecord> insert(SessionRecord session) {
    return await_store<SessionRecord>(io, [&](auto done) { sessions().insert_session(session, done); });
  }
  StoreResult<SessionPage> list(SessionQuery query) {
    return await_store<SessionPage>(io, [&](auto done) { sessions().list_sessions(query, done); });
  }
  // Every id the query returns, following the cursor page by page.
  std::vector<std::string> list_all(SessionQuery query) {
    std::vector<std::string> ids;
    for (int pages = 0; pages < 1000; ++pages) {
      auto page = list(query);
      REQUIRE(page);
      for (const auto& session : page->sessions) ids.push_back(session.id);
      if (!page->next) break;
      // Through the wire form, as a client would send it back.
      query.after = SessionCursor::decode(page->next->encode());
      REQUIRE(query.after);
    }
    return ids;
  }
};

SessionRecord session(std::string id, std::int64_t created_at, std::string agent = "claude", std::string cwd = "/w") {
  SessionRecord record;
  record.id = std::move(id);
  record.agent = std::move(agent);
  record.cwd = std::move(cwd);
  record.created_at = created_at;
  record.updated_at = created_at;
  return record;
}

TEST_CASE("store: session insert, get, update, delete", "[store]") {
  Fixture f;
  auto record = session("s-1", 1000);
  record.title = "first";
  record.model = "opus";
  record.mode = "plan";
  record.state = "idle";
  REQUIRE(f.insert(record));

  auto duplicate = f.insert(session("s-1", 2000));
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.error().code == StoreError::Code::Conflict);
  CHECK_THAT(duplicate.error().message, Catch::Contains("s-1 exists already"));

  auto got = await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().get_session("s-1", done); });
  REQUIRE(got);
  CHECK(got->title == "first");
  CHECK(got->model == "opus");
  CHECK(got->mode == "plan");
  CHECK(got->state == "idle");
  CHECK(got->created_at == 1000);
  CHECK_FALSE(got->archived);

  SessionUpdate update;
  update.title = "renamed";
  update.archived = true;
  update.updated_at = 5000;
  auto updated = await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().update_session("s-1", update, done); });
  REQUIRE(updated);
  CHECK(updated->title == "renamed");
  CHECK(updated->archived);
  CHECK(updated->model == "opus");  // untouched fields keep their value
  CHECK(updated->updated_at == 5000);
  CHECK(updated->created_at == 1000);

  SessionUpdate stamp_only;
  stamp_only.state = "";  // an explicit empty value is a change, not "absent"
  auto stamped =
      await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().update_session("s-1", stamp_only, done); });
  REQUIRE(stamped);
  CHECK(stamped->state.empty());
  CHECK(stamped->updated_at > 5000);  // defaults to now

  auto missing =
      await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().update_session("nope", update, done); });
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == StoreError::Code::NotFound);

  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-1", done); }));
  auto gone = await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().get_session("s-1", done); });
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == StoreError::Code::NotFound);
  auto again = await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-1", done); });
  REQUIRE_FALSE(again);
  CHECK(again.error().code == StoreError::Code::NotFound);
}

TEST_CASE("store: session list is newest first, paged by cursor, filtered", "[store]") {
  Fixture f;
  // 25 sessions; several share a creation time, so the id breaks ties and the cursor must carry it.
  for (int i = 0; i < 25; ++i) {
    auto record = session("s-" + std::to_string(100 + i), 1000 + i / 3, i % 2 == 0 ? "claude" : "codex",
                          i % 5 == 0 ? "/a" : "/b");
    record.archived = i % 4 == 0;
    REQUIRE(f.insert(record));
  }
  std::vector<std::string> expected;
  for (int i = 24; i >= 0; --i) expected.push_back("s-" + std::to_string(100 + i));

  SessionQuery everything;
  everything.limit = 7;
  CHECK(f.list_all(everything) == expected);

  auto first = f.list(everything);
  REQUIRE(first);
  CHECK(first->sessions.size() == 7);
  CHECK(first->next);

  SessionQuery one_page;
  one_page.limit = 25;
  auto whole = f.list(one_page);
  REQUIRE(whole);
  CHECK(whole->sessions.size() == 25);
  CHECK_FALSE(whole->next);  // exactly full: no empty page after it

  SessionQuery codex_in_b;
  codex_in_b.agent = "codex";
  codex_in_b.cwd = "/b";
  codex_in_b.limit = 2;
  std::vector<std::string> expected_filtered;
  for (int i = 24; i >= 0; --i) {
    if (i % 2 == 1 && i % 5 != 0) expected_filtered.push_back("s-" + std::to_string(100 + i));
  }
  CHECK(f.list_all(codex_in_b) == expected_filtered);

  SessionQuery archived;
  archived.archived = true;
  std::vector<std::string> expected_archived;
  for (int i = 24; i >= 0; --i) {
    if (i % 4 == 0) expected_archived.push_back("s-" + std::to_string(100 + i));
  }
  CHECK(f.list_all(archived) == expected_archived);

  // session.list's own shape: archived = 0 with an agent, a directory or both, two rows a page.
  for (const bool by_agent : {false, true}) {
    for (const bool by_cwd : {false, true}) {
      SessionQuery current;
      current.archived = false;
      if (by_agent) current.agent = "claude";
      if (by_cwd) current.cwd = "/a";
      current.limit = 2;
      std::vector<std::string> expected_current;
      for (int i = 24; i >= 0; --i) {
        if (i % 4 == 0 || (by_agent && i % 2 != 0) || (by_cwd && i % 5 != 0)) continue;
        expected_current.push_back("s-" + std::to_string(100 + i));
      }
      CAPTURE(by_agent, by_cwd);
      CHECK(f.list_all(current) == expected_current);
    }
  }

  CHECK_FALSE(SessionCursor::decode("garbage"));
  CHECK_FALSE(SessionCursor::decode(":id"));
  CHECK_FALSE(SessionCursor::decode("12x:id"));
  const auto with_colon = SessionCursor::decode("12:a:b");
  REQUIRE(with_colon);
  CHECK(with_colon->created_at == 12);
  CHECK(with_colon->id == "a:b");
}

TEST_CASE("store: session list filters by text in the title or the directory, ASCII letters of either case", "[store]") {
  Fixture f;
  auto titled = [](std::string id, std::int64_t created_at, std::string cwd, std::string title) {
    auto record = session(std::move(id), created_at, "claude", std::move(cwd));
    record.title = std::move(title);
    return record;
  };
  REQUIRE(f.insert(titled("s-1", 1, "/src/app", "Fix the LOGIN bug")));
  REQUIRE(f.insert(titled("s-2", 2, "/src/Login-service", "")));
  REQUIRE(f.insert(titled("s-3", 3, "/src/app", "Refactor the parser")));
  REQUIRE(f.insert(titled("s-4", 4, "/src/app", "login: 100%_done")));
  REQUIRE(f.insert(titled("s-5", 5, "/src/app", "Ünïcode LOGIN")));

  SessionQuery query;
  query.limit = 2;
  query.text = "login";
  CHECK(f.list_all(query) == std::vector<std::string>{"s-5", "s-4", "s-2", "s-1"});
  query.text = "PARSER";
  CHECK(f.list_all(query) == std::vector<std::string>{"s-3"});
  // Taken as text, never as a pattern.
  query.text = "100%_";
  CHECK(f.list_all(query) == std::vector<std::string>{"s-4"});
  query.text = "%";
  CHECK(f.list_all(query) == std::vector<std::string>{"s-4"});
  query.text = "nïC";  // letters beyond ASCII match only as written
  CHECK(f.list_all(query) == std::vector<std::string>{"s-5"});
  query.text = "NÏC";
  CHECK(f.list_all(query).empty());
  query.text = "nothing like it";
  CHECK(f.list_all(query).empty());
}

std::string list_index_of(const SessionQuery& query) {
  if (!query.archived) return "sessions_by_created";
  return query.cwd ? "sessions_by_cwd_archived" : query.agent ? "sessions_by_agent_archived" : "sessions_by_archived";
}

TEST_CASE("store: a page of the session list reads an index in list order from its cursor, whatever the filters",
          "[store][session-list]") {
  Fixture f;
  REQUIRE(f.insert(session("s-1", 1)));
  SQLite::Database db(f.dir.db().string(), SQLite::OPEN_READONLY);
  // Every combination of filters, with and without a cursor: SQLite's plan for the statement list_sessions runs.
  for (int filters = 0; filters < 32; ++filters) {
    SessionQuery query;
    if (filters & 1) query.agent = "claude";
    if (filters & 2) query.cwd = "/a";
    if (filters & 4) query.archived = false;
    if (filters & 8) query.text = "fix";
    if (filters & 16) query.after = SessionCursor{5, "s-5"};
    CAPTURE(filters);
    SQLite::Statement plan(db, "EXPLAIN QUERY PLAN " + session_list_sql(query));
    std::string steps;
    while (plan.executeStep()) steps += plan.getColumn(3).getString() + "\n";
    CAPTURE(steps);
    CHECK(steps.find("TEMP B-TREE") == std::string::npos);  // no sort: the rows come in list order
    if (query.archived) {
      // The filters' columns lead the index: the archived sessions are never read to be skipped.
      const std::string lead = query.cwd ? "sessions_by_cwd_archived (cwd=? AND archived=?"
                               : query.agent ? "sessions_by_agent_archived (agent=? AND archived=?"
                                             : "sessions_by_archived (archived=?";
      CHECK(steps.find("SEARCH sessions USING INDEX " + lead) != std::string::npos);
    } else {
      CHECK(steps.find("sessions_by_created") != std::string::npos);
    }
    // The page starts at the cursor in the index, not after reading the rows before it.
    if (query.after) CHECK(steps.find("(created_at,id)<(?,?)") != std::string::npos);
    if (!query.text) continue;
    REQUIRE(session_list_uses_text_index(query));  // "fix": three characters, one trigram
    // Where the capped walk stopped: the same index from the cursor, in order.
    SQLite::Statement end_plan(db, "EXPLAIN QUERY PLAN " + session_list_walk_end_sql(query));
    std::string end_steps;
    while (end_plan.executeStep()) end_steps += end_plan.getColumn(3).getString() + "\n";
    CAPTURE(end_steps);
    CHECK(end_steps.find("TEMP B-TREE") == std::string::npos);
    CHECK(end_steps.find(list_index_of(query)) != std::string::npos);
    if (query.after) CHECK(end_steps.find("(created_at,id)<(?,?)") != std::string::npos);
    // The rest of the page: the trigram index's matches in key order, each session read by its key; never a
    // walk of the list, never a sort of every match.
    SQLite::Statement match_plan(db, "EXPLAIN QUERY PLAN " + session_list_text_match_sql(query));
    std::string match_steps;
    while (match_plan.executeStep()) match_steps += match_plan.getColumn(3).getString() + "\n";
    CAPTURE(match_steps);
    CHECK(match_steps.find("SCAN session_text VIRTUAL TABLE") != std::string::npos);
    CHECK(match_steps.find("SEARCH sessions USING INDEX sessions_by_list_key (list_key=?)") != std::string::npos);
    CHECK(match_steps.find("SCAN sessions") == std::string::npos);
    CHECK(match_steps.find("TEMP B-TREE") == std::string::npos);
  }
}

std::string ascii_lowered(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

TEST_CASE("store: a text page through the trigram index is the plain filter's, for every filter, text and cursor",
          "[store][session-list]") {
  Fixture f;
  // More sessions than the capped walk reads, so pages fill from the walk, from the index, and from both.
  constexpr int kSessions = kSessionListTextWalk * 5;
  const std::vector<std::string> pieces = {"Fix", "the", "LOGIN", "login", "bug", "100%_done", "a\"b", "Ünïcode",
                                           "nïc", "_x", "e\"\"q", "Parser", "%"};
  const std::vector<std::string> cwds = {"/src/app", "/src/Login-service", "/w/%_x", "/home/ÜNÏ"};
  std::minstd_rand random(37);
  std::vector<SessionRecord> all;
  for (int i = 0; i < kSessions; ++i) {
    // Ties of created_at, so the cursor's id matters.
    auto record = session("s-" + std::to_string(i), i / 3, i % 2 == 0 ? "claude" : "codex", cwds[random() % cwds.size()]);
    const int words = static_cast<int>(random() % 4);
    for (int w = 0; w < words; ++w) record.title += (w ? " " : "") + pieces[random() % pieces.size()];
    if (i % 500 == 7) record.title += " rare-old";       // six sessions, five of them behind the walk
    if (i % 3 == 0) record.title += " every-third";       // a common text: pages fill across the cap
    record.archived = random() % 5 == 0;
    all.push_back(record);
  }
  {
    // One transaction through a second connection: the schema's triggers index them as any writer's rows.
    SQLite::Database db(f.dir.db().string(), SQLite::OPEN_READWRITE);
    SQLite::Transaction transaction(db);
    SQLite::Statement insert(db, "INSERT INTO sessions(id, agent, cwd, title, archived, created_at, updated_at) "
                                 "VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const auto& record : all) {
      insert.bind(1, record.id);
      insert.bind(2, record.agent);
      insert.bind(3, record.cwd);
      insert.bind(4, record.title);
      insert.bind(5, record.archived ? 1 : 0);
      insert.bind(6, record.created_at);
      insert.bind(7, record.updated_at);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  }
  // Changes after the index was built go into it too: a title changed, a session deleted.
  SessionUpdate renamed;
  renamed.title = "renamed rare-old";
  REQUIRE(await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().update_session("s-2", renamed, done); }));
  all[2].title = *renamed.title;
  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-7", done); }));
  all.erase(all.begin() + 7);

  const auto expected = [&](const SessionQuery& query) {
    std::vector<const SessionRecord*> rows;
    for (const auto& record : all) {
      if (query.agent && record.agent != *query.agent) continue;
      if (query.cwd && record.cwd != *query.cwd) continue;
      if (query.archived && record.archived != *query.archived) continue;
      const std::string text = ascii_lowered(*query.text);
      if (ascii_lowered(record.title).find(text) == std::string::npos &&
          ascii_lowered(record.cwd).find(text) == std::string::npos) {
        continue;
      }
      rows.push_back(&record);
    }
    std::sort(rows.begin(), rows.end(), [](const SessionRecord* a, const SessionRecord* b) {
      return std::tie(a->created_at, a->id) > std::tie(b->created_at, b->id);
    });
    std::vector<std::string> ids;
    for (const auto* row : rows) ids.push_back(row->id);
    return ids;
  };

  const std::vector<std::string> texts = {"login", "LOGIN", "Log", "lo", "%", "%_", "100%_", "a\"b", "\"", "e\"\"q",
                                          "nïc", "NÏC", "ünï", "Ü", "ÜNÏ", "_x", "rare-old", "RARE-OLD", "every-third",
                                          "EVERY-third", "/src/", "nothing like it", "fix the", "\"rare-old\"",
                                          "old OR fix", "rare*", "NEAR(a b)"};
  int compared = 0;
  for (const auto& text : texts) {
    for (int filters = 0; filters < 8; ++filters) {
      for (const std::size_t limit : {std::size_t{4}, std::size_t{50}}) {
        SessionQuery query;
        query.text = text;
        if (filters & 1) query.agent = "codex";
        if (filters & 2) query.cwd = "/src/app";
        if (filters & 4) query.archived = false;
        query.limit = limit;
        CAPTURE(text, filters, limit);
        const auto want = expected(query);
        CHECK(f.list_all(query) == want);
        ++compared;
      }
    }
  }
  CHECK(compared == static_cast<int>(texts.size()) * 8 * 2);
  // A cursor taken from anywhere (not only from a page): the page after it is the filter's rows after it.
  for (const auto& text : {std::string("rare-old"), std::string("every-third"), std::string("login")}) {
    for (const int at : {0, 100, kSessions / 2, kSessions - 40}) {
      SessionQuery query;
      query.text = text;
      query.archived = false;
      query.limit = 20;
      query.after = SessionCursor{all[static_cast<std::size_t>(at)].created_at, all[static_cast<std::size_t>(at)].id};
      std::vector<std::string> want;
      for (const auto& id : expected(query)) {
        const auto& row = *std::find_if(all.begin(), all.end(), [&](const SessionRecord& r) { return r.id == id; });
        if (std::tie(row.created_at, row.id) < std::tie(query.after->created_at, query.after->id)) want.push_back(id);
      }
      CAPTURE(text, at);
      CHECK(f.list_all(query) == want);
    }
  }
}

// Ids in list order (created_at, then id, newest first).
std::vector<std::string> in_list_order(std::vector<SessionRecord> records) {
  std::sort(records.begin(), records.end(), [](const SessionRecord& a, const SessionRecord& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  std::vector<std::string> ids;
  for (const auto& record : records) ids.push_back(record.id);
  return ids;
}

TEST_CASE("store: sessions created in the same millisecond page in list order through the trigram index",
          "[store][session-list]") {
  Fixture f;
  std::minstd_rand random(12);
  std::vector<SessionRecord> all;
  // Newest: a full capped walk without the text, so the text's pages come from the index.
  for (int i = 0; i < kSessionListTextWalk; ++i) all.push_back(session("new-" + std::to_string(i), 100000 + i));
  // Three hundred sessions of one millisecond, written in an order that is not their ids' (their keys follow the
  // order they were written in), every third holding the text; then older ones, one a millisecond.
  std::vector<std::string> tied_ids;
  for (int i = 0; i < 300; ++i) tied_ids.push_back("tie-" + std::to_string(random() % 100000) + "-" + std::to_string(i));
  for (std::size_t i = 0; i < tied_ids.size(); ++i) {
    auto record = session(tied_ids[i], 5000);
    if (i % 3 == 0) record.title = "tied MATCH " + std::to_string(i);
    all.push_back(record);
  }
  for (int i = 0; i < 300; ++i) {
    auto record = session("old-" + std::to_string(i), 1000 + i);
    if (i % 7 == 0) record.title = "old tied match";
    all.push_back(record);
  }
  std::shuffle(all.begin() + kSessionListTextWalk, all.end(), random);
  for (const auto& record : all) REQUIRE(f.insert(record));

  std::vector<SessionRecord> matching;
  for (const auto& record : all) {
    if (record.title.find("tied") != std::string::npos) matching.push_back(record);
  }
  const auto want = in_list_order(matching);
  REQUIRE(want.size() == 100 + 43);
  for (const std::size_t limit : {std::size_t{1}, std::size_t{4}, std::size_t{7}, std::size_t{50}, std::size_t{500}}) {
    SessionQuery query;
    query.text = "tied match";
    query.archived = false;
    query.limit = limit;
    CAPTURE(limit);
    CHECK(f.list_all(query) == want);
  }
  // A cursor in the middle of the millisecond: the rest of its sessions, then the older ones.
  SessionQuery query;
  query.text = "tied match";
  query.limit = 10;
  query.after = SessionCursor{5000, want[40]};
  CHECK(f.list_all(query) == std::vector<std::string>(want.begin() + 41, want.end()));
  // A walk that ends inside the millisecond (150 newer rows, then 100 of its): the index's part of the page starts
  // at that millisecond's highest key, since the sessions after the walk's end in list order were written in
  // another order and some hold higher keys than the end's.
  const auto& cursor = *std::find_if(all.begin(), all.end(), [](const SessionRecord& r) { return r.id == "new-150"; });
  query.after = SessionCursor{cursor.created_at, cursor.id};
  query.limit = 500;
  CHECK(f.list_all(query) == want);
}

TEST_CASE("store: a data directory with the trigram index keyed by rowid gains list keys on start, ties numbered by id",
          "[store][session-list]") {
  StoreTempDir dir;
  constexpr int before_keys = 11;  // schema version 12 keyed sessions in list order
  std::vector<SessionRecord> all;
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to_version(db, before_keys);
    SQLite::Transaction transaction(db);
    SQLite::Statement insert(db, "INSERT INTO sessions(id, agent, cwd, title, created_at, updated_at) "
                                 "VALUES (?, 'claude', '/w', ?, ?, ?)");
    for (int i = 0; i < kSessionListTextWalk * 2; ++i) {
      // Pairs share a millisecond, the later-written of each pair sorting first by id; a negative time too.
      auto record = session((i % 2 ? "a-" : "b-") + std::to_string(i), i == 0 ? -5 : i / 2);
      // Few enough that a page of 50 is filled from the index after the capped walk.
      record.title = i % 60 == 3 ? "Migrated Match" : "session " + std::to_string(i);
      insert.bind(1, record.id);
      insert.bind(2, record.title);
      insert.bind(3, record.created_at);
      insert.bind(4, record.updated_at);
      insert.exec();
      insert.reset();
      all.push_back(record);
    }
    transaction.commit();
  }
  boost::asio::io_context io{1};
  auto opened = Store::open(io, dir.db());
  REQUIRE(opened);
  CHECK((*opened)->info().migrated_from == before_keys);
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  // Every session has a key; keys are unique and of their millisecond; ties numbered in id order.
  CHECK(db.execAndGet("SELECT count(*) FROM sessions WHERE list_key IS NULL").getInt() == 0);
  CHECK(db.execAndGet("SELECT count(DISTINCT list_key) FROM sessions").getInt() == kSessionListTextWalk * 2);
  CHECK(db.execAndGet("SELECT count(*) FROM sessions WHERE list_key >> 20 != max(created_at, 0)").getInt() == 0);
  CHECK(db.execAndGet("SELECT list_key & 1048575 FROM sessions WHERE id = 'a-1'").getInt() == 0);
  CHECK(db.execAndGet("SELECT list_key & 1048575 FROM sessions WHERE id = 'b-2'").getInt() == 1);
  std::vector<SessionRecord> matching;
  for (const auto& record : all) {
    if (record.title == "Migrated Match") matching.push_back(record);
  }
  SessionQuery query;
  query.archived = false;
  query.text = "migrated match";
  query.limit = 50;
  std::vector<std::string> found;
  for (;;) {
    auto page = await_store<SessionPage>(io, [&](auto done) { (*opened)->sessions().list_sessions(query, done); });
    REQUIRE(page);
    for (const auto& session : page->sessions) found.push_back(session.id);
    if (!page->next) break;
    query.after = page->next;
  }
  CHECK(found == in_list_order(matching));
}

TEST_CASE("store: a data directory from before the session text index gains it on start, every session findable",
          "[store][session-list]") {
  StoreTempDir dir;
  constexpr int before_index = 10;  // schema version 11 made session_text
  const int sessions = kSessionListTextWalk * 2;
  {
    // The file as the previous version left it: its own migrations only, and rows written by it.
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to_version(db, before_index);
    SQLite::Transaction transaction(db);
    SQLite::Statement insert(db, "INSERT INTO sessions(id, agent, cwd, title, created_at, updated_at) "
                                 "VALUES (?, 'claude', ?, ?, ?, ?)");
    for (int i = 0; i < sessions; ++i) {
      insert.bind(1, "s-" + std::to_string(i));
      insert.bind(2, i == 3 ? "/src/Old-Checkout" : "/w");
      insert.bind(3, i == 1 ? "the OLDEST login" : "session " + std::to_string(i));
      insert.bind(4, i);
      insert.bind(5, i);
      insert.exec();
      insert.reset();
    }
    transaction.commit();
  }
  boost::asio::io_context io{1};
  auto opened = Store::open(io, dir.db());
  REQUIRE(opened);
  CHECK((*opened)->info().migrated_from == before_index);
  const auto list = [&](std::string text) {
    SessionQuery query;
    query.archived = false;
    query.text = std::move(text);
    auto page = await_store<SessionPage>(io, [&](auto done) { (*opened)->sessions().list_sessions(query, done); });
    REQUIRE(page);
    std::vector<std::string> ids;
    for (const auto& session : page->sessions) ids.push_back(session.id);
    return ids;
  };
  // Both behind the capped walk: found through the index the migration built.
  CHECK(list("oldest LOGIN") == std::vector<std::string>{"s-1"});
  CHECK(list("old-checkout") == std::vector<std::string>{"s-3"});
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*) FROM session_text WHERE session_text MATCH '\"session\"'").getInt() ==
        sessions - 1);
}

TEST_CASE("store: indexing a commit's events for search reads them by seq, not through every session", "[store][search]") {
  Fixture f;
  REQUIRE(f.insert(session("s-1", 1)));
  // The query every event-log commit runs (SearchIndex.cpp, index_events), over the view it reads.
  SQLite::Database db(f.dir.db().string(), SQLite::OPEN_READONLY);
  SQLite::Statement plan(db, "EXPLAIN QUERY PLAN SELECT seq, text FROM event_search_source WHERE seq BETWEEN 10 AND 20 "
                             "AND text IS NOT NULL AND text != '' "
                             "AND seq NOT IN (SELECT rowid FROM event_search WHERE rowid BETWEEN 10 AND 20)");
  std::string steps;
  while (plan.executeStep()) steps += plan.getColumn(3).getString() + "\n";
  CAPTURE(steps);
  CHECK(steps.find("SEARCH events USING INTEGER PRIMARY KEY") != std::string::npos);
  CHECK(steps.find("events_by_session") == std::string::npos);  // one probe per stored session
}

TEST_CASE("store: runs bind a session to provider sessions", "[store]") {
  Fixture f;
  REQUIRE(f.insert(session("s-1", 1)));
  auto first = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().add_run("s-1", "prov-a", false, 10, done); });
  REQUIRE(first);
  CHECK(first->id > 0);
  CHECK_FALSE(first->ended_at);
  auto second = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().add_run("s-1", "prov-b", false, 20, done); });
  REQUIRE(second);
  auto ended = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().end_run(first->id, 15, done); });
  REQUIRE(ended);
  CHECK(ended->ended_at == 15);

  auto runs = await_store<std::vector<RunRecord>>(f.io, [&](auto done) { f.sessions().list_runs("s-1", done); });
  REQUIRE(runs);
  REQUIRE(runs->size() == 2);
  CHECK((*runs)[0].provider_session_id == "prov-a");
  CHECK((*runs)[0].ended_at == 15);
  CHECK((*runs)[1].provider_session_id == "prov-b");

  auto orphan = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().add_run("nope", "p", false, 1, done); });
  REQUIRE_FALSE(orphan);
  CHECK(orphan.error().code == StoreError::Code::NotFound);
  auto no_run = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().end_run(99999, 1, done); });
  REQUIRE_FALSE(no_run);
  CHECK(no_run.error().code == StoreError::Code::NotFound);

  // Deleting the session takes its runs with it.
  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-1", done); }));
  auto after = await_store<std::vector<RunRecord>>(f.io, [&](auto done) { f.sessions().list_runs("s-1", done); });
  REQUIRE(after);
  CHECK(after->empty());
}

TEST_CASE("store: turns are kept in order with their references, marked rewound, and go with their session", "[store]") {
  Fixture f;
  auto record = session("s-1", 1);
  record.mcp_servers = R"([{"name":"echo","transport":"stdio","command":"x"}])";
  record.forked_from = R"({"sessionId":"s-0"})";
  REQUIRE(f.insert(record));
  for (const TurnRow& turn : {TurnRow{"t-b", "ref-1", false}, TurnRow{"t-a", std::nullopt, false}, TurnRow{"t-c", "ref-3", false}}) {
    REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().add_turn("s-1", turn, done); }));
  }
  auto orphan = await_store<void>(f.io, [&](auto done) { f.sessions().add_turn("nope", TurnRow{"t-x", std::nullopt, false}, done); });
  REQUIRE_FALSE(orphan);
  CHECK(orphan.error().code == StoreError::Code::NotFound);
  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().mark_turns_rewound("s-1", {"t-a", "t-c", "t-unknown"}, done); }));
  auto turns = await_store<std::vector<TurnRow>>(f.io, [&](auto done) { f.sessions().list_turns("s-1", done); });
  REQUIRE(turns);
  REQUIRE(turns->size() == 3);
  CHECK((*turns)[0].turn_id == "t-b");  // the order they ended in, not their ids'
  CHECK((*turns)[0].native_ref == std::optional<std::string>("ref-1"));
  CHECK_FALSE((*turns)[0].rewound);
  CHECK((*turns)[1].turn_id == "t-a");
  CHECK_FALSE((*turns)[1].native_ref);
  CHECK((*turns)[1].rewound);
  CHECK((*turns)[2].rewound);

  // The session's JSON columns come back as written; update changes the ones it names.
  SessionUpdate update;
  update.plan = R"([{"content":"a","status":"pending"}])";
  update.option_values = R"({"effort":"high"})";
  auto updated = await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().update_session("s-1", update, done); });
  REQUIRE(updated);
  CHECK(updated->mcp_servers == record.mcp_servers);
  CHECK(updated->forked_from == record.forked_from);
  CHECK(updated->plan == *update.plan);
  CHECK(updated->option_values == *update.option_values);
  CHECK(updated->context_usage.empty());

  // A run can name the last turn a fork keeps.
  auto run = await_store<RunRecord>(f.io, [&](auto done) { f.sessions().add_run("s-1", "prov", true, std::string("ref-1"), 5, done); });
  REQUIRE(run);
  auto runs = await_store<std::vector<RunRecord>>(f.io, [&](auto done) { f.sessions().list_runs("s-1", done); });
  REQUIRE(runs);
  CHECK(runs->back().fork_through == std::optional<std::string>("ref-1"));

  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-1", done); }));
  auto after = await_store<std::vector<TurnRow>>(f.io, [&](auto done) { f.sessions().list_turns("s-1", done); });
  REQUIRE(after);
  CHECK(after->empty());
}

TEST_CASE("store: the session continuing a conversation is the one whose newest run names it, not as a fork to make", "[store]") {
  Fixture f;
  REQUIRE(f.insert(session("s-old", 1)));
  REQUIRE(f.insert(session("s-live", 2)));
  REQUIRE(f.insert(session("s-copy", 3)));
  REQUIRE(f.insert(session("s-codex", 4, "codex")));
  const auto run = [&](const std::string& id, const std::string& provider, bool fork) {
    REQUIRE(await_store<RunRecord>(f.io, [&](auto done) { f.sessions().add_run(id, provider, fork, 10, done); }));
  };
  const auto continuing = [&](const std::string& agent, const std::string& provider) {
    auto found = await_store<std::optional<std::string>>(
        f.io, [&](auto done) { f.sessions().find_continuing_session(agent, provider, done); });
    REQUIRE(found);
    return *found;
  };
  run("s-old", "conv-1", false);
  run("s-old", "conv-2", false);  // it went on in another conversation since
  run("s-copy", "conv-3", true);  // a fork of conv-3 still to make
  run("s-codex", "conv-3", false);
  CHECK(continuing("claude", "conv-1") == std::nullopt);
  CHECK(continuing("claude", "conv-2") == std::optional<std::string>("s-old"));
  CHECK(continuing("claude", "conv-3") == std::nullopt);  // another agent's session is no claude session
  CHECK(continuing("codex", "conv-3") == std::optional<std::string>("s-codex"));
  run("s-live", "conv-3", false);
  CHECK(continuing("claude", "conv-3") == std::optional<std::string>("s-live"));
  auto runs = await_store<std::vector<RunRecord>>(f.io, [&](auto done) { f.sessions().list_runs("s-copy", done); });
  REQUIRE(runs);
  REQUIRE(runs->size() == 1);
  CHECK((*runs)[0].fork);
  // Once the fork is made, its own id is the newest run.
  run("s-copy", "conv-4", false);
  CHECK(continuing("claude", "conv-4") == std::optional<std::string>("s-copy"));
}

TEST_CASE("store: interrupted turns are marked, replaced, listed and cleared", "[store]") {
  Fixture f;
  REQUIRE(f.insert(session("s-1", 1)));
  REQUIRE(f.insert(session("s-2", 2)));
  auto mark = [&](InterruptedTurn turn) {
    return await_store<void>(f.io, [&](auto done) { f.sessions().mark_interrupted(turn, done); });
  };
  auto list = [&] {
    auto turns =
        await_store<std::vector<InterruptedTurn>>(f.io, [&](auto done) { f.sessions().list_interrupted(done); });
    REQUIRE(turns);
    return *turns;
  };
  REQUIRE(mark({"s-2", "t-9", R"({"text":"two"})", 50}));
  REQUIRE(mark({"s-1", "t-1", R"({"text":"one"})", 100}));
  REQUIRE(mark({"s-1", "t-2", R"({"text":"one again"})", 200}));  // one per session: replaces t-1
  auto turns = list();
  REQUIRE(turns.size() == 2);
  CHECK(turns[0].session_id == "s-2");
  CHECK(turns[1].turn_id == "t-2");
  CHECK(turns[1].prompt_json == R"({"text":"one again"})");

  auto orphan = mark({"nope", "t", "{}", 1});
  REQUIRE_FALSE(orphan);
  CHECK(orphan.error().code == StoreError::Code::NotFound);

  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().clear_interrupted("s-2", done); }));
  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().clear_interrupted("s-2", done); }));  // idempotent
  CHECK(list().size() == 1);
  REQUIRE(await_store<void>(f.io, [&](auto done) { f.sessions().delete_session("s-1", done); }));
  CHECK(list().empty());  // cascaded
}

TEST_CASE("store: permission rules are added, listed by cwd and removed", "[store]") {
  Fixture f;
  RuleStore& rules = f.store->rules();
  auto add = [&](PermissionRule rule) {
    return await_store<PermissionRule>(f.io, [&](auto done) { rules.add_rule(rule, done); });
  };
  auto list = [&](std::optional<std::string> cwd) {
    std::vector<std::string> ids;
    auto listed = await_store<std::vector<PermissionRule>>(f.io, [&](auto done) { rules.list_rules(cwd, done); });
    REQUIRE(listed);
    for (const auto& rule : *listed) ids.push_back(rule.id);
    return ids;
  };
  REQUIRE(add({"r-1", RuleScope::Project, "/a", "Bash", "git status*", RuleDecision::Allow, 1}));
  REQUIRE(add({"r-2", RuleScope::Project, "/b", "Edit", std::nullopt, RuleDecision::Deny, 2}));
  auto always = add({"r-3", RuleScope::Always, "/ignored", "Read", std::nullopt, RuleDecision::Allow, 3});
  REQUIRE(always);
  CHECK_FALSE(always->cwd);  // an Always rule applies everywhere: its cwd is not kept

  auto duplicate = add({"r-1", RuleScope::Always, std::nullopt, "X", std::nullopt, RuleDecision::Allow, 4});
  REQUIRE_FALSE(duplicate);
  CHECK(duplicate.error().code == StoreError::Code::Conflict);
  auto homeless = add({"r-4", RuleScope::Project, std::nullopt, "X", std::nullopt, RuleDecision::Allow, 4});
  REQUIRE_FALSE(homeless);
  CHECK(homeless.error().code == StoreError::Code::Conflict);

  CHECK(list(std::nullopt) == std::vector<std::string>{"r-1", "r-2", "r-3"});
  CHECK(list("/a") == std::vector<std::string>{"r-1", "r-3"});
  CHECK(list("/elsewhere") == std::vector<std::string>{"r-3"});

  auto listed = await_store<std::vector<PermissionRule>>(f.io, [&](auto done) { rules.list_rules("/a", done); });
  REQUIRE(listed);
  const PermissionRule& first = (*listed)[0];
  CHECK(first.scope == RuleScope::Project);
  CHECK(first.cwd == "/a");
  CHECK(first.tool == "Bash");
  CHECK(first.pattern == "git status*");
  CHECK(first.decision == RuleDecision::Allow);
  CHECK(first.created_at == 1);
  CHECK((*listed)[1].decision == RuleDecision::Allow);

  REQUIRE(await_store<void>(f.io, [&](auto done) { rules.remove_rule("r-1", done); }));
  auto again = await_store<void>(f.io, [&](auto done) { rules.remove_rule("r-1", done); });
  REQUIRE_FALSE(again);
  CHECK(again.error().code == StoreError::Code::NotFound);
  CHECK(list(std::nullopt) == std::vector<std::string>{"r-2", "r-3"});
}

TEST_CASE("store: a session's last_seq follows its committed events", "[store]") {
  Fixture f;
  REQUIRE(f.insert(session("s-1", 1)));
  for (std::uint64_t seq = 1; seq <= 30; ++seq) {
    f.store->events().on_event(switchboard::testing::make_store_event(seq, seq % 2 ? "s-1" : "s-2"));
  }
  REQUIRE(await_store<std::uint64_t>(f.io, [&](auto done) { f.store->events().flush(done); }));
  auto got = await_store<SessionRecord>(f.io, [&](auto done) { f.sessions().get_session("s-1", done); });
  REQUIRE(got);
  CHECK(got->last_seq == 29);
}

TEST_CASE("store: callbacks run on the io_context thread, in submission order", "[store]") {
  Fixture f;
  const auto reactor = std::this_thread::get_id();
  std::vector<int> order;
  bool all_on_reactor = true;
  for (int i = 0; i < 50; ++i) {
    f.sessions().get_session("missing-" + std::to_string(i), [&, i](StoreResult<SessionRecord> r) {
      all_on_reactor = all_on_reactor && std::this_thread::get_id() == reactor && !r;
      order.push_back(i);
    });
  }
  CHECK(order.empty());  // never inline
  REQUIRE(switchboard::testing::run_handlers_until(f.io, [&] { return order.size() == 50; }));
  CHECK(all_on_reactor);
  for (int i = 0; i < 50; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);

  // After close, calls still answer (with an error), and still through the io_context.
  f.store->close();
  std::optional<StoreResult<SessionRecord>> late;
  f.sessions().get_session("x", [&](StoreResult<SessionRecord> r) { late.emplace(std::move(r)); });
  CHECK_FALSE(late);
  REQUIRE(switchboard::testing::run_handlers_until(f.io, [&] { return late.has_value(); }));
  REQUIRE_FALSE(*late);
  CHECK(late->error().code == StoreError::Code::Io);
}

}  // namespace store_session_tests
