#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "store/Database.h"
#include "store/EventFields.h"
#include "store/Store.h"
#include "support/StoreTestSupport.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"

namespace store_event_log_tests {

using namespace switchboard::store;
using switchboard::bus::EncodedEventPtr;
using switchboard::protocol::EventKind;
using switchboard::testing::await_store;
using switchboard::testing::make_store_event;
using switchboard::testing::run_handlers_until;
using switchboard::testing::StoreTempDir;
using Events = std::vector<EncodedEventPtr>;

std::unique_ptr<Store> open_store(boost::asio::io_context& io, const StoreTempDir& dir, EventLogOptions log = {}) {
  StoreOptions options;
  options.event_log = log;
  auto store = Store::open(io, dir.db(), options);
  REQUIRE(store);
  return std::move(*store);
}

// Checks that `events` are exactly seqs first..last, in order.
void check_contiguous(const Events& events, std::uint64_t first, std::uint64_t last) {
  REQUIRE(events.size() == last - first + 1);
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i]->seq != first + i) FAIL("event " << i << " has seq " << events[i]->seq << ", expected " << first + i);
  }
}

StoreResult<Events> replay(boost::asio::io_context& io, EventLog& log, std::uint64_t after, std::size_t limit) {
  return await_store<Events>(io, [&](auto done) { log.replay_after(after, limit, done); });
}

std::uint64_t flush(boost::asio::io_context& io, EventLog& log) {
  auto committed = await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); });
  REQUIRE(committed);
  return *committed;
}

std::int64_t count_rows(Store& store, const std::string& where = "1") {
  auto count = store.worker().run_blocking("count", [where](Database& db) -> StoreResult<std::int64_t> {
    return db.sql().execAndGet("SELECT count(*) FROM events WHERE " + where).getInt64();
  });
  REQUIRE(count);
  return *count;
}

TEST_CASE("store: extract_turn_id reads data.turnId only", "[store]") {
  CHECK(extract_turn_id(R"({"seq":1,"type":"message.delta","data":{"turnId":"t-1","text":"x"}})") == "t-1");
  CHECK(extract_turn_id(R"({"seq":1,"data":{"text":"a \"turnId\":\"no\" {","turnId":"t-2"}})") == "t-2");
  CHECK(extract_turn_id(R"({"seq":1,"data":{"input":{"turnId":"nested"},"turnId":"t-3"}})") == "t-3");
  CHECK(extract_turn_id(R"({"turnId":"top","data":{"x":[1,{"turnId":"deep"}]}})") == std::nullopt);
  CHECK(extract_turn_id(R"({ "data" : { "turnId" : "spaced" } })") == "spaced");
  CHECK(extract_turn_id(R"({"data":{"turnId":"esc\"aped\u0041"}})") == "esc\"apedA");
  CHECK(extract_turn_id(R"({"data":{"turnId":null}})") == std::nullopt);
  CHECK(extract_turn_id(R"({"data":{"turnId":""}})") == std::nullopt);
  CHECK(extract_turn_id(R"({"data":"text"})") == std::nullopt);
  CHECK(extract_turn_id(R"({"data":{"turnId":"unterminated)") == std::nullopt);
  CHECK(extract_turn_id("") == std::nullopt);
  CHECK(extract_turn_id("[1,2]") == std::nullopt);
}

TEST_CASE("store: event types round-trip by name", "[store]") {
  for (std::size_t i = 0; i < switchboard::protocol::kEvents.size(); ++i) {
    const auto kind = static_cast<EventKind>(i);
    CHECK(event_kind_from_type(event_type_name(kind)) == kind);
  }
  CHECK(event_kind_from_type("no.such.event") == std::nullopt);
}

