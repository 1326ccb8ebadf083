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

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kStartupSpawns = 20;
constexpr int kWarmupPings = 1'000;
constexpr int kMeasuredPings = 20'000;
constexpr int kBaselineRoundTrips = 20'000;

constexpr double kTargetMedianUs = 25;
constexpr double kTargetP99Us = 60;
constexpr double kTargetRssMb = 10;
constexpr double kTargetStartupMs = 20;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "bench_stdio_ping: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_stdio_ping: %s\n", what.c_str());
  std::exit(1);
}

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

double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// A child process with its stdin and stdout on pipes (stderr inherited).
struct Child {
  pid_t pid = -1;
  int to_child = -1;    // write end of the child's stdin
  int from_child = -1;  // read end of the child's stdout
};

Child spawn(const std::vector<std::string>& args, Placement placement = Placement::Free) {
  switch (placement) {
    case Placement::Free: break;
    case Placement::SameCpu: pin_self(0); break;
    case Placement::OtherCpus: pin_self(1); break;
  }
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  Child child;
  const int rc = ::posix_spawnp(&child.pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    die(("posix_spawn " + args[0]).c_str());
  }
  if (placement == Placement::OtherCpus) pin_self(0);
  ::close(in[0]);
  ::close(out[1]);
  child.to_child = in[1];
  child.from_child = out[0];
  return child;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      die("write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Blocking line reader over a descriptor; lines are returned without their '\n'.
class LineReader {
 public:
  explicit LineReader(int fd) : m_fd(fd), m_buffer(64 * 1024) {}

  // The next line, or false at end of input.
  bool next(std::string_view& line) {
    for (;;) {
      if (const void* nl = std::memchr(m_buffer.data() + m_begin, '\n', m_end - m_begin)) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(nl) - (m_buffer.data() + m_begin));
        line = std::string_view(m_buffer.data() + m_begin, length);
        m_begin += length + 1;
        return true;
      }
      if (m_begin == m_end) m_begin = m_end = 0;
      if (m_end == m_buffer.size()) {
        if (m_begin > 0) {
          std::memmove(m_buffer.data(), m_buffer.data() + m_begin, m_end - m_begin);
          m_end -= m_begin;
          m_begin = 0;
        } else {
          m_buffer.resize(m_buffer.size() * 2);
        }
      }
      const ssize_t n = ::read(m_fd, m_buffer.data() + m_end, m_buffer.size() - m_end);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("read");
      }
      if (n == 0) return false;
      m_end += static_cast<std::size_t>(n);
    }
  }

 private:
  int m_fd;
  std::vector<char> m_buffer;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
};

bool is_event(std::string_view line) { return line.find(R"("method":"event")") != std::string_view::npos; }

// True if `line` is a successful response to request `id`.
bool is_result_for(std::string_view line, std::int64_t id) {
  char needle[40];
  const int n = std::snprintf(needle, sizeof needle, "\"id\":%" PRId64 ",", id);
  return line.find(std::string_view(needle, static_cast<std::size_t>(n))) != std::string_view::npos &&
         line.find("\"result\":") != std::string_view::npos;
}

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

// Closes the child's stdin, reads its stdout to the end and returns its exit status (or -1 if it did not
// exit normally).
int finish(Child& child, LineReader& reader) {
  ::close(child.to_child);
  std::string_view line;
  while (reader.next(line)) {
  }
  ::close(child.from_child);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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

struct Stats {
  double median, p90, p99, max, min, mean;
};

Stats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(i, samples.size() - 1)];
  };
  double sum = 0;
  for (const double s : samples) sum += s;
  return Stats{at(0.5), at(0.9), at(0.99), samples.back(), samples.front(), sum / static_cast<double>(samples.size())};
}

const char* verdict(double value, double target) { return value <= target ? "ok" : "MISSED"; }

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
  Child child = spawn(daemon_args(binary), placement);
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
  Child child = spawn({"cat"}, placement);
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
