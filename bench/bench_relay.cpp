// bench_relay: relay overhead of the Claude Code path, from the CLI writing a stdout line to a stdio client
// reading the translated event, at a sustained rate; with --agent opencode, of the OpenCode path, from an
// `opencode serve` stand-in (bench/fake_opencode, on 127.0.0.1) writing an event on its SSE stream to the stdio
// client reading the translated event:
//
//   fake send() -> TCP -> SseClient (HTTP chunked body, SseParser) -> OpenCodeRuntime (JSON parse, routing by
//   session) -> OpenCodeTranslator -> Session -> EventBus -> ... as below
//
// Spawns the real `switchboard stdio` (a temporary --data-dir, so the event log is on as in normal use; or
// --ephemeral) with SWITCHBOARD_CLAUDE_BIN pointing to fake_claude, which streams content_block_delta lines at
// a steady rate and stamps each with CLOCK_MONOTONIC right before its write(). The bench initializes, creates a
// "claude" session in a temporary cwd and sends one prompt per run; a dedicated thread reads the daemon's
// stdout and, for every message.delta event, takes latency = (time the read() that completed the line
// returned) - (the stamp in its text). The path measured is the whole relay:
//
//   fake write() -> pipe -> ChildProcess (FdReader, LineFramer) -> ClaudeTranslator (JSON parse) -> Session
//   -> EventBus -> bridge -> Egress (seq, encode; event log sink) -> StdioTransport -> FdWriter write() -> pipe
//   -> this reader
//
// It also reports the daemon's CPU time per event (/proc/<pid>/stat utime+stime, whole process, across the
// run), and, as a floor, the same measurement with fake_claude's stdout read directly by the bench (one pipe
// hop and no daemon): what the scheduler and the pipes cost on this machine.
//
// Not a test: it prints figures and the target. It exits non-zero only if something misbehaves (a lost or
// duplicated delta, an error response, a daemon that does not exit with status 0), never for a missed target.
//
// The OpenCode floor is fake_opencode's event stream read directly by the bench over TCP (no daemon).
//
// Usage: bench_relay [--agent claude|opencode] [--switchboard PATH] [--fake PATH] [--ephemeral] [--warmup N] [--no-floor]
//                    [--dump FILE] [--run RATE:COUNT]...   (default runs: 1000:6000 10000:101000 50000:101000)
//
// --dump writes one line per delta of the daemon runs: "<rate> <index> <written ns> <read ns> <end offset>" (times
// in CLOCK_MONOTONIC ns; the offset is where the event's line ends in the daemon's stdout).
// bench/relay_stages.py joins it with a `perf record` of the same run to split each delta's latency into stages.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#ifndef SWITCHBOARD_BINARY
#define SWITCHBOARD_BINARY "switchboard"
#endif
#ifndef FAKE_CLAUDE_BINARY
#define FAKE_CLAUDE_BINARY "fake_claude"
#endif
#ifndef FAKE_OPENCODE_BINARY
#define FAKE_OPENCODE_BINARY "fake_opencode"
#endif

extern char** environ;

#include "BenchSupport.h"

namespace {

using bench::monotonic_ns;
namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr double kTargetP99Us = 100;
constexpr double kTargetRate = 10'000;
constexpr long long kWarmupTurnDeltas = 2'000;  // a whole turn before the measured ones, not counted

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "bench_relay: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_relay: %s\n", what.c_str());
  std::exit(1);
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

struct Child {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
};

