#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "store/Database.h"
#include "store/Store.h"
#include "store/StoreWorker.h"
#include "support/StoreTestSupport.h"

// Background store work (the event log's commits) runs in SCHED_IDLE so that it never holds a CPU the reactor
// wants; any other job moves the worker back out at once, even in the middle of a background job, and so does
// StoreWorker::expedite: the event log calls it when a commit has waited too long or somebody waits for it.

namespace store_worker_scheduling_tests {

using namespace switchboard::store;
using switchboard::testing::make_store_event;
using switchboard::testing::run_handlers_until;
using switchboard::testing::StoreTempDir;

// What StoreWorker checks before using SCHED_IDLE: CAP_SYS_NICE (root here; an unprivileged user normally lacks
// it), or an RLIMIT_NICE that lets the store thread (nice +3 from this one) come back to its nice value.
bool has_cap_sys_nice() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0 && ((std::strtoull(line.c_str() + 7, nullptr, 16) >> 23) & 1ULL)) return true;
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NICE, &limit) != 0) return false;
  return limit.rlim_cur == RLIM_INFINITY || static_cast<long long>(limit.rlim_cur) >= 20 - (::getpriority(PRIO_PROCESS, 0) + 3);
}

// True (with a warning in the report) when the worker cannot enter SCHED_IDLE here, so a test of the idle class
// has nothing to observe and returns.
bool idle_class_untestable() {
  if (has_cap_sys_nice()) return false;
  WARN("SKIPPED: no CAP_SYS_NICE, so the worker never enters SCHED_IDLE");
  return true;
}

TEST_CASE("store worker: background jobs run in SCHED_IDLE and others in the normal class", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  REQUIRE(worker.open(dir.db()));
  const bool idle_expected = has_cap_sys_nice();
  if (!idle_expected) WARN("no CAP_SYS_NICE: background jobs are expected to stay in the normal class");

  std::atomic<int> background_policy{-1};
  worker.submit_background(
      "probe", [&](Database&) -> StoreResult<int> { return background_policy = ::sched_getscheduler(0); },
      [](StoreResult<int>) {});
  // Only then the other job: queued while the background one waits, it would (rightly) keep it out of SCHED_IDLE.
  while (background_policy.load() == -1) std::this_thread::yield();
  const auto foreground = worker.run_blocking("probe", [](Database&) -> StoreResult<int> { return ::sched_getscheduler(0); });
  REQUIRE(foreground);
  CHECK(background_policy.load() == (idle_expected ? SCHED_IDLE : SCHED_OTHER));
  CHECK(*foreground == SCHED_OTHER);
  io.run();
}

TEST_CASE("store worker: a job queued behind idle-class work lifts the worker out of SCHED_IDLE at once", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  REQUIRE(worker.open(dir.db()));
  if (idle_class_untestable()) return;
  std::atomic<int> stage{0};
  int policy_before = -1;
  int policy_after = -1;
  worker.submit_background(
      "long background job",
      [&](Database&) -> StoreResult<int> {
        policy_before = ::sched_getscheduler(0);
        stage = 1;
        // Busy until the foreground job is queued: in SCHED_IDLE this could last for ever on a saturated machine,
        // which is exactly what the lift prevents.
        while (stage.load() != 2) std::this_thread::yield();
        policy_after = ::sched_getscheduler(0);
        return 0;
      },
      [](StoreResult<int>) {});
  while (stage.load() != 1) std::this_thread::yield();
  std::thread submitter([&] {
    worker.submit("foreground job", [](Database&) -> StoreResult<int> { return ::sched_getscheduler(0); },
                  [](StoreResult<int>) {});
    stage = 2;
  });
  submitter.join();
  const auto last = worker.run_blocking("after", [](Database&) -> StoreResult<int> { return ::sched_getscheduler(0); });
  CHECK(policy_before == SCHED_IDLE);
  CHECK(policy_after == SCHED_OTHER);
  REQUIRE(last);
  CHECK(*last == SCHED_OTHER);
  io.run();
}

// A background job that occupies the store thread until something lifts it out of SCHED_IDLE, or `patience`
// passes; it records the class it ended in. Jobs queued after it wait behind it, as a commit would behind a
// long idle-class job on a machine whose cores are all busy.
struct IdleBlocker {
  std::atomic<bool> started{false};
  std::atomic<int> policy_at_start{-1};
  std::atomic<int> policy_at_end{-1};

  void submit(StoreWorker& worker, std::chrono::milliseconds patience) {
    worker.submit_background(
        "idle blocker",
        [this, patience](Database&) -> StoreResult<int> {
          policy_at_start = ::sched_getscheduler(0);
          started = true;
          const auto until = std::chrono::steady_clock::now() + patience;
          while (::sched_getscheduler(0) == SCHED_IDLE && std::chrono::steady_clock::now() < until) {
            std::this_thread::yield();
          }
          policy_at_end = ::sched_getscheduler(0);
          return 0;
        },
        [](StoreResult<int>) {});
    while (!started.load()) std::this_thread::yield();
  }
};

TEST_CASE("store worker: expedite lifts the running background job and those queued, not later ones", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  REQUIRE(worker.open(dir.db()));
  if (idle_class_untestable()) return;
  IdleBlocker blocker;
  blocker.submit(worker, std::chrono::seconds(20));
  std::atomic<int> queued_policy{-1};
  worker.submit_background(
      "queued before", [&](Database&) -> StoreResult<int> { return queued_policy = ::sched_getscheduler(0); },
      [](StoreResult<int>) {});
  worker.expedite();
  std::atomic<int> later_policy{-1};
  worker.submit_background(
      "queued after", [&](Database&) -> StoreResult<int> { return later_policy = ::sched_getscheduler(0); },
      [](StoreResult<int>) {});
  io.run();  // returns once every job's result is posted and run
  CHECK(blocker.policy_at_start.load() == SCHED_IDLE);
  CHECK(blocker.policy_at_end.load() == SCHED_OTHER);
  CHECK(queued_policy.load() == SCHED_OTHER);
  CHECK(later_policy.load() == SCHED_IDLE);
}

