// bench_egress: event throughput from the bus to the reader of the daemon's stdout, in process.
//
// The end-to-end figure runs the real path of a streamed token: EventBus::publish -> bridge -> Egress (seq,
// serialization into a shared EncodedEvent) -> StdioTransport::on_event -> FdWriter (batched async writes)
// -> a pipe whose other end is read by a separate `cat` process writing to /dev/null. Small text deltas are
// published in batches from posted handlers on one io_context, so the writer makes progress between them,
// and the clock stops when the transport reports its output drained.
//
// To show where the time goes it also times the pieces alone, on the same events:
//   - the pipe alone: the same number of bytes written to `cat` in 64 KiB write()s;
//   - Egress::encode into one reused string (serialization only, no allocation, no I/O);
//   - encode into a reused buffer, copied into a fresh EncodedEvent per event (what on_bus_event did before it
//     recycled its EncodedEvents: the cost of two allocations per event);
//   - bus.publish -> bridge -> Egress with a sink that only counts bytes (no transport, no I/O).
// Last, json::append_quoted alone on texts of other shapes than a short delta (long ASCII, CJK, code full of
// escapes, control characters), so a change to the escaper shows what it costs where events are not small.
// Heap allocations are counted (operator new is replaced in this program) and reported per event.
//
// Usage: bench_egress [events [events-per-batch [pipe-buffer-bytes]]]
// (defaults: 2,000,000 events, 1,000 per batch, the kernel's default pipe buffer). Not a test: it prints figures and the target.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/json/JsonWriter.h"
#include "switchboard/protocol/generated/Events.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/support/Clock.h"
#include "switchboard/transport/StdioTransport.h"

// ---- allocation counting -------------------------------------------------------------------------------
// Single-threaded program (one io_context thread), so a plain counter is enough and costs next to nothing.
namespace {
std::uint64_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

extern char** environ;

namespace {

using namespace switchboard;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kDefaultEvents = 2'000'000;
constexpr std::size_t kDefaultBatch = 1'000;
std::size_t g_batch = kDefaultBatch;
int g_pipe_bytes = 0;  // 0: the kernel's default pipe buffer
constexpr int kRuns = 3;
constexpr double kTargetEventsPerSecond = 3e6;
constexpr std::string_view kSessions[] = {"session-1", "session-2", "session-3", "session-4"};
// What StdioTransport wraps around each egress payload (see src/transport/StdioTransport.cpp).
constexpr std::size_t kEnvelopeBytes = std::string_view(R"({"jsonrpc":"2.0","method":"event","params":)").size() + 2;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "bench_egress: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

protocol::MessageDeltaEvent delta() { return protocol::MessageDeltaEvent{"turn-1", "msg-1", protocol::DeltaKind::Text, "hello "}; }

struct Result {
  double seconds = 0;
  double cpu_seconds = 0;  // of this thread: unaffected by other processes competing for the 2 cores
  std::uint64_t bytes = 0;
  std::uint64_t allocations = 0;
};

// Runs `fn` kRuns times and keeps the run with the median time.
Result median_of(const std::function<Result()>& fn) {
  std::vector<Result> runs;
  for (int i = 0; i < kRuns; ++i) runs.push_back(fn());
  std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.seconds < b.seconds; });
  return runs[runs.size() / 2];
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double thread_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// `cat > /dev/null` reading `read_fd`, spawned without a shell.
pid_t spawn_cat(int read_fd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_fd, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  char cat[] = "cat";
  char* argv[] = {cat, nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, "cat", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    die("posix_spawn cat");
  }
  return pid;
}

void reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_egress: cat did not exit cleanly (status %d)\n", status);
    std::exit(1);
  }
}

struct CatPipe {
  int write_fd = -1;
  pid_t pid = -1;
  int pipe_size = 0;
};

CatPipe open_cat_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) die("pipe2");
  CatPipe pipe;
  if (g_pipe_bytes > 0 && ::fcntl(fds[1], F_SETPIPE_SZ, g_pipe_bytes) < 0) die("F_SETPIPE_SZ");
  pipe.pid = spawn_cat(fds[0]);
  ::close(fds[0]);
  pipe.write_fd = fds[1];
  pipe.pipe_size = ::fcntl(fds[1], F_GETPIPE_SZ);
  return pipe;
}