TEST_CASE("store: 10,000 events replay contiguously from any point, including the uncommitted tail", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.flush_delay = std::chrono::hours(1);  // commits only when asked or when 512 are pending
  auto store = open_store(io, dir, options);
  EventLog& log = store->events();

  // 6,000 committed...
  for (std::uint64_t seq = 1; seq <= 6000; ++seq) log.on_event(make_store_event(seq, "s-" + std::to_string(seq % 3)));
  CHECK(flush(io, log) == 6000);
  CHECK(count_rows(*store) == 6000);
  // ...then 4,000 more in one go: one batch goes in flight at once, the rest is pending behind it.
  for (std::uint64_t seq = 6001; seq <= 10000; ++seq)
    log.on_event(make_store_event(seq, "s-" + std::to_string(seq % 3)));
  CHECK(log.unsaved_count() == 4000);

  for (const std::uint64_t after : {0u, 1u, 511u, 5999u, 6000u, 6001u, 8191u, 9999u, 10000u, 12000u}) {
    INFO("after " << after);
    auto events = replay(io, log, after, 100000);
    REQUIRE(events);
    if (after >= 10000)
      CHECK(events->empty());
    else
      check_contiguous(*events, after + 1, 10000);
  }

  // Paging with a limit that does not divide anything: every event exactly once, whatever is committed by now.
  std::uint64_t cursor = 0;
  std::set<std::uint64_t> seen;
  for (int page = 0; page < 100 && cursor < 10000; ++page) {
    auto events = replay(io, log, cursor, 777);
    REQUIRE(events);
    REQUIRE_FALSE(events->empty());
    REQUIRE(events->size() <= 777);
    check_contiguous(*events, cursor + 1, cursor + events->size());
    for (const auto& event : *events) CHECK(seen.insert(event->seq).second);
    cursor = events->back()->seq;
  }
  CHECK(seen.size() == 10000);

  // The bytes are the egress's bytes, and the kind and session survive the round trip through the table.
  CHECK(flush(io, log) == 10000);
  CHECK(log.unsaved_count() == 0);
  auto stored = replay(io, log, 4999, 1);
  REQUIRE(stored);
  REQUIRE(stored->size() == 1);
  const auto original = make_store_event(5000, "s-" + std::to_string(5000 % 3));
  CHECK((*stored)[0]->json == original->json);
  CHECK((*stored)[0]->session_id == original->session_id);
  CHECK((*stored)[0]->kind == EventKind::MessageDelta);
}

TEST_CASE("store: replay while events keep arriving never misses or repeats one", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.flush_events = 64;  // many small batches, so replays race with commits in flight
  options.max_batch_events = 256;
  auto store = open_store(io, dir, options);
  EventLog& log = store->events();

  std::uint64_t next = 1;
  std::mt19937 random(7);
  int replays_asked = 0;
  int replays_done = 0;
  int failures = 0;
  std::function<void()> produce = [&] {
    for (int i = 0; i < 97 && next <= 20000; ++i) log.on_event(make_store_event(next++));
    // Mostly near the tail, where stored rows, the batch in flight and the pending ones meet.
    const std::uint64_t after = next - 1 - random() % std::min<std::uint64_t>(next, 3000);
    ++replays_asked;
    // Every replay must return exactly after+1 .. the log's last seq when the result arrives.
    log.replay_after(after, 1000000, [&, after](StoreResult<Events> events) {
      ++replays_done;
      if (!events) {
        ++failures;
        return;
      }
      const std::uint64_t last = log.last_seq();
      bool ok = events->size() == last - after;
      for (std::size_t i = 0; ok && i < events->size(); ++i) ok = (*events)[i]->seq == after + 1 + i;
      if (!ok) ++failures;
    });
    if (next <= 20000) boost::asio::post(io, produce);
  };
  boost::asio::post(io, produce);
  REQUIRE(run_handlers_until(io, [&] { return next > 20000 && replays_done == replays_asked; }));
  CHECK(failures == 0);
  CHECK(flush(io, log) == 20000);
  CHECK(count_rows(*store) == 20000);
}

