// bench_event_log: the durable event log under load, in process.
//
// Three figures, each against its target:
//   1. append rate: message.delta events (as the egress encodes them) handed to EventLog::on_event from posted
//      handlers on one io_context, until every one is committed (EventLog::flush). Batching means one
//      transaction, and one fsync, per batch. Run for both durability settings.
//   2. the longest reactor stall while writing: a 1 ms repeating timer on the same io_context records how late
//      each expiry runs, while events arrive at a steady offered rate (in small posted bursts, as agents
//      stream). The store thread does all SQL, so lateness is what on_event, batch hand-over and result
//      delivery cost the reactor, plus whatever the OS adds: a "baseline" row runs the same producer and probe
//      with no event log, to show the machine's own noise, and each row also gives the reactor thread's own
//      CPU time between two ticks (lateness beyond it is time spent waiting for a core) and the CPU time of
//      the longest producer burst (a tick's on_event calls, including any batch hand-over).
//   3. replay: replay_after of the last 10,000 events (stored rows, read on the store thread, delivered as one
//      vector on the reactor), call to callback.
//
// Usage: bench_event_log [events [directory]]  (defaults: 1,000,000 events, a fresh directory under /tmp).
// Not a test: it prints figures and the targets. Build it in a release tree for meaningful figures.

#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "store/Store.h"
#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/protocol/generated/Events.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/support/Clock.h"

namespace {

using namespace switchboard;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr std::size_t kDefaultEvents = 1'000'000;
constexpr double kTargetEventsPerSecond = 200'000;
constexpr double kTargetStallMs = 1.0;
constexpr double kTargetReplayMs = 20.0;
constexpr std::size_t kReplayEvents = 10'000;
constexpr std::string_view kSessions[] = {"session-1", "session-2", "session-3", "session-4"};

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of the calling thread, in milliseconds.
double thread_cpu_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// CPU time of the whole process (the reactor and the store thread): unlike wall time, it does not grow when
// other processes compete for the cores.
double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// An egress-encoded message.delta, exactly as Egress::on_bus_event builds it.
bus::EncodedEventPtr make_event(std::uint64_t seq) {
  const std::string session(kSessions[seq & 3]);
  const bus::BusEvent event{
      session,
      protocol::EventPayload(std::in_place_type<protocol::MessageDeltaEvent>,
                             protocol::MessageDeltaEvent{"turn-" + std::to_string(seq / 500), "msg-1",
                                                         protocol::DeltaKind::Text, "a streamed token or two "})};
  const bus::WireEvent wire = *bus::bridge(event);
  auto encoded = std::make_shared<bus::EncodedEvent>();
  encoded->seq = seq;
  encoded->kind = wire.kind;
  encoded->session_id = session;
  encoded->json.reserve(200);
  bus::Egress::encode(wire, seq, unix_millis_now(), encoded->json);
  return encoded;
}

class TempDir {
 public:
  explicit TempDir(const char* base) {
    std::string name = std::string(base) + "/switchboard-bench-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) {
      std::perror("mkdtemp");
      std::exit(1);
    }
    m_path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(m_path, ignored);
  }
  const fs::path& path() const { return m_path; }

 private:
  fs::path m_path;
};

std::unique_ptr<store::Store> open_store(boost::asio::io_context& io, const fs::path& path,
                                         store::Durability durability) {
  store::StoreOptions options;
  options.database.durability = durability;
  auto store = store::Store::open(io, path, options);
  if (!store) {
    std::fprintf(stderr, "bench_event_log: %s\n", store.error().message.c_str());
    std::exit(1);
  }
  return std::move(*store);
}

// Runs `io` until `done` holds.
template <class Done>
void run_until(boost::asio::io_context& io, Done done) {
  io.restart();
  while (!done()) {
    if (io.run_one_for(std::chrono::seconds(30)) == 0) {
      std::fprintf(stderr, "bench_event_log: stuck\n");
      std::exit(1);
    }
  }
}