// A sink that only counts the bytes it is handed.
class CountingSink : public bus::EventSink {
 public:
  void on_event(const bus::EncodedEventPtr& event) override { bytes += event->json.size(); }
  std::uint64_t bytes = 0;
};

// ---- the pieces ------------------------------------------------------------------------------------------

// The same bytes as the end-to-end run, written to `cat` in 64 KiB chunks: what the pipe itself carries.
Result run_pipe_only(std::uint64_t total_bytes) {
  CatPipe cat = open_cat_pipe();
  const std::string chunk(64 * 1024, 'x');
  const auto allocations = g_allocations;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  std::uint64_t left = total_bytes;
  while (left > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    const ssize_t n = ::write(cat.write_fd, chunk.data(), want);
    if (n < 0) {
      if (errno == EINTR) continue;
      die("write");
    }
    left -= static_cast<std::uint64_t>(n);
  }
  ::close(cat.write_fd);
  reap(cat.pid);  // cat has read everything once it exits
  return Result{seconds_since(start), thread_cpu_seconds() - cpu_start, total_bytes, g_allocations - allocations};
}

// Egress::encode alone, into one reused string.
Result run_encode_reused(std::size_t events) {
  const bus::BusEvent event{std::string(kSessions[0]), protocol::EventPayload(std::in_place_type<protocol::MessageDeltaEvent>, delta())};
  const bus::WireEvent wire = *bus::bridge(event);
  std::string out;
  out.reserve(256);
  std::uint64_t bytes = 0;
  const auto allocations = g_allocations;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (std::size_t i = 0; i < events; ++i) {
    out.clear();
    bus::Egress::encode(wire, i + 1, unix_millis_now(), out);
    bytes += out.size();
  }
  return Result{seconds_since(start), thread_cpu_seconds() - cpu_start, bytes, g_allocations - allocations};
}

// Encode into a reused buffer, then copy into a fresh shared EncodedEvent per event: Egress::on_bus_event before
// it recycled its EncodedEvents, kept to show what the recycling saves.
Result run_encode_fresh(std::size_t events) {
  const bus::BusEvent event{std::string(kSessions[0]), protocol::EventPayload(std::in_place_type<protocol::MessageDeltaEvent>, delta())};
  const bus::WireEvent wire = *bus::bridge(event);
  std::string scratch;
  json::JsonWriter writer(scratch);
  std::uint64_t bytes = 0;
  const auto allocations = g_allocations;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (std::size_t i = 0; i < events; ++i) {
    auto encoded = std::make_shared<bus::EncodedEvent>();
    encoded->seq = i + 1;
    encoded->kind = wire.kind;
    encoded->session_id.assign(wire.session_id);
    writer.clear();
    bus::Egress::encode(wire, encoded->seq, unix_millis_now(), writer);
    encoded->json.assign(writer.text());
    const bus::EncodedEventPtr shared = std::move(encoded);
    bytes += shared->json.size();
  }
  return Result{seconds_since(start), thread_cpu_seconds() - cpu_start, bytes, g_allocations - allocations};
}

// bus.publish -> bridge -> Egress -> a counting sink. No transport, no I/O.
Result run_bus_to_egress(std::size_t events) {
  bus::EventBus bus;
  bus::EventBus::Installation installation(bus);
  bus::Egress egress(bus);
  CountingSink sink;
  egress.add_sink(sink);
  const std::string sessions[] = {std::string(kSessions[0]), std::string(kSessions[1]), std::string(kSessions[2]),
                                  std::string(kSessions[3])};
  const auto allocations = g_allocations;
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (std::size_t i = 0; i < events; ++i) bus.publish(sessions[i & 3], delta());
  const double seconds = seconds_since(start);
  const double cpu_seconds = thread_cpu_seconds() - cpu_start;
  egress.remove_sink(sink);
  return Result{seconds, cpu_seconds, sink.bytes, g_allocations - allocations};
}