TEST_CASE("store: session_events pages one session's transcript", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.flush_delay = std::chrono::hours(1);
  auto store = open_store(io, dir, options);
  EventLog& log = store->events();
  for (std::uint64_t seq = 1; seq <= 3000; ++seq) log.on_event(make_store_event(seq, seq % 3 == 0 ? "a" : "b"));
  flush(io, log);
  for (std::uint64_t seq = 3001; seq <= 3100; ++seq) log.on_event(make_store_event(seq, seq % 3 == 0 ? "a" : "b"));

  std::vector<std::uint64_t> seqs;
  std::uint64_t cursor = 0;
  for (;;) {
    auto page = await_store<Events>(io, [&](auto done) { log.session_events("a", cursor, 128, done); });
    REQUIRE(page);
    if (page->empty()) break;
    for (const auto& event : *page) {
      CHECK(event->session_id == "a");
      seqs.push_back(event->seq);
    }
    cursor = page->back()->seq;
  }
  REQUIRE(seqs.size() == 1033);  // 3, 6, …, 3099: the committed ones and the pending tail
  for (std::size_t i = 0; i < seqs.size(); ++i) CHECK(seqs[i] == 3 * (i + 1));
}

TEST_CASE("store: session_events_before reads one session from its end, page by page, with the unsaved tail", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.flush_delay = std::chrono::hours(1);
  auto store = open_store(io, dir, options);
  EventLog& log = store->events();
  for (std::uint64_t seq = 1; seq <= 3000; ++seq) log.on_event(make_store_event(seq, seq % 3 == 0 ? "a" : "b"));
  flush(io, log);
  // 200 uncommitted events, 66 of them a's: more than the first page holds, so it is the tail alone.
  for (std::uint64_t seq = 3001; seq <= 3200; ++seq) log.on_event(make_store_event(seq, seq % 3 == 0 ? "a" : "b"));
  REQUIRE(log.unsaved_count() == 200);
  const auto before = [&](std::uint64_t after, std::uint64_t below, std::size_t limit) {
    auto page = await_store<Events>(io, [&](auto done) { log.session_events_before("a", after, below, limit, done); });
    REQUIRE(page);
    return *page;
  };

  const Events newest = before(0, 1'000'000, 50);
  REQUIRE(newest.size() == 50);
  CHECK(newest.front()->seq == 3198 - 49 * 3);  // the newest 50 a's, oldest first
  CHECK(newest.back()->seq == 3198);

  // Paging back from the end by each page's first seq yields every a once, newest pages first.
  std::vector<std::uint64_t> seqs;
  std::uint64_t cursor = 1'000'000;
  for (int guard = 0; guard < 100; ++guard) {
    const Events page = before(0, cursor, 128);
    if (page.empty()) break;
    for (std::size_t i = 0; i < page.size(); ++i) {
      CHECK(page[i]->session_id == "a");
      if (i > 0) CHECK(page[i]->seq > page[i - 1]->seq);
    }
    std::vector<std::uint64_t> older;
    for (const auto& event : page) older.push_back(event->seq);
    seqs.insert(seqs.begin(), older.begin(), older.end());
    cursor = page.front()->seq;
  }
  REQUIRE(seqs.size() == 1066);  // 3, 6, …, 3198
  for (std::size_t i = 0; i < seqs.size(); ++i) CHECK(seqs[i] == 3 * (i + 1));

  // A page across the stored rows and the tail, and one bounded below by after_seq.
  const Events across = before(0, 3010, 5);
  REQUIRE(across.size() == 5);
  CHECK(across.front()->seq == 2997);
  CHECK(across.back()->seq == 3009);
  const Events bounded = before(2990, 3000, 100);
  REQUIRE(bounded.size() == 3);
  CHECK(bounded.front()->seq == 2991);
  CHECK(bounded.back()->seq == 2997);
  CHECK(before(2997, 2998, 10).empty());

  // Backward on the (session_id, seq) index: no sort of the session's rows.
  auto plan = store->worker().run_blocking("plan", [](Database& db) -> StoreResult<std::string> {
    SQLite::Statement query(db.sql(),
                            "EXPLAIN QUERY PLAN SELECT seq, session_id, type, json FROM events WHERE session_id = 'a' "
                            "AND seq > 0 AND seq < 100 ORDER BY seq DESC LIMIT 10");
    std::string text;
    while (query.executeStep()) text += query.getColumn(3).getString() + "\n";
    return text;
  });
  REQUIRE(plan);
  CHECK(plan->find("events_by_session") != std::string::npos);
  CHECK(plan->find("TEMP B-TREE") == std::string::npos);
}

