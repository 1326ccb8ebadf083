// bench_stdio_ping: latency, startup time and idle memory of the real `switchboard stdio` daemon.
//
// Spawns the binary (argv[1], default: the one built next to this benchmark) with posix_spawn, stdin and
// stdout on pipes, `--log-level off`, and measures as a client would see it:
//   (a) startup: from just before posix_spawn to the answer of the first ping (several spawns, median);
//   (b) round trip: after initialize, sequential pings, one write() per request and a blocking read up to the
//       '\n' of the response; median, p90, p99 and max;
//   (c) idle memory: VmRSS and VmHWM of the daemon after the ping run and after 1 s idle.
// As a floor for (b) it also times the same round trip against `cat`, which echoes each line back: that is
// the cost of the pipes and the two context switches alone, on this machine.
//
// Round-trip latency depends mostly on where the scheduler puts the two processes: on one CPU a wake-up is a
// direct switch; across CPUs it is an inter-processor wake-up of an idle CPU (expensive in a VM). So (b) and
// the floor are also run with both processes pinned to one CPU and to two different CPUs (when there are two).
//
// Not a test: it prints figures and targets. It exits non-zero only if the daemon misbehaves (wrong answer,
// non-zero exit status), never because a target is missed.

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#ifndef SWITCHBOARD_BINARY
#define SWITCHBOARD_BINARY "switchboard"
#endif

#include "BenchSupport.h"

namespace {

using namespace bench;

constexpr int kStartupSpawns = 20;
constexpr int kWarmupPings = 1'000;
constexpr int kMeasuredPings = 20'000;
constexpr int kBaselineRoundTrips = 20'000;

constexpr double kTargetMedianUs = 25;
constexpr double kTargetP99Us = 60;
constexpr double kTargetRssMb = 10;
constexpr double kTargetStartupMs = 20;

// Where the client and the spawned process run. Children inherit the affinity they are spawned with.
enum class Placement { Free, SameCpu, OtherCpus };

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::Free: return "unpinned";
    case Placement::SameCpu: return "both on CPU 0";
    case Placement::OtherCpus: return "client on CPU 0, server on CPU 1";
  }
  return "";
}

cpu_set_t g_all_cpus;

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (::sched_setaffinity(0, sizeof set, &set) != 0) die("sched_setaffinity");
}

void unpin_self() {
  if (::sched_setaffinity(0, sizeof g_all_cpus, &g_all_cpus) != 0) die("sched_setaffinity");
}

// Spawns with the client pinned as `placement` says: children inherit the affinity they are spawned with.
Child spawn_placed(const std::vector<std::string>& args, Placement placement = Placement::Free) {
  switch (placement) {
    case Placement::Free: break;
    case Placement::SameCpu: pin_self(0); break;
    case Placement::OtherCpus: pin_self(1); break;
  }
  Child child = spawn(args);
  if (placement == Placement::OtherCpus) pin_self(0);
  return child;
}

bool is_event(std::string_view line) { return line.find(R"("method":"event")") != std::string_view::npos; }

// Reads lines until the response to `id`, skipping event notifications. Returns false at end of input.
std::string_view read_response(LineReader& reader, std::int64_t id) {
  std::string_view line;
  for (;;) {
    if (!reader.next(line)) fail("daemon closed its stdout while a response was expected");
    if (is_event(line)) continue;
    if (!is_result_for(line, id)) fail("unexpected response: " + std::string(line));
    return line;
  }
}

std::string ping_line(std::int64_t id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping"})" + "\n";
}

void expect_clean_exit(Child& child, LineReader& reader) {
  const int code = finish(child, reader);
  if (code != 0) fail("daemon exited with status " + std::to_string(code) + " (expected 0)");
}

struct Memory {
  long rss_kb = -1;
  long hwm_kb = -1;
};

Memory memory_of(pid_t pid) {
  Memory memory;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) memory.rss_kb = std::strtol(line.c_str() + 6, nullptr, 10);
    if (line.rfind("VmHWM:", 0) == 0) memory.hwm_kb = std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return memory;
}

std::vector<std::string> daemon_args(const std::string& binary) { return {binary, "stdio", "--log-level", "off"}; }

// (a) spawn -> first ping answered, in milliseconds.
void bench_startup(const std::string& binary) {
  std::vector<double> samples;
  const std::string ping = ping_line(0);
  for (int i = 0; i <= kStartupSpawns; ++i) {  // run 0 warms the page cache and is not counted
    const auto start = Clock::now();
    Child child = spawn(daemon_args(binary));
    write_all(child.to_child, ping);
    LineReader reader(child.from_child);
    read_response(reader, 0);
    const auto end = Clock::now();
    expect_clean_exit(child, reader);
    if (i > 0) samples.push_back(micros(end - start) / 1000.0);
  }
  const Stats s = stats_of(samples);
  std::printf("(a) startup: posix_spawn -> first ping answered, %d spawns (+1 warm-up)\n", kStartupSpawns);
  std::printf("    median %8.2f ms   (target <= %.0f ms: %s)\n", s.median, kTargetStartupMs,
              verdict(s.median, kTargetStartupMs));
  std::printf("    min    %8.2f ms\n    max    %8.2f ms\n\n", s.min, s.max);
}