Child spawn(const std::vector<std::string>& args, const std::vector<std::string>& extra_environment, const fs::path& cwd) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  environment.insert(environment.end(), extra_environment.begin(), extra_environment.end());
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  Child child;
  const int rc = ::posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    die("posix_spawn " + args[0]);
  }
  ::close(in[0]);
  ::close(out[1]);
  child.to_child = in[1];
  child.from_child = out[0];
  return child;
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// utime + stime of a whole process (all its threads), in seconds.
double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');  // the command name may contain spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  long long utime = 0;
  long long stime = 0;
  for (int i = 3; fields >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// The stamp and index fake_claude put into a delta's text: "relay:<19 digits>:<index> ".
struct Stamp {
  std::int64_t written_ns;
  long long index;
};

std::optional<Stamp> stamp_in(std::string_view line) {
  const auto at = line.find("relay:");
  if (at == std::string_view::npos) return std::nullopt;
  const char* p = line.data() + at + 6;
  const char* end = line.data() + line.size();
  std::int64_t ts = 0;
  while (p < end && *p >= '0' && *p <= '9') ts = ts * 10 + (*p++ - '0');
  if (p == end || *p != ':') return std::nullopt;
  ++p;
  long long index = 0;
  while (p < end && *p >= '0' && *p <= '9') index = index * 10 + (*p++ - '0');
  return Stamp{ts, index};
}

// What one run saw: per delta, its index and latency.
struct Samples {
  std::vector<long long> index;
  std::vector<std::int64_t> latency_ns;
  std::vector<std::int64_t> written_ns;
  std::vector<std::uint64_t> end_offset;  // where the line ended in the stream read
  std::int64_t first_read_ns = 0;
  std::int64_t last_read_ns = 0;

  void add(const Stamp& stamp, std::int64_t read_ns, std::uint64_t offset) {
    if (index.empty()) first_read_ns = read_ns;
    last_read_ns = read_ns;
    index.push_back(stamp.index);
    latency_ns.push_back(read_ns - stamp.written_ns);
    written_ns.push_back(stamp.written_ns);
    end_offset.push_back(offset);
  }
  void clear() { *this = Samples{}; }
};

// Reads a descriptor line by line on its own thread; each line is handed over with the time the read() that
// completed it returned (taken before any parsing, so the reader's own work is not counted).
class StampedReader {
 public:
  // `end_offset`: the position in the stream right after the line's '\n'.
  using OnLine = std::function<void(std::string_view line, std::int64_t read_ns, std::uint64_t end_offset)>;

  StampedReader(int fd, OnLine on_line) : m_fd(fd), m_on_line(std::move(on_line)), m_thread([this] { run(); }) {}
  ~StampedReader() { m_thread.join(); }

 private:
  void run() {
    std::vector<char> buffer(1 << 20);
    std::size_t begin = 0;
    std::size_t end = 0;
    std::uint64_t total = 0;  // bytes read so far
    for (;;) {
      if (begin == end) begin = end = 0;
      if (end == buffer.size()) {
        if (begin > 0) {
          std::memmove(buffer.data(), buffer.data() + begin, end - begin);
          end -= begin;
          begin = 0;
        } else {
          buffer.resize(buffer.size() * 2);
        }
      }
      const ssize_t n = ::read(m_fd, buffer.data() + end, buffer.size() - end);
      const std::int64_t now = monotonic_ns();
      if (n < 0) {
        if (errno == EINTR) continue;
        die("read");
      }
      if (n == 0) return;
      end += static_cast<std::size_t>(n);
      total += static_cast<std::uint64_t>(n);
      while (const void* nl = std::memchr(buffer.data() + begin, '\n', end - begin)) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(nl) - (buffer.data() + begin));
        begin += length + 1;
        m_on_line(std::string_view(buffer.data() + begin - length - 1, length), now, total - (end - begin));
      }
    }
  }

  int m_fd;
  OnLine m_on_line;
  std::thread m_thread;
};

struct Stats {
  std::size_t count = 0;
  double median = 0, p90 = 0, p99 = 0, p999 = 0, max = 0, mean = 0;
};

Stats stats_of(std::vector<std::int64_t> ns) {
  Stats s;
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  const auto at = [&](double q) {  // nearest rank
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(ns.size()) + 0.999999);
    return static_cast<double>(ns[std::clamp<std::size_t>(rank, 1, ns.size()) - 1]) / 1e3;
  };
  double sum = 0;
  for (const auto v : ns) sum += static_cast<double>(v);
  s.count = ns.size();
  s.median = at(0.5);
  s.p90 = at(0.9);
  s.p99 = at(0.99);
  s.p999 = at(0.999);
  s.max = static_cast<double>(ns.back()) / 1e3;
  s.mean = sum / static_cast<double>(ns.size()) / 1e3;
  return s;
}