void flush(boost::asio::io_context& io, store::EventLog& log) {
  bool flushed = false;
  log.flush([&flushed](store::StoreResult<std::uint64_t> result) {
    if (!result) {
      std::fprintf(stderr, "bench_event_log: flush: %s\n", result.error().message.c_str());
      std::exit(1);
    }
    flushed = true;
  });
  run_until(io, [&] { return flushed; });
}

// ---- 1. append rate ----------------------------------------------------------------------------------------

struct AppendResult {
  double seconds = 0;
  double cpu_seconds = 0;
  std::size_t commits = 0;
  std::uintmax_t file_bytes = 0;
};

AppendResult run_append(const fs::path& dir, std::size_t count, store::Durability durability,
                        const std::vector<bus::EncodedEventPtr>& events) {
  boost::asio::io_context io{1};
  const fs::path path = dir / (durability == store::Durability::PowerLoss ? "full.db" : "normal.db");
  auto store = open_store(io, path, durability);
  store::EventLog& log = store->events();
  AppendResult result;
  log.on_commit([&result](std::uint64_t) { ++result.commits; });

  // Bursts of 1,000 from posted handlers, so commit results are delivered between them.
  std::size_t next = 0;
  std::function<void()> burst = [&] {
    const std::size_t stop = std::min(count, next + 1000);
    for (; next < stop; ++next) log.on_event(events[next]);
    if (next < count) boost::asio::post(io, burst);
  };
  const auto start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  boost::asio::post(io, burst);
  run_until(io, [&] { return next == count; });
  flush(io, log);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.cpu_seconds = process_cpu_seconds() - cpu_start;
  store->close();
  std::error_code ignored;
  result.file_bytes = fs::file_size(path, ignored);
  return result;
}

// ---- 2. reactor stalls -------------------------------------------------------------------------------------

struct StallResult {
  double max_busy_ms = 0;  // the most CPU the reactor thread used between two consecutive probe ticks
  double max_late_ms = 0;
  double p99_late_ms = 0;
  double max_burst_us = 0;
  std::size_t ticks = 0;
  double offered_per_second = 0;
  double achieved_per_second = 0;
};

// With `with_log` false the events go nowhere: the same producer and probe, to show the machine's own noise
// (other processes on the cores, timer slack).
StallResult run_stalls(const fs::path& path, const std::vector<bus::EncodedEventPtr>& events, double offered_per_second,
                       bool with_log, store::Durability durability) {
  boost::asio::io_context io{1};
  auto store = open_store(io, path, durability);
  store::EventLog& log = store->events();
  std::uint64_t discarded = 0;
  StallResult result;
  result.offered_per_second = offered_per_second;

  // Producer: every 1 ms, the events due by now (a burst of ~offered/1000), like several agents streaming.
  constexpr auto kTick = std::chrono::milliseconds(1);
  const std::size_t count = events.size();
  std::size_t next = 0;
  const auto start = Clock::now();
  double max_burst = 0;
  boost::asio::steady_timer producer(io);
  std::function<void()> produce = [&] {
    const auto due =
        static_cast<std::size_t>(offered_per_second * std::chrono::duration<double>(Clock::now() - start).count());
    const std::size_t stop = std::min(count, due);
    // Thread CPU time, not wall time: a preemption in the middle is the scheduler's doing, not ours. Measured
    // per burst (a tick's worth of events, one of which may hand a batch over): reading the thread's CPU clock
    // is a system call, too slow to wrap every on_event.
    const double before = thread_cpu_ms();
    for (; next < stop; ++next) {
      if (with_log)
        log.on_event(events[next]);
      else
        discarded += events[next]->seq;
    }
    max_burst = std::max(max_burst, (thread_cpu_ms() - before) * 1e3);
    if (next >= count) return;
    producer.expires_after(kTick);
    producer.async_wait([&](const boost::system::error_code&) { produce(); });
  };

  // Probe: a 1 ms repeating timer; lateness = when it ran minus when it was due.
  std::vector<double> lateness;
  boost::asio::steady_timer probe(io);
  Clock::time_point due = Clock::now() + kTick;
  double last_cpu = thread_cpu_ms();
  double max_busy = 0;
  std::function<void()> arm = [&] {
    probe.expires_at(due);
    probe.async_wait([&](const boost::system::error_code&) {
      lateness.push_back(ms(Clock::now() - due));
      const double cpu = thread_cpu_ms();
      max_busy = std::max(max_busy, cpu - last_cpu);
      last_cpu = cpu;
      due += kTick;
      if (Clock::now() > due) due = Clock::now() + kTick;  // never a burst of catch-up expiries
      if (next < count) arm();
    });
  };
  arm();
  produce();
  run_until(io, [&] { return next >= count; });
  flush(io, log);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  probe.cancel();
  producer.cancel();
  io.restart();
  io.poll();
  store->close();

  std::sort(lateness.begin(), lateness.end());
  result.ticks = lateness.size();
  if (!lateness.empty()) {
    result.max_late_ms = lateness.back();
    result.p99_late_ms = lateness[lateness.size() * 99 / 100];
  }
  result.max_burst_us = max_burst;
  result.max_busy_ms = max_busy;
  if (discarded == 1) std::printf(" ");  // keeps the baseline's loop from being optimized away
  result.achieved_per_second = static_cast<double>(count) / seconds;
  return result;
}