// Sequential round trips: one write() per request, blocking read up to the response's '\n'.
std::vector<double> round_trips(Child& child, LineReader& reader, std::int64_t first_id, int count,
                                bool expect_json_rpc) {
  std::vector<std::string> lines;
  lines.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) lines.push_back(ping_line(first_id + i));
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(count));
  std::string_view line;
  for (int i = 0; i < count; ++i) {
    const std::string& request = lines[static_cast<std::size_t>(i)];
    const auto start = Clock::now();
    write_all(child.to_child, request);
    if (expect_json_rpc) {
      read_response(reader, first_id + i);
    } else if (!reader.next(line)) {
      fail("echo process closed its stdout");
    }
    samples.push_back(micros(Clock::now() - start));
  }
  return samples;
}

void print_latency(const char* title, const Stats& s, bool with_targets) {
  std::printf("%s\n", title);
  if (with_targets) {
    std::printf("    median %8.1f us   (target <= %.0f us: %s)\n", s.median, kTargetMedianUs,
                verdict(s.median, kTargetMedianUs));
    std::printf("    p90    %8.1f us\n", s.p90);
    std::printf("    p99    %8.1f us   (target <= %.0f us: %s)\n", s.p99, kTargetP99Us, verdict(s.p99, kTargetP99Us));
  } else {
    std::printf("    median %8.1f us\n    p90    %8.1f us\n    p99    %8.1f us\n", s.median, s.p90, s.p99);
  }
  std::printf("    max    %8.1f us\n    mean   %8.1f us\n    min    %8.1f us\n\n", s.max, s.mean, s.min);
}

// (b) on one daemon per placement, and (c) on the unpinned one.
void bench_round_trip_and_memory(const std::string& binary, Placement placement) {
  Child child = spawn_placed(daemon_args(binary), placement);
  LineReader reader(child.from_child);
  write_all(child.to_child,
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"bench"}}})"
            "\n");
  read_response(reader, 1);
  // Any event that follows the initialize response is skipped by read_response.
  round_trips(child, reader, 2, kWarmupPings, true);
  const Stats s = stats_of(round_trips(child, reader, 2 + kWarmupPings, kMeasuredPings, true));
  char title[200];
  std::snprintf(title, sizeof title, "(b) ping round trip after initialize, %d sequential pings (+%d warm-up), %s",
                kMeasuredPings, kWarmupPings, placement_name(placement));
  print_latency(title, s, true);

  if (placement == Placement::Free) {
    const Memory after_run = memory_of(child.pid);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const Memory after_idle = memory_of(child.pid);
    std::printf("(c) daemon memory (/proc/%d/status)\n", static_cast<int>(child.pid));
    std::printf("    after the ping run:  VmRSS %6.2f MB   VmHWM %6.2f MB\n",
                static_cast<double>(after_run.rss_kb) / 1024.0, static_cast<double>(after_run.hwm_kb) / 1024.0);
    const double idle_mb = static_cast<double>(after_idle.rss_kb) / 1024.0;
    std::printf("    after 1 s idle:      VmRSS %6.2f MB   VmHWM %6.2f MB   (target RSS <= %.0f MB: %s)\n", idle_mb,
                static_cast<double>(after_idle.hwm_kb) / 1024.0, kTargetRssMb, verdict(idle_mb, kTargetRssMb));
  }
  expect_clean_exit(child, reader);
  std::printf("    daemon exited with status 0 after stdin was closed\n\n");
  unpin_self();
}

// The floor: the same round trip against `cat`, which does no work besides copying the line back.
void bench_pipe_floor(Placement placement) {
  Child child = spawn_placed({"cat"}, placement);
  LineReader reader(child.from_child);
  round_trips(child, reader, 0, kWarmupPings, false);
  const Stats s = stats_of(round_trips(child, reader, 0, kBaselineRoundTrips, false));
  char title[200];
  std::snprintf(title, sizeof title, "(floor) same round trip against `cat` (pipes + scheduling only), %d lines, %s",
                kBaselineRoundTrips, placement_name(placement));
  print_latency(title, s, false);
  finish(child, reader);
  unpin_self();
}

}  // namespace

int main(int argc, char** argv) {
  bench::g_program = "bench_stdio_ping";
  const std::string binary = argc > 1 ? argv[1] : SWITCHBOARD_BINARY;
  std::signal(SIGPIPE, SIG_IGN);
  std::printf("bench_stdio_ping: %s stdio --log-level off (%u CPUs online)\n\n", binary.c_str(),
              std::thread::hardware_concurrency());
  if (::sched_getaffinity(0, sizeof g_all_cpus, &g_all_cpus) != 0) die("sched_getaffinity");
  const bool two_cpus = CPU_ISSET(0, &g_all_cpus) && CPU_ISSET(1, &g_all_cpus);
  bench_startup(binary);
  bench_round_trip_and_memory(binary, Placement::Free);
  bench_pipe_floor(Placement::Free);
  if (two_cpus) {
    for (const Placement placement : {Placement::SameCpu, Placement::OtherCpus}) {
      bench_round_trip_and_memory(binary, placement);
      bench_pipe_floor(placement);
    }
  }
  return 0;
}