struct Run {
  long long rate;   // lines per second asked of the fake
  long long count;  // deltas in the turn, warm-up included
};

struct Options {
  std::string agent = "claude";  // or "opencode"
  std::string switchboard = SWITCHBOARD_BINARY;
  std::string fake;  // default: fake_claude or fake_opencode, by agent
  bool ephemeral = false;
  bool floor = true;
  long long warmup = 1'000;  // leading deltas of each run that are not counted
  std::vector<Run> runs;
  std::string dump;  // if set: every delta of the daemon runs, for bench/relay_stages.py
};

std::string label_of(const Run& run) {
  if (run.rate == 0) return "max";
  return run.rate % 1000 == 0 ? std::to_string(run.rate / 1000) + "k/s" : std::to_string(run.rate) + "/s";
}

// Checks a run's deltas (all there, in order, none twice), drops the warm-up and prints the figures.
Stats report(const Run& run, const Samples& samples, long long warmup) {
  const std::string what = label_of(run);
  if (static_cast<long long>(samples.index.size()) != run.count) {
    fail(what + ": expected " + std::to_string(run.count) + " deltas, got " +
         std::to_string(samples.index.size()));
  }
  for (std::size_t i = 0; i < samples.index.size(); ++i) {
    if (samples.index[i] != static_cast<long long>(i)) fail(what + ": deltas out of order or lost");
  }
  const auto skip = static_cast<std::size_t>(std::min(warmup, run.count - 1));
  const std::vector<std::int64_t> kept(samples.latency_ns.begin() + static_cast<std::ptrdiff_t>(skip), samples.latency_ns.end());
  const Stats s = stats_of(kept);
  const double written_s = static_cast<double>(samples.written_ns.back() - samples.written_ns[skip]) / 1e9;
  const double rate = written_s > 0 ? static_cast<double>(kept.size() - 1) / written_s : 0;
  std::printf("  %-7s %6lld/s asked, %8.0f/s written  n=%-7zu median %7.1f  p90 %7.1f  p99 %8.1f  p99.9 %8.1f  max %9.1f  mean %7.1f us\n",
              what.c_str(), run.rate, rate, s.count, s.median, s.p90, s.p99, s.p999, s.max, s.mean);
  return s;
}

// ---- through the daemon ---------------------------------------------------------------------------------------

class DaemonSession {
 public:
  DaemonSession(const Options& options, const fs::path& scratch) {
    std::vector<std::string> args{options.switchboard, "--log-level", "warn", "stdio"};
    if (options.ephemeral) {
      args.emplace_back("--ephemeral");
    } else {
      args.insert(args.end(), {"--data-dir", (scratch / "data").string()});
    }
    m_child = spawn(args, {(options.agent == "opencode" ? "SWITCHBOARD_OPENCODE_BIN=" : "SWITCHBOARD_CLAUDE_BIN=") + options.fake}, {});
    m_reader.emplace(m_child.from_child, [this](std::string_view line, std::int64_t read_ns, std::uint64_t offset) {
      on_line(line, read_ns, offset);
    });
  }

  ~DaemonSession() {
    if (m_child.to_child >= 0) ::close(m_child.to_child);
  }

  pid_t pid() const { return m_child.pid; }