TEST_CASE("store: batches commit at 512 pending or after the delay", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  std::vector<std::uint64_t> commits;
  SECTION("512 pending") {
    EventLogOptions options;
    options.flush_delay = std::chrono::hours(1);
    auto store = open_store(io, dir, options);
    EventLog& log = store->events();
    log.on_commit([&](std::uint64_t seq) { commits.push_back(seq); });
    for (std::uint64_t seq = 1; seq <= 511; ++seq) log.on_event(make_store_event(seq));
    io.restart();
    io.run_for(std::chrono::milliseconds(50));
    CHECK(commits.empty());
    CHECK(log.unsaved_count() == 511);
    log.on_event(make_store_event(512));
    REQUIRE(run_handlers_until(io, [&] { return !commits.empty(); }));
    CHECK(commits == std::vector<std::uint64_t>{512});
  }
  SECTION("the delay after the first pending event") {
    EventLogOptions options;
    options.flush_delay = std::chrono::milliseconds(50);
    auto store = open_store(io, dir, options);
    EventLog& log = store->events();
    log.on_commit([&](std::uint64_t seq) { commits.push_back(seq); });
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t seq = 1; seq <= 10; ++seq) log.on_event(make_store_event(seq));
    REQUIRE(run_handlers_until(io, [&] { return !commits.empty(); }));
    CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(49));
    CHECK(commits == std::vector<std::uint64_t>{10});  // one batch for all ten
  }
}

TEST_CASE("store: last_seq continues across a restart", "[store]") {
  StoreTempDir dir;
  {
    boost::asio::io_context io{1};
    auto store = open_store(io, dir);
    CHECK(store->events().last_seq() == 0);
    for (std::uint64_t seq = 1; seq <= 1234; ++seq) store->events().on_event(make_store_event(seq));
    store->close();  // no flush: close hands the tail over and the worker commits it before exiting
  }
  boost::asio::io_context io{1};
  auto store = open_store(io, dir);
  CHECK(store->events().last_seq() == 1234);
  CHECK(count_rows(*store) == 1234);
}

TEST_CASE("store: the event log is an egress sink, seqs continue after the stored ones", "[store]") {
  using namespace switchboard;
  StoreTempDir dir;
  for (int run = 0; run < 2; ++run) {
    boost::asio::io_context io{1};
    auto store = open_store(io, dir);
    bus::EventBus bus;
    bus::Egress egress(bus);
    egress.continue_after(store->events().last_seq());
    egress.add_sink(store->events());
    for (int i = 0; i < 100; ++i) {
      bus.publish("s-1",
                  protocol::MessageDeltaEvent{"turn-" + std::to_string(run), "m", protocol::DeltaKind::Text, "x"});
    }
    bus.publish_global(protocol::DaemonShutdownEvent{protocol::DaemonShutdownEventReason::StdinClosed});
    CHECK(egress.last_seq() == static_cast<std::uint64_t>(101 * (run + 1)));
    egress.remove_sink(store->events());
    store->close();
  }
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT count(*), min(seq), max(seq) FROM events").getInt() == 202);
  CHECK(db.execAndGet("SELECT max(seq) - min(seq) FROM events").getInt() == 201);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE turn_id = 'turn-1' AND session_id = 's-1'").getInt() == 100);
  CHECK(db.execAndGet("SELECT count(*) FROM events WHERE session_id IS NULL AND type = 'daemon.shutdown'").getInt() ==
        2);
  const auto json = nlohmann::json::parse(db.execAndGet("SELECT json FROM events WHERE seq = 150").getString());
  CHECK(json.at("seq") == 150);
  CHECK(json.at("data").at("turnId") == "turn-1");
}