// The whole path: bus -> bridge -> Egress -> StdioTransport -> FdWriter -> pipe -> `cat > /dev/null`.
// With `output_fd` >= 0 the transport writes there instead of to a `cat` pipe.
Result run_end_to_end(std::size_t events, int output_fd = -1) {
  CatPipe cat;
  if (output_fd < 0) {
    cat = open_cat_pipe();
    output_fd = cat.write_fd;
  }
  int input[2];  // the transport's input: a pipe nobody writes to (and the transport is never started)
  if (::pipe2(input, O_CLOEXEC) != 0) die("pipe2");

  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation(bus);
  bus::Egress egress(bus);
  rpc::Dispatcher dispatcher;
  CountingSink counter;  // first sink, so the byte count is exact; costs one virtual call per event
  egress.add_sink(counter);
  Result result;
  {
    transport::StdioTransport transport(io, dispatcher, egress,
                                        transport::StdioTransport::Options{input[0], output_fd, 8 * 1024 * 1024},
                                        [] {});
    if (cat.pid > 0) ::close(cat.write_fd);  // the transport holds its own duplicate
    transport.peer()->mark_initialized("bench", protocol::InitializeParams{});

    const std::string sessions[] = {std::string(kSessions[0]), std::string(kSessions[1]), std::string(kSessions[2]),
                                    std::string(kSessions[3])};
    std::size_t published = 0;
    Clock::time_point end;
    double cpu_end = 0;
    std::function<void()> batch = [&] {
      const std::size_t stop = std::min(events, published + g_batch);
      for (; published < stop; ++published) bus.publish(sessions[published & 3], delta());
      if (published < events) boost::asio::post(io, batch);
      else transport.when_output_drained([&] {
        end = Clock::now();
        cpu_end = thread_cpu_seconds();
      });
    };
    const auto allocations = g_allocations;
    const auto start = Clock::now();
    const double cpu_start = thread_cpu_seconds();
    boost::asio::post(io, batch);
    io.run();
    result.seconds = std::chrono::duration<double>(end - start).count();
    result.cpu_seconds = cpu_end - cpu_start;
    result.allocations = g_allocations - allocations;
  }
  egress.remove_sink(counter);
  result.bytes = counter.bytes + events * kEnvelopeBytes;
  ::close(input[0]);
  ::close(input[1]);
  if (cat.pid > 0) reap(cat.pid);
  return result;
}

// json::append_quoted on one text, repeated over about 20 MB of input; returns CPU ns per call.
double quote_ns(const std::string& text) {
  std::string out;
  out.reserve(text.size() * 6 + 16);
  const std::size_t calls = 20'000'000 / (text.size() + 16) + 1;
  std::uint64_t bytes = 0;
  const double cpu_start = thread_cpu_seconds();
  for (std::size_t i = 0; i < calls; ++i) {
    out.clear();
    json::append_quoted(out, text);
    bytes += out.size();
  }
  const double ns = (thread_cpu_seconds() - cpu_start) * 1e9 / static_cast<double>(calls);
  if (bytes == 0) std::abort();  // keeps the loop
  return ns;
}

void print_quote_shapes() {
  std::string cjk;
  for (int i = 0; i < 100; ++i) cjk += "\xE4\xB8\xAD\xE6\x96\x87";  // 200 CJK characters, 600 bytes
  std::string code;
  for (int i = 0; i < 20; ++i) code += "  if (x == \"a\") {\n    y = '\\t';\n  }\n";  // 700 bytes, 1 in 9 escaped
  const std::pair<const char*, std::string> shapes[] = {
      {"ASCII, 6 bytes", "hello "},          {"ASCII, 40 bytes", std::string(40, 'a')},
      {"ASCII, 4 KiB", std::string(4096, 'a')}, {"CJK, 600 bytes", cjk},
      {"code with escapes, 700 bytes", code},  {"control characters, 256 bytes", std::string(256, '\x01')}};
  std::printf("\njson::append_quoted alone, by text (cpu, median of %d)\n", kRuns);
  for (const auto& [name, text] : shapes) {
    double runs[kRuns];
    for (double& run : runs) run = quote_ns(text);
    std::sort(std::begin(runs), std::end(runs));
    const double ns = runs[kRuns / 2];
    std::printf("  %-32s %9.1f ns/call %7.2f GB/s of input\n", name, ns, static_cast<double>(text.size()) / ns);
  }
}

long vm_hwm_kb() {
  std::FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof line, status) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(status);
  return kb;
}

void print_header() {
  std::printf("  %-50s %10s %10s %9s %9s %8s\n", "", "events/s", "MB/s", "wall", "cpu", "allocs");
  std::printf("  %-50s %10s %10s %9s %9s %8s\n", "", "", "", "ns/event", "ns/event", "/event");
}