  Json call(const std::string& method, Json params, std::chrono::seconds timeout) {
    const std::int64_t id = ++m_next_id;
    const Json request{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
    write_all(m_child.to_child, request.dump() + "\n");
    std::unique_lock lock(m_mutex);
    if (!m_changed.wait_for(lock, timeout, [&] { return m_responses.count(id) > 0; })) {
      fail(method + ": no response within " + std::to_string(timeout.count()) + " s");
    }
    Json response = std::move(m_responses[id]);
    m_responses.erase(id);
    if (!response.contains("result")) fail(method + " failed: " + response.dump());
    return response["result"];
  }

  // Starts collecting deltas into a fresh sample set; take() hands it over.
  void begin_run() {
    std::lock_guard lock(m_mutex);
    m_samples.clear();
  }
  Samples take() {
    std::lock_guard lock(m_mutex);
    return std::move(m_samples);
  }

  // Closes stdin (the daemon shuts down), waits for it; its exit status.
  int finish() {
    ::close(std::exchange(m_child.to_child, -1));
    m_reader.reset();  // joins at EOF
    ::close(m_child.from_child);
    return wait_exit(m_child.pid);
  }

 private:
  void on_line(std::string_view line, std::int64_t read_ns, std::uint64_t offset) {
    if (line.starts_with(R"({"jsonrpc":"2.0","method":"event")")) {
      if (line.find(R"("type":"message.delta")") == std::string_view::npos) return;
      const auto stamp = stamp_in(line);
      if (!stamp) return;
      std::lock_guard lock(m_mutex);
      m_samples.add(*stamp, read_ns, offset);
      return;
    }
    Json message = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!message.is_object() || !message.contains("id") || !message["id"].is_number_integer()) {
      std::fprintf(stderr, "bench_relay: unexpected line from the daemon: %.300s\n", std::string(line).c_str());
      return;
    }
    const auto id = message["id"].get<std::int64_t>();
    std::lock_guard lock(m_mutex);
    m_responses[id] = std::move(message);
    m_changed.notify_all();
  }

  Child m_child;
  std::int64_t m_next_id = 0;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::map<std::int64_t, Json> m_responses;
  Samples m_samples;
  std::optional<StampedReader> m_reader;
};

std::string prompt_for(long long count, long long rate) {
  return "relay-bench deltas=" + std::to_string(count) + " rate=" + std::to_string(rate);
}

std::chrono::seconds turn_timeout(const Run& run) {
  return std::chrono::seconds(60 + (run.rate > 0 ? run.count / run.rate : 0));
}