TEST_CASE("store: retention deletes the oldest events in chunks", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.max_events = 1000;
  options.trim_chunk_events = 300;
  options.flush_events = 100;
  options.max_batch_events = 100;
  {
    auto store = open_store(io, dir, options);
    EventLog& log = store->events();
    for (std::uint64_t seq = 1; seq <= 5000; ++seq) log.on_event(make_store_event(seq));
    flush(io, log);
    // Trimming chained after the last commit may still be queued: a blocking job runs after it.
    REQUIRE(run_handlers_until(io, [&] { return count_rows(*store) == 1000; }));
    CHECK(count_rows(*store, "seq <= 4000") == 0);
    CHECK(log.last_seq() == 5000);
    auto events = replay(io, log, 0, 10);
    REQUIRE(events);
    CHECK(events->front()->seq == 4001);  // the reader sees where the retained log starts
  }
  // A lower cap on the next start is reached in chunks, chained after the next commit.
  options.max_events = 10;
  auto store = open_store(io, dir, options);
  store->events().on_event(make_store_event(5001));
  flush(io, store->events());
  REQUIRE(run_handlers_until(io, [&] { return count_rows(*store) == 10; }));
  CHECK(count_rows(*store, "seq BETWEEN 4992 AND 5001") == 10);
}

TEST_CASE("store: compact_turn removes only that turn's deltas and tool output", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  EventLogOptions options;
  options.flush_delay = std::chrono::hours(1);
  auto store = open_store(io, dir, options);
  EventLog& log = store->events();
  std::uint64_t seq = 0;
  const auto add = [&](const char* session, EventKind kind, const char* turn) {
    log.on_event(make_store_event(++seq, session, kind, turn));
  };
  for (int i = 0; i < 3; ++i) add("s-1", EventKind::MessageDelta, "t-1");
  for (int i = 0; i < 2; ++i) add("s-1", EventKind::ToolOutput, "t-1");  // tool.completed repeats it whole
  add("s-1", EventKind::MessageCompleted, "t-1");  // the full message stays
  for (int i = 0; i < 3; ++i) add("s-1", EventKind::MessageDelta, "t-2");
  add("", EventKind::DaemonShutdown, "");
  for (int i = 0; i < 2; ++i) add("s-2", EventKind::MessageDelta, "t-1");  // same turn id, other session

  SECTION("after the events are committed") {
    flush(io, log);
    auto deleted = await_store<std::size_t>(io, [&](auto done) { log.compact_turn("s-1", "t-1", done); });
    REQUIRE(deleted);
    CHECK(*deleted == 5);
  }
  SECTION("while they are still pending: the compaction commits with their batch") {
    CHECK(log.unsaved_count() == 12);
    auto deleted = await_store<std::size_t>(io, [&](auto done) { log.compact_turn("s-1", "t-1", done); });
    REQUIRE(deleted);
    CHECK(*deleted == 5);
    CHECK(log.unsaved_count() == 0);
  }
  CHECK(count_rows(*store) == 7);
  CHECK(count_rows(*store, "session_id = 's-1' AND turn_id = 't-1'") == 1);
  CHECK(count_rows(*store, "session_id = 's-1' AND turn_id = 't-1' AND type = 'message.completed' AND compacted = 1") ==
        1);
  CHECK(count_rows(*store, "session_id = 's-1' AND turn_id = 't-2' AND compacted = 0") == 3);
  CHECK(count_rows(*store, "session_id = 's-2'") == 2);

  // The newest rows may go too (seqs 11 and 12 here); seqs still continue after the highest one ever stored.
  auto deleted = await_store<std::size_t>(io, [&](auto done) { log.compact_turn("s-2", "t-1", done); });
  REQUIRE(deleted);
  CHECK(*deleted == 2);
  CHECK(count_rows(*store, "seq > 10") == 0);
  store->close();
  auto reopened = open_store(io, dir);
  CHECK(reopened->events().last_seq() == 12);
  // After a restart the turn's first seq is not remembered: the whole session is searched, same result.
  auto after_restart =
      await_store<std::size_t>(io, [&](auto done) { reopened->events().compact_turn("s-1", "t-2", done); });
  REQUIRE(after_restart);
  CHECK(*after_restart == 3);
  CHECK(count_rows(*reopened, "session_id = 's-1'") == 1);
}