void print_row(const char* name, const Result& r, std::size_t events) {
  const auto n = static_cast<double>(events);
  std::printf("  %-50s %9.2fM %10.1f %9.1f %9.1f %8.2f\n", name, n / r.seconds / 1e6,
              static_cast<double>(r.bytes) / 1e6 / r.seconds, r.seconds * 1e9 / n, r.cpu_seconds * 1e9 / n,
              static_cast<double>(r.allocations) / n);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t events = kDefaultEvents;
  if (argc > 1) events = static_cast<std::size_t>(std::strtoull(argv[1], nullptr, 10));
  if (events == 0) events = kDefaultEvents;
  if (argc > 2) g_batch = static_cast<std::size_t>(std::strtoull(argv[2], nullptr, 10));
  if (g_batch == 0) g_batch = kDefaultBatch;
  if (argc > 3) g_pipe_bytes = std::atoi(argv[3]);
  std::signal(SIGPIPE, SIG_IGN);
  // FdWriter warns each time its backlog doubles past 16 MB; the peak RSS printed below shows the same.
  spdlog::set_level(spdlog::level::err);

  std::string sample;
  {
    const bus::BusEvent event{std::string(kSessions[0]), protocol::EventPayload(std::in_place_type<protocol::MessageDeltaEvent>, delta())};
    bus::Egress::encode(*bus::bridge(event), 1, unix_millis_now(), sample);
  }
  const CatPipe probe = open_cat_pipe();
  const int pipe_size = probe.pipe_size;
  ::close(probe.write_fd);
  reap(probe.pid);

  std::printf("bench_egress: %zu message.delta events, %zu per posted batch, %zu session ids, median of %d runs\n",
              events, g_batch, std::size(kSessions), kRuns);
  std::printf("  event (%zu bytes + %zu of envelope on the wire): %s\n", sample.size(), kEnvelopeBytes, sample.c_str());
  std::printf("  pipe buffer: %d bytes\n\n", pipe_size);

  const Result encode_reused = median_of([&] { return run_encode_reused(events); });
  const Result encode_fresh = median_of([&] { return run_encode_fresh(events); });
  const Result bus_to_egress = median_of([&] { return run_bus_to_egress(events); });
  const long hwm_before = vm_hwm_kb();
  const Result end_to_end = median_of([&] { return run_end_to_end(events); });
  const long hwm_after = vm_hwm_kb();
  const Result pipe_only = median_of([&] { return run_pipe_only(end_to_end.bytes); });

  std::printf("pieces (MB/s: serialized JSON; wall and cpu: this thread)\n");
  print_header();
  print_row("Egress::encode into a reused string", encode_reused, events);
  print_row("encode into a fresh EncodedEvent (no recycling)", encode_fresh, events);
  print_row("bus.publish -> bridge -> Egress -> counting sink", bus_to_egress, events);
  std::printf("  %-50s %10s %10.1f   (%.2f GB/s: %.1f MB in 64 KiB write()s)\n", "pipe alone -> cat > /dev/null", "",
              static_cast<double>(pipe_only.bytes) / 1e6 / pipe_only.seconds,
              static_cast<double>(pipe_only.bytes) / 1e9 / pipe_only.seconds, static_cast<double>(pipe_only.bytes) / 1e6);

  std::printf("\nend to end: bus -> bridge -> Egress -> StdioTransport -> pipe -> cat > /dev/null (MB/s: wire bytes)\n");
  print_header();
  print_row("end to end, until when_output_drained", end_to_end, events);
  const double rate = static_cast<double>(events) / end_to_end.seconds;
  std::printf("  %.1f MB on the wire in %.3f s; target >= %.0fM events/s: %s\n",
              static_cast<double>(end_to_end.bytes) / 1e6, end_to_end.seconds, kTargetEventsPerSecond / 1e6,
              rate >= kTargetEventsPerSecond ? "ok" : "MISSED");
  std::printf("  peak RSS of this process: %.1f MB before, %.1f MB after the end-to-end runs (writer backlog)\n",
              static_cast<double>(hwm_before) / 1024.0, static_cast<double>(hwm_after) / 1024.0);

  // A regular file or /dev/null cannot be polled: FdWriter then calls write() once per event.
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (devnull < 0) die("open /dev/null");
  const Result to_devnull = median_of([&] { return run_end_to_end(events, devnull); });
  ::close(devnull);
  std::printf("\nfor comparison, output to a descriptor epoll refuses (/dev/null): FdWriter's direct-write path\n");
  print_header();
  print_row("end to end, output fd = /dev/null", to_devnull, events);

  print_quote_shapes();
  return 0;
}