std::vector<Stats> bench_daemon(const Options& options, const fs::path& scratch) {
  fs::create_directories(scratch / "work");
  DaemonSession daemon(options, scratch);
  daemon.call("initialize",
              {{"protocolVersion", 1}, {"clientInfo", {{"name", "bench_relay"}}}, {"capabilities", {{"answersPermissions", false}}}},
              std::chrono::seconds(30));
  const Json created = daemon.call("session.create", {{"agent", options.agent}, {"cwd", (scratch / "work").string()}},
                                   std::chrono::seconds(30));
  const std::string session = created["session"]["sessionId"];

  // A first turn warms everything up (the CLI's start, first allocations, the event log's first writes).
  daemon.begin_run();
  daemon.call("session.send", {{"sessionId", session}, {"text", prompt_for(kWarmupTurnDeltas, 10'000)}}, std::chrono::seconds(90));

  std::printf("through the daemon (%s stdio %s; %s), first %lld deltas of each run not counted:\n",
              options.switchboard.c_str(), options.ephemeral ? "--ephemeral" : "--data-dir <tmp> (event log on)",
              options.agent == "opencode" ? "fake_opencode as SWITCHBOARD_OPENCODE_BIN" : "fake_claude as SWITCHBOARD_CLAUDE_BIN",
              options.warmup);
  std::printf("  daemon pid %d\n", static_cast<int>(daemon.pid()));
  std::FILE* dump = options.dump.empty() ? nullptr : std::fopen(options.dump.c_str(), "w");
  if (!options.dump.empty() && dump == nullptr) die("cannot write " + options.dump);
  std::vector<Stats> results;
  std::vector<std::string> notes;
  for (const Run& run : options.runs) {
    daemon.begin_run();
    const double cpu_before = cpu_seconds(daemon.pid());
    const Json done = daemon.call("session.send", {{"sessionId", session}, {"text", prompt_for(run.count, run.rate)}},
                                  turn_timeout(run));
    const double cpu = cpu_seconds(daemon.pid()) - cpu_before;
    if (done.value("stopReason", "") != "end_turn") fail("turn did not end normally: " + done.dump());
    const Samples samples = daemon.take();
    results.push_back(report(run, samples, options.warmup));
    for (std::size_t i = 0; dump != nullptr && i < samples.index.size(); ++i) {
      std::fprintf(dump, "%lld %lld %" PRId64 " %" PRId64 " %" PRIu64 "\n", run.rate, samples.index[i],
                   samples.written_ns[i], samples.written_ns[i] + samples.latency_ns[i], samples.end_offset[i]);
    }
    char note[400];
    std::snprintf(note, sizeof note, "  %-7s daemon CPU %.2f s for %lld deltas = %.1f us/delta (%.0f%% of one CPU); %s",
                  label_of(run).c_str(), cpu,
                  run.count, cpu * 1e6 / static_cast<double>(run.count),
                  100 * cpu / (static_cast<double>(samples.last_read_ns - samples.first_read_ns) / 1e9),
                  done.value("text", "").c_str());
    notes.push_back(note);
  }
  if (dump != nullptr) std::fclose(dump);
  for (const auto& note : notes) std::printf("%s\n", note.c_str());
  const int status = daemon.finish();
  if (status != 0) fail("daemon exited with status " + std::to_string(status) + " (expected 0)");
  std::printf("  daemon exited with status 0 after stdin was closed\n\n");
  return results;
}

// ---- the floor: fake_claude read directly -----------------------------------------------------------------------

void bench_floor(const Options& options, const fs::path& scratch) {
  std::printf("floor: fake_claude's stdout read directly by this process (one pipe hop, no daemon):\n");
  for (const Run& run : options.runs) {
    Child fake = spawn({options.fake, "-p", "--input-format", "stream-json", "--output-format", "stream-json"}, {}, scratch);
    Samples samples;
    {
      StampedReader reader(fake.from_child, [&](std::string_view line, std::int64_t read_ns, std::uint64_t offset) {
        if (line.find(R"("type":"text_delta")") == std::string_view::npos) return;
        if (const auto stamp = stamp_in(line)) samples.add(*stamp, read_ns, offset);
      });
      const std::string user = R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":")" +
                               prompt_for(run.count, run.rate) + "\"}]}}\n";
      write_all(fake.to_child, user);
      ::close(fake.to_child);  // the fake finishes the turn, then exits at EOF
    }
    ::close(fake.from_child);
    if (wait_exit(fake.pid) != 0) fail("fake_claude failed");
    report(run, samples, options.warmup);
  }
  std::printf("\n");
}

// The OpenCode floor: fake_opencode's event stream read by this process over TCP on 127.0.0.1 (one TCP hop, no
// daemon), each run's prompt posted to it as the adapter posts it.
int connect_local(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) die("connect");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void bench_opencode_floor(const Options& options, const fs::path& scratch) {
  std::printf("floor: fake_opencode's event stream read directly by this process over TCP (no daemon):\n");
  for (const Run& run : options.runs) {
    Child fake = spawn({options.fake, "serve", "--hostname", "127.0.0.1", "--port", "0"}, {}, scratch);
    std::string banner;
    for (char c = 0; c != '\n';) {
      if (::read(fake.from_child, &c, 1) != 1) fail("fake_opencode printed no port");
      banner += c;
    }
    const auto port = static_cast<std::uint16_t>(std::stoi(banner.substr(banner.rfind(':') + 1)));
    const int stream = connect_local(port);
    write_all(stream, "GET /global/event HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n");
    Samples samples;
    std::mutex mutex;
    std::condition_variable idle;
    bool ended = false;
    bool connected = false;
    {
      StampedReader reader(stream, [&](std::string_view line, std::int64_t read_ns, std::uint64_t offset) {
        if (line.find(R"("type":"message.part.delta")") != std::string_view::npos) {
          if (const auto stamp = stamp_in(line)) samples.add(*stamp, read_ns, offset);
        } else if (line.find(R"("type":"server.connected")") != std::string_view::npos ||
                   line.find(R"("type":"session.idle")") != std::string_view::npos) {
          std::lock_guard lock(mutex);
          (line.find("server.connected") != std::string_view::npos ? connected : ended) = true;
          idle.notify_all();
        }
      });
      {
        std::unique_lock lock(mutex);
        if (!idle.wait_for(lock, std::chrono::seconds(30), [&] { return connected; })) fail("fake_opencode's stream did not open");
      }
      const int post = connect_local(port);
      const std::string body = R"({"parts":[{"type":"text","text":")" + prompt_for(run.count, run.rate) + "\"}]}";
      write_all(post, "POST /session/ses_floor/prompt_async HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body);
      {
        std::unique_lock lock(mutex);
        if (!idle.wait_for(lock, turn_timeout(run), [&] { return ended; })) fail("fake_opencode's turn did not end");
      }
      ::close(post);
      ::shutdown(stream, SHUT_RDWR);  // the reader's read() returns 0: it ends
    }
    ::close(stream);
    ::kill(fake.pid, SIGTERM);
    ::close(fake.to_child);
    ::close(fake.from_child);
    wait_exit(fake.pid);
    report(run, samples, options.warmup);
  }
  std::printf("\n");
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--agent") {
      options.agent = value();
      if (options.agent != "claude" && options.agent != "opencode") fail("--agent is claude or opencode");
    } else if (arg == "--switchboard") {
      options.switchboard = value();
    } else if (arg == "--fake") {
      options.fake = value();
    } else if (arg == "--ephemeral") {
      options.ephemeral = true;
    } else if (arg == "--no-floor") {
      options.floor = false;
    } else if (arg == "--dump") {
      options.dump = value();
    } else if (arg == "--warmup") {
      options.warmup = std::stoll(value());
    } else if (arg == "--run") {
      const std::string spec = value();
      const auto colon = spec.find(':');
      if (colon == std::string::npos) fail("--run wants RATE:COUNT");
      options.runs.push_back(Run{std::stoll(spec.substr(0, colon)), std::stoll(spec.substr(colon + 1))});
    } else {
      fail("unknown argument " + std::string(arg) +
           " (usage: bench_relay [--agent claude|opencode] [--switchboard PATH] [--fake PATH] [--ephemeral] [--warmup N] [--no-floor] [--dump FILE] [--run RATE:COUNT]...)");
    }
  }
  if (options.runs.empty()) options.runs = {{1'000, 6'000}, {10'000, 101'000}, {50'000, 101'000}};
  for (const Run& run : options.runs) {
    if (run.count <= options.warmup + 1 || run.rate < 0) fail("each run needs more deltas than --warmup, and a rate >= 0");
  }
  if (options.fake.empty()) options.fake = options.agent == "opencode" ? FAKE_OPENCODE_BINARY : FAKE_CLAUDE_BINARY;
  options.switchboard = fs::absolute(options.switchboard).string();
  options.fake = fs::absolute(options.fake).string();
  return options;
}

}  // namespace