TEST_CASE("store: a failed commit is reported once per kind, kept, and retried until it succeeds", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreOptions options;
  options.database.busy_timeout = std::chrono::milliseconds(50);
  options.event_log.flush_delay = std::chrono::milliseconds(1);
  options.event_log.retry_delay = std::chrono::milliseconds(10);
  options.event_log.max_retry_delay = std::chrono::milliseconds(40);
  auto opened = Store::open(io, dir.db(), options);
  REQUIRE(opened);
  auto& store = **opened;
  EventLog& log = store.events();
  std::vector<StoreError> reported;
  log.on_error([&](const StoreError& error) { reported.push_back(error); });
  for (std::uint64_t seq = 1; seq <= 10; ++seq) log.on_event(make_store_event(seq));
  flush(io, log);

  SECTION("disk full") {
    // Cap the file at its current size: the next batch that needs a new page fails with SQLITE_FULL.
    REQUIRE(store.worker().run_blocking("cap", [](Database& db) -> StoreResult<int> {
      const auto pages = db.sql().execAndGet("PRAGMA page_count").getInt();
      db.sql().exec("PRAGMA max_page_count = " + std::to_string(pages));
      return pages;
    }));
    const std::string big(4000, 'z');
    for (std::uint64_t seq = 11; seq <= 60; ++seq)
      log.on_event(make_store_event(seq, "s-1", EventKind::MessageDelta, "t", big));
    auto failed = await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); });
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == StoreError::Code::Full);
    // Several retries fail meanwhile; the error is reported once.
    io.restart();
    io.run_for(std::chrono::milliseconds(150));
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].code == StoreError::Code::Full);
    CHECK_THAT(reported[0].message, Catch::Contains("event log commit") && Catch::Contains("full"));
    CHECK(log.unsaved_count() == 50);
    CHECK(log.committed_seq() == 10);
    // Readers still get everything, from memory.
    auto events = replay(io, log, 0, 1000);
    REQUIRE(events);
    check_contiguous(*events, 1, 60);

    REQUIRE(store.worker().run_blocking("uncap", [](Database& db) -> StoreResult<int> {
      db.sql().exec("PRAGMA max_page_count = 1073741823");
      return 0;
    }));
    REQUIRE(run_handlers_until(io, [&] { return log.committed_seq() == 60; }));
  }
  SECTION("database locked by another process, then a second kind") {
    SQLite::Database other(dir.db().string(), SQLite::OPEN_READWRITE);
    other.exec("BEGIN IMMEDIATE");
    for (std::uint64_t seq = 11; seq <= 20; ++seq) log.on_event(make_store_event(seq));
    io.restart();
    io.run_for(std::chrono::milliseconds(300));
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].code == StoreError::Code::Busy);
    CHECK(log.committed_seq() == 10);
    CHECK(log.unsaved_count() == 10);
    other.exec("ROLLBACK");
    REQUIRE(run_handlers_until(io, [&] { return log.committed_seq() == 20; }));
    // A new failure streak reports again.
    other.exec("BEGIN IMMEDIATE");
    log.on_event(make_store_event(21));
    REQUIRE(run_handlers_until(io, [&] { return reported.size() == 2; }));
    other.exec("ROLLBACK");
    REQUIRE(run_handlers_until(io, [&] { return log.committed_seq() == 21; }));
  }
  CHECK(log.unsaved_count() == 0);
  const std::uint64_t last = log.last_seq();
  CHECK(count_rows(store) == static_cast<std::int64_t>(last));
  CHECK(count_rows(store, "seq BETWEEN 1 AND " + std::to_string(last)) == static_cast<std::int64_t>(last));
}

}  // namespace store_event_log_tests
