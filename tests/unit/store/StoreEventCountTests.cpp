#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>

#include <SQLiteCpp/Database.h>
#include <boost/asio/io_context.hpp>

#include "store/Store.h"
#include "support/StoreTestSupport.h"

// The event log's row count (what retention compares with its cap) is stored with every change to the events
// table, so a daemon's start reads it instead of counting the table; these tests hold it to the real count.

namespace store_event_count_tests {

using namespace switchboard::store;
using switchboard::protocol::EventKind;
using switchboard::testing::await_store;
using switchboard::testing::make_store_event;
using switchboard::testing::StoreTempDir;

struct Counts {
  std::int64_t stored = -1;  // store_meta's figure, -1 when absent
  std::int64_t actual = -1;
};

Counts counts(const StoreTempDir& dir) {
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  Counts result;
  SQLite::Statement stored(db, "SELECT value FROM store_meta WHERE key = 'events.rows'");
  if (stored.executeStep()) result.stored = stored.getColumn(0).getInt64();
  result.actual = db.execAndGet("SELECT count(*) FROM events").getInt64();
  return result;
}

std::unique_ptr<Store> open(boost::asio::io_context& io, const StoreTempDir& dir, std::uint64_t max_events = 1'000'000) {
  StoreOptions options;
  options.event_log.max_events = max_events;
  auto store = Store::open(io, dir.db(), options);
  REQUIRE(store);
  return std::move(*store);
}

void append(boost::asio::io_context& io, Store& store, EventKind kind, int count) {
  auto& log = store.events();
  for (int i = 0; i < count; ++i) log.on_event(make_store_event(log.last_seq() + 1, "s-1", kind, "t-1", "text"));
  REQUIRE(await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); }));
}

TEST_CASE("store: the stored event count follows appends, compaction and retention, across restarts", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  {
    auto store = open(io, dir);
    append(io, *store, EventKind::MessageDelta, 4);
    append(io, *store, EventKind::MessageCompleted, 2);
    store->close();
  }
  CHECK(counts(dir).stored == 6);
  CHECK(counts(dir).actual == 6);
  {
    auto store = open(io, dir);
    auto deleted = await_store<std::size_t>(io, [&](auto done) { store->events().compact_turn("s-1", "t-1", done); });
    REQUIRE(deleted);
    CHECK(*deleted == 4);  // the deltas
    store->close();
  }
  CHECK(counts(dir).stored == 2);
  CHECK(counts(dir).actual == 2);
  {
    auto store = open(io, dir, 3);
    append(io, *store, EventKind::MessageCompleted, 4);  // 6 rows: retention takes them down to 3
    for (int attempt = 0; attempt < 200; ++attempt) {
      auto rows = await_store<switchboard::store::EventLog::Events>(io, [&](auto done) { store->events().replay_after(0, 100, done); });
      REQUIRE(rows);
      if (rows->size() <= 3) break;
      io.run_for(std::chrono::milliseconds(10));
    }
    store->close();
  }
  CHECK(counts(dir).stored == 3);
  CHECK(counts(dir).actual == 3);
}

TEST_CASE("store: a file without the stored event count is counted once at start and keeps it from then on", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  {
    auto store = open(io, dir);
    append(io, *store, EventKind::MessageCompleted, 5);
    store->close();
  }
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE);
    db.exec("DELETE FROM store_meta WHERE key = 'events.rows'");
  }
  REQUIRE(counts(dir).stored == -1);
  {
    auto store = open(io, dir);
    store->close();
  }
  CHECK(counts(dir).stored == 5);
  {
    auto store = open(io, dir);
    append(io, *store, EventKind::MessageCompleted, 1);
    store->close();
  }
  CHECK(counts(dir).stored == 6);
  CHECK(counts(dir).actual == 6);
}

}  // namespace store_event_count_tests
