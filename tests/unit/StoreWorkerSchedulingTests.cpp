#include <catch2/catch.hpp>

#include <sched.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "store/Database.h"
#include "store/StoreWorker.h"
#include "support/StoreTestSupport.h"

// Background store work (the event log's commits) runs in SCHED_IDLE so that it never holds a CPU the reactor
// wants; any other job moves the worker back out at once, even in the middle of a background job.

namespace store_worker_scheduling_tests {

using namespace switchboard::store;
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
  if (!has_cap_sys_nice()) {
    WARN("SKIPPED: no CAP_SYS_NICE, so the worker never enters SCHED_IDLE");
    return;
  }
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

}  // namespace store_worker_scheduling_tests
