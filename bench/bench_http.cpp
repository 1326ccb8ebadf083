// bench_http: the HTTP side, measured in process with real loopback sockets.
//
//   (a) POST /rpc ping round trip over one keep-alive connection: median, p90, p99 over 10,000 calls.
//   (b) SSE fan-out: events/s delivered to every one of 1, 10 and 100 clients (each client reads on its own
//       thread and counts frames), and the same with one extra client that never reads (stalled): the others'
//       rate, whether the stalled one was cut, and the process's RSS.
//
// The server runs on its own thread with the daemon's real classes (dispatcher, bus, egress, SSE hub, HTTP
// server); clients are blocking sockets on other threads, so client and server compete for the 2 cores like a
// real browser and daemon would. Not a test: prints figures.

#include <netinet/tcp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/HttpHarness.h"
#include "support/RawHttpClient.h"

using switchboard::testing::HttpHarness;
using switchboard::testing::RawHttpClient;
using Clock = std::chrono::steady_clock;

namespace {

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

void rpc_round_trip() {
  HttpHarness h;
  RawHttpClient client(h.port(), 10000);
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  const std::vector<std::string> headers{h.bearer(), "Content-Type: application/json"};
  for (int i = 0; i < 500; ++i) client.request("POST", "/rpc", headers, body);  // warm up
  std::vector<double> micros;
  constexpr int kCalls = 10000;
  micros.reserve(kCalls);
  for (int i = 0; i < kCalls; ++i) {
    const auto start = Clock::now();
    const auto response = client.request("POST", "/rpc", headers, body);
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (response.status != 200) {
      std::printf("unexpected status %d\n", response.status);
      return;
    }
  }
  std::printf("POST /rpc ping, keep-alive, %d calls: median %.1f us, p90 %.1f us, p99 %.1f us (target: median <= 60 us)\n",
              kCalls, percentile(micros, 0.5), percentile(micros, 0.9), percentile(micros, 0.99));
}

void fan_out(int clients, bool with_stalled) {
  switchboard::http::SseLimits limits;
  limits.replay_events = 1000;
  HttpHarness h(limits);
  std::unique_ptr<RawHttpClient> stalled;
  if (with_stalled) {
    stalled = std::make_unique<RawHttpClient>(h.port(), 10000, 4096);
    stalled->send_request("GET", "/events", {h.bearer()});
  }
  // Fewer events for many clients: the total number of frames delivered stays comparable.
  const int kEvents = clients >= 100 ? 20000 : 200000;
  std::vector<std::unique_ptr<RawHttpClient>> readers;
  std::vector<std::atomic<int>> received(static_cast<std::size_t>(clients));
  for (int i = 0; i < clients; ++i) {
    readers.push_back(std::make_unique<RawHttpClient>(h.port(), 20000));
    readers.back()->send_request("GET", "/events", {h.bearer()});
    RawHttpClient::Response head;
    readers.back()->read_head(head);
    readers.back()->read_frame();  // retry hint
  }
  while (h.sse_clients() < static_cast<std::size_t>(clients + (with_stalled ? 1 : 0))) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      while (received[static_cast<std::size_t>(i)] < kEvents) {
        const auto frame = readers[static_cast<std::size_t>(i)]->read_frame();
        if (!frame) return;
        if (frame->rfind("id: ", 0) == 0) ++received[static_cast<std::size_t>(i)];
      }
    });
  }
  const auto start = Clock::now();
  // Publish in batches, keeping the slowest live reader within the hub's queue limit (a real agent produces
  // events far slower than this; the point is the daemon's delivery rate, not overrunning clients).
  for (int published = 0; published < kEvents; published += 200) {
    for (;;) {
      int slowest = kEvents;
      for (auto& r : received) slowest = std::min(slowest, r.load());
      if (published - slowest < 3000) break;
      std::this_thread::yield();
    }
    h.publish_deltas(200, "s-1", published);
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  int complete = 0;
  for (auto& r : received) complete += r == kEvents ? 1 : 0;
  std::printf("SSE fan-out to %3d client(s)%s: %d events in %.2f s = %.0f events/s per client, %.0f frames/s total; "
              "%d/%d clients got all; RSS %ld MiB%s\n",
              clients, with_stalled ? " + 1 stalled" : "", kEvents, seconds, kEvents / seconds,
              kEvents * static_cast<double>(clients) / seconds, complete, clients, rss_kib() / 1024,
              with_stalled ? (h.sse_clients() == static_cast<std::size_t>(clients) ? "; stalled client was cut" : "; stalled client still attached") : "");
}

}  // namespace

int main() {
  rpc_round_trip();
  for (const int clients : {1, 10, 100}) fan_out(clients, false);
  fan_out(10, true);
  return 0;
}