std::unique_ptr<Store> open_store(boost::asio::io_context& io, const StoreTempDir& dir,
                                  std::chrono::milliseconds patience) {
  StoreOptions options;
  options.event_log.background_patience = patience;
  auto store = Store::open(io, dir.db(), options);
  REQUIRE(store);
  return std::move(*store);
}

// Appends one event to `log` and runs the handlers until it is committed.
void append_and_await_commit(boost::asio::io_context& io, EventLog& log) {
  log.on_event(make_store_event(log.last_seq() + 1));
  const std::uint64_t wanted = log.last_seq();
  REQUIRE(run_handlers_until(io, [&] { return log.committed_seq() >= wanted; }));
}

TEST_CASE("event log: its background work stuck behind idle-class work is expedited after background_patience", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  if (idle_class_untestable()) return;
  SECTION("with a patience of 50 ms the blocker is lifted, and the commit follows") {
    auto store = open_store(io, dir, std::chrono::milliseconds(50));
    IdleBlocker blocker;
    blocker.submit(store->worker(), std::chrono::seconds(20));
    append_and_await_commit(io, store->events());
    CHECK(blocker.policy_at_start.load() == SCHED_IDLE);
    CHECK(blocker.policy_at_end.load() == SCHED_OTHER);
  }
  SECTION("a compaction of events committed already is watched the same way") {
    auto store = open_store(io, dir, std::chrono::milliseconds(50));
    EventLog& log = store->events();
    append_and_await_commit(io, log);
    IdleBlocker blocker;
    blocker.submit(store->worker(), std::chrono::seconds(20));
    std::optional<StoreResult<std::size_t>> removed;
    log.compact_turn("s-1", "t-1", [&](StoreResult<std::size_t> result) { removed = result; });
    REQUIRE(run_handlers_until(io, [&] { return removed.has_value(); }));
    REQUIRE(*removed);
    CHECK(**removed == 1);  // the one delta
    CHECK(blocker.policy_at_end.load() == SCHED_OTHER);
  }
  SECTION("with a patience of an hour nothing lifts it: the 300 ms the blocker waits pass in the idle class") {
    auto store = open_store(io, dir, std::chrono::hours(1));
    IdleBlocker blocker;
    blocker.submit(store->worker(), std::chrono::milliseconds(300));
    append_and_await_commit(io, store->events());
    CHECK(blocker.policy_at_end.load() == SCHED_IDLE);
  }
}

TEST_CASE("event log: with its background work done it leaves the io_context nothing to wait for", "[store]") {
  // The patience timer watches background jobs only while there are some: a daemon that has nothing left to do
  // stops at once, instead of waiting out the patience (every `switchboard run` with a data directory paid
  // 200 ms for it).
  StoreTempDir dir;
  boost::asio::io_context io{1};
  auto store = open_store(io, dir, std::chrono::hours(1));
  append_and_await_commit(io, store->events());
  // Without CAP_SYS_NICE the commit is background work all the same (at nice +19): the timer is armed either way.
  const auto started = std::chrono::steady_clock::now();
  io.restart();
  io.run_for(std::chrono::seconds(10));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(io.stopped());
}

TEST_CASE("event log: a flush that takes every pending event leaves no batch timer to wait for", "[store]") {
  // A daemon flushes its log at the end of its shutdown (Daemon::announce_shutdown) so that it need not wait out
  // the batching delay; a timer left armed with nothing to batch would hold its loop just the same.
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreOptions options;
  options.event_log.flush_delay = std::chrono::hours(1);
  auto opened = Store::open(io, dir.db(), options);
  REQUIRE(opened);
  EventLog& log = (*opened)->events();
  log.on_event(make_store_event(log.last_seq() + 1));  // arms the batch timer: an hour
  std::optional<StoreResult<std::uint64_t>> flushed;
  log.flush([&](StoreResult<std::uint64_t> result) { flushed = result; });
  const auto started = std::chrono::steady_clock::now();
  io.run_for(std::chrono::seconds(10));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(io.stopped());
  REQUIRE(flushed);
  REQUIRE(*flushed);
  CHECK(**flushed == log.last_seq());
}

TEST_CASE("event log: a flush lifts the idle-class work its commit waits behind", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  if (idle_class_untestable()) return;
  auto store = open_store(io, dir, std::chrono::hours(1));
  EventLog& log = store->events();
  IdleBlocker blocker;
  blocker.submit(store->worker(), std::chrono::seconds(20));
  log.on_event(make_store_event(log.last_seq() + 1));
  SECTION("the batch not started yet: it is started as foreground work") {}
  SECTION("the batch already in flight behind the blocker") {
    // The batch timer (5 ms) starts it; it then waits behind the blocker, unsaved.
    io.run_for(std::chrono::milliseconds(50));
    CHECK(log.unsaved_count() == 1);
    CHECK(blocker.policy_at_end.load() == -1);
  }
  std::optional<StoreResult<std::uint64_t>> flushed;
  log.flush([&](StoreResult<std::uint64_t> result) { flushed = result; });
  REQUIRE(run_handlers_until(io, [&] { return flushed.has_value(); }));
  REQUIRE(*flushed);
  CHECK(**flushed == log.last_seq());
  CHECK(blocker.policy_at_end.load() == SCHED_OTHER);
}

}  // namespace store_worker_scheduling_tests