// ---- 3. replay ---------------------------------------------------------------------------------------------

struct ReplayResult {
  double committed_ms = 0;  // the last 10,000, all stored
  double with_tail_ms = 0;  // the last 10,000, of which 5,000 still pending in memory
  std::size_t returned = 0;
};

ReplayResult run_replay(const fs::path& dir, const std::vector<bus::EncodedEventPtr>& events) {
  boost::asio::io_context io{1};
  store::StoreOptions options;
  options.event_log.flush_delay = std::chrono::hours(1);  // so the tail stays pending in the second case
  options.event_log.flush_events = 1'000'000;
  auto opened = store::Store::open(io, dir / "replay.db", options);
  if (!opened) std::exit(1);
  auto& store = **opened;
  store::EventLog& log = store.events();
  const std::size_t stored = std::min<std::size_t>(events.size() - kReplayEvents / 2, 200'000);
  for (std::size_t i = 0; i < stored; ++i) log.on_event(events[i]);
  flush(io, log);

  const auto time_replay = [&](std::uint64_t after, std::size_t& returned) {
    std::optional<double> elapsed;
    const auto start = Clock::now();
    log.replay_after(after, kReplayEvents, [&](store::StoreResult<std::vector<bus::EncodedEventPtr>> result) {
      elapsed = ms(Clock::now() - start);
      returned = result ? result->size() : 0;
    });
    run_until(io, [&] { return elapsed.has_value(); });
    return *elapsed;
  };
  ReplayResult result;
  // Warm-up (page cache), then the median of 5.
  std::vector<double> runs;
  for (int i = 0; i < 6; ++i) runs.push_back(time_replay(stored - kReplayEvents, result.returned));
  runs.erase(runs.begin());
  std::sort(runs.begin(), runs.end());
  result.committed_ms = runs[runs.size() / 2];

  for (std::size_t i = stored; i < stored + kReplayEvents / 2; ++i) log.on_event(events[i]);
  std::size_t returned = 0;
  result.with_tail_ms = time_replay(stored + kReplayEvents / 2 - kReplayEvents, returned);
  if (returned != kReplayEvents) std::fprintf(stderr, "bench_event_log: replay with tail returned %zu\n", returned);
  store.close();
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = kDefaultEvents;
  if (argc > 1) count = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
  if (count < 2 * kReplayEvents) count = 2 * kReplayEvents;
  const char* base = argc > 2 ? argv[2] : "/tmp";
  spdlog::set_level(spdlog::level::warn);
  TempDir dir(base);

  std::vector<bus::EncodedEventPtr> events;
  events.reserve(count);
  for (std::size_t i = 0; i < count; ++i) events.push_back(make_event(i + 1));
  std::printf("bench_event_log: %zu message.delta events of %zu bytes, %zu sessions, database in %s\n", count,
              events[0]->json.size(), std::size(kSessions), dir.path().c_str());
  std::printf("  event: %s\n\n", events[0]->json.c_str());

  std::printf("1. append rate: on_event in posted bursts of 1,000, until all committed (target >= %.0fk events/s)\n",
              kTargetEventsPerSecond / 1e3);
  for (const auto durability : {store::Durability::PowerLoss, store::Durability::ProcessCrash}) {
    const AppendResult r = run_append(dir.path(), count, durability, events);
    const double rate = static_cast<double>(count) / r.seconds;
    std::printf("  %-31s %8.0f events/s  %6.3f s wall  %5.2f us cpu/event  %4zu commits (%4.0f each)  %5.0f MB  %s\n",
                durability == store::Durability::PowerLoss ? "synchronous=FULL (the default)" : "synchronous=NORMAL",
                rate, r.seconds, r.cpu_seconds * 1e6 / static_cast<double>(count), r.commits,
                static_cast<double>(count) / static_cast<double>(std::max<std::size_t>(r.commits, 1)),
                static_cast<double>(r.file_bytes) / 1e6, rate >= kTargetEventsPerSecond ? "ok" : "MISSED");
  }

  std::printf(
      "\n2. reactor stalls while writing: 1 ms probe timer, events offered every 1 ms (target: no stall > %.1f ms)\n"
      "   (busy: the reactor thread's own CPU time between two ticks; lateness beyond it is time the thread\n"
      "   waited for a core, e.g. behind the store thread or other processes)\n",
      kTargetStallMs);
  int run = 0;
  for (const double offered : {20'000.0, 100'000.0, 200'000.0}) {
    const std::size_t n = std::min(count, static_cast<std::size_t>(offered * 2.5));  // ~2.5 s each
    const std::vector<bus::EncodedEventPtr> slice(events.begin(), events.begin() + static_cast<std::ptrdiff_t>(n));
    for (const int mode : {0, 1, 2}) {
      const bool with_log = mode > 0;
      const auto durability = mode == 2 ? store::Durability::ProcessCrash : store::Durability::PowerLoss;
      const StallResult r =
          run_stalls(dir.path() / ("stall-" + std::to_string(run++) + ".db"), slice, offered, with_log, durability);
      std::printf(
          "  %-11s %3.0fk/s (got %3.0fk/s): lateness max %6.3f ms, p99 %6.3f ms (%zu ticks); reactor busy "
          "<= %5.3f ms/tick; longest burst %6.1f us cpu%s\n",
          mode == 0 ? "baseline" : (mode == 1 ? "log, FULL" : "log, NORMAL"), offered / 1e3,
          r.achieved_per_second / 1e3, r.max_late_ms, r.p99_late_ms, r.ticks, r.max_busy_ms, r.max_burst_us,
          with_log ? (r.max_late_ms <= kTargetStallMs ? "  ok" : "  MISSED") : "");
    }
  }

  std::printf("\n3. replay of %zu events to a reader, replay_after call to callback (target <= %.0f ms)\n",
              kReplayEvents, kTargetReplayMs);
  const ReplayResult replay = run_replay(dir.path(), events);
  std::printf("  all stored (median of 5):          %6.2f ms  (%zu events)  %s\n", replay.committed_ms, replay.returned,
              replay.committed_ms <= kTargetReplayMs ? "ok" : "MISSED");
  std::printf("  5,000 stored + 5,000 pending:      %6.2f ms  %s\n", replay.with_tail_ms,
              replay.with_tail_ms <= kTargetReplayMs ? "ok" : "MISSED");
  return 0;
}