// The first line of /proc/loadavg: how busy the machine was (the figures depend on it).
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string line;
  std::getline(in, line);
  return line;
}

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  std::string scratch_name_text = (std::filesystem::temp_directory_path() / "bench-relay-XXXXXX").string();
  char* scratch_name = scratch_name_text.data();
  if (::mkdtemp(scratch_name) == nullptr) die("mkdtemp");
  const fs::path scratch = scratch_name;
  std::printf("bench_relay: %s -> daemon -> stdio client read(), message.delta latency (%u CPUs online)\n",
              options.agent == "opencode" ? "OpenCode server SSE event send()" : "CLI write()", std::thread::hardware_concurrency());
  std::printf("load average at the start: %s\n\n", load_average().c_str());

  const auto results = bench_daemon(options, scratch);
  if (options.floor && options.agent == "opencode") bench_opencode_floor(options, scratch);
  if (options.floor && options.agent == "claude") bench_floor(options, scratch);

  for (std::size_t i = 0; i < options.runs.size(); ++i) {
    if (options.runs[i].rate != static_cast<long long>(kTargetRate)) continue;
    std::printf("target: p99 <= %.0f us at %.0f events/s: p99 %.1f us (%s)\n", kTargetP99Us, kTargetRate, results[i].p99,
                results[i].p99 <= kTargetP99Us ? "ok" : "MISSED");
  }
  std::printf("load average at the end: %s\n", load_average().c_str());
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  return 0;
}
