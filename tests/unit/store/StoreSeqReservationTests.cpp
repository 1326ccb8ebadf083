#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <boost/asio/io_context.hpp>

#include "store/Store.h"
#include "support/StoreTestSupport.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"

// The event log reserves seqs durably ahead of the egress (docs/persistence.md): no seq reaches a sink above a
// committed reservation, a clean close gives the unused ones back, and a run that ended without one leaves its
// reserved-but-unstored seqs recorded as lost, for replays to announce.

namespace store_seq_reservation_tests {

using namespace switchboard;
using namespace switchboard::store;
using switchboard::testing::run_handlers_until;
using switchboard::testing::StoreTempDir;

std::unique_ptr<Store> open_store(boost::asio::io_context& io, const StoreTempDir& dir, std::uint64_t block) {
  StoreOptions options;
  options.event_log.reserve_seqs = block;
  auto store = Store::open(io, dir.db(), options);
  REQUIRE(store);
  return std::move(*store);
}

std::int64_t stored_reservation(const StoreTempDir& dir) {
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  SQLite::Statement query(db, "SELECT value FROM store_meta WHERE key = 'events.reserved_seq'");
  REQUIRE(query.executeStep());
  return query.getColumn(0).getInt64();
}

// Checks, as each event arrives, that its seq is covered by a reservation the log knows to be committed.
struct ReservationChecker : bus::EventSink {
  EventLog* log = nullptr;
  std::vector<std::uint64_t> seqs;
  std::vector<std::uint64_t> unreserved;
  void on_event(const bus::EncodedEventPtr& event) override {
    seqs.push_back(event->seq);
    if (event->seq > log->reserved_seq()) unreserved.push_back(event->seq);
  }
};

protocol::MessageDeltaEvent delta() { return protocol::MessageDeltaEvent{"t-1", "m-1", protocol::DeltaKind::Text, "x"}; }

TEST_CASE("store: the egress hands out only reserved seqs and the log reserves more before they run out", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  auto store = open_store(io, dir, 64);
  CHECK(store->events().reserved_seq() == 64);
  CHECK(stored_reservation(dir) == 64);
  bus::EventBus bus;
  bus::Egress egress(bus);
  ReservationChecker checker;
  checker.log = &store->events();
  egress.take_seqs_from(store->events());
  egress.add_sink(store->events());
  egress.add_sink(checker);

  // Bursts of 20 with the reactor running in between: the reservation keeps ahead, nothing waits.
  for (int burst = 0; burst < 50; ++burst) {
    for (int i = 0; i < 20; ++i) bus.publish("s-1", delta());
    REQUIRE(run_handlers_until(io, [&] { return egress.held_count() == 0 && store->events().reserved_seq() >= egress.numbered_seq() + 32; }));
  }
  // One burst far larger than a block: the events past the reservation wait for it, then go out in order.
  for (int i = 0; i < 500; ++i) bus.publish("s-1", delta());
  CHECK(egress.held_count() > 0);
  REQUIRE(run_handlers_until(io, [&] { return egress.held_count() == 0; }));
  REQUIRE(checker.seqs.size() == 1500);
  for (std::size_t i = 0; i < checker.seqs.size(); ++i) CHECK(checker.seqs[i] == i + 1);
  CHECK(checker.unreserved.empty());
  CHECK(stored_reservation(dir) >= 1500);

  egress.remove_sink(checker);
  egress.remove_sink(store->events());
  store->close();
  // A clean close gives back what was reserved and not used: the next run continues at 1501, nothing lost.
  CHECK(stored_reservation(dir) == 1500);
  boost::asio::io_context io2{1};
  auto reopened = open_store(io2, dir, 64);
  CHECK(reopened->events().last_seq() == 1500);
  CHECK(reopened->events().lost_after(0).empty());
}

TEST_CASE("store: seqs an unclean run reserved but never stored are recorded as lost and never handed out again",
          "[store]") {
  StoreTempDir dir;
  {
    boost::asio::io_context io{1};
    auto store = open_store(io, dir, 1000);
    for (std::uint64_t seq = 1; seq <= 40; ++seq) store->events().on_event(testing::make_store_event(seq));
    store->close();
  }
  // What a kill -9 leaves: a reservation above the stored events (this run's egress may have delivered up to it).
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE store_meta SET value = 1040 WHERE key = 'events.reserved_seq'");
  }
  for (int run = 0; run < 2; ++run) {  // recorded once; a second start finds it again and adds nothing
    boost::asio::io_context io{1};
    auto store = open_store(io, dir, 1000);
    const auto lost = store->events().lost_after(0);
    REQUIRE(lost.size() == 1);
    CHECK(lost.front() == SeqRange{41, 1040});
    CHECK(store->events().lost_after(100) == std::vector<SeqRange>{SeqRange{101, 1040}});
    CHECK(store->events().lost_after(1040).empty());
    if (run == 0) {
      CHECK(store->events().last_seq() == 1040);  // above everything the crashed run may have handed out
      CHECK(store->events().reserved_seq() == 2040);
      bus::EventBus bus;
      bus::Egress egress(bus);
      egress.take_seqs_from(store->events());
      egress.add_sink(store->events());
      bus.publish("s-1", delta());
      CHECK(egress.last_seq() == 1041);
      egress.remove_sink(store->events());
      store->close();  // while the egress it supplies still exists
    }
    store->close();
  }
  // Killed, then killed again before storing anything: the second lost range contains the first and replaces it.
  for (const std::int64_t killed_at : {5000, 9000}) {
    {
      SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE);
      db.exec("UPDATE store_meta SET value = " + std::to_string(killed_at) + " WHERE key = 'events.reserved_seq'");
    }
    boost::asio::io_context io{1};
    auto store = open_store(io, dir, 1000);
    CHECK(store->events().lost_after(0) ==
          std::vector<SeqRange>{SeqRange{41, 1040}, SeqRange{1042, static_cast<std::uint64_t>(killed_at)}});
    CHECK(store->events().last_seq() == static_cast<std::uint64_t>(killed_at));
  }
}

}  // namespace store_seq_reservation_tests
