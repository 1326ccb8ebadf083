// bench_session_list: what one session.list page costs as the number of sessions grows (issue 17).
//
// An engine restored with N sessions (as after a restart with years of imported history; no agent, no store),
// then session.list called in process, the way the dispatcher calls it: the first page of 50, a page deep in
// the list (after a cursor halfway down), and a page with a text filter that one session in ten matches. Each
// figure is the median and the 99th percentile of 200 calls. The target: <= 1 ms for a page of 50 at 100,000
// sessions, whatever N. It also gives the engine's memory per session (resident set growth while restoring).
//
// Usage: bench_session_list [N ...]  (default: 5000 20000 100000). Build it in a release tree.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include "engine/Engine.h"
#include "switchboard/bus/EventBus.h"

namespace {

using namespace switchboard;
using Clock = std::chrono::steady_clock;
namespace p = protocol;

constexpr int kCalls = 200;
constexpr double kTargetMs = 1.0;

long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

struct Figure {
  double median_ms;
  double p99_ms;
  std::size_t returned;
};

template <class Call>
Figure measure(Call call) {
  std::vector<double> ms;
  std::size_t returned = 0;
  for (int i = 0; i < kCalls; ++i) {
    const auto start = Clock::now();
    returned = call().sessions.size();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 99 / 100], returned};
}

void run(int sessions) {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  const long before = resident_kib();
  engine::Engine engine(io, bus, {}, engine::EngineConfig{});
  engine::PersistedState state;
  for (int i = 0; i < sessions; ++i) {
    p::SessionInfo info;
    info.session_id = "s-" + std::to_string(1'000'000 + i);
    info.agent = i % 2 ? "codex" : "claude";
    info.cwd = "/home/me/src/project-" + std::to_string(i % 40);
    info.title = (i % 10 ? "Refactor the parser, step " : "Fix the login bug, step ") + std::to_string(i);
    info.created_at = info.updated_at = 1'700'000'000'000 + i * 1000;
    state.sessions.push_back(engine::StoredSession{std::move(info), {}});
  }
  engine.restore(std::move(state));
  const long after = resident_kib();

  p::SessionListParams first;
  first.limit = 50;
  p::SessionListParams deep = first;
  {
    p::SessionListParams walk = first;
    walk.limit = 500;
    for (int page = 0; page < sessions / 2 / 500; ++page) walk.cursor = engine.list_sessions(walk).next_cursor;
    deep.cursor = walk.cursor;
  }
  p::SessionListParams text = first;
  text.text = "login bug";

  const auto a = measure([&] { return engine.list_sessions(first); });
  const auto b = measure([&] { return engine.list_sessions(deep); });
  const auto c = measure([&] { return engine.list_sessions(text); });
  std::printf("%7d sessions | first page %.3f ms (p99 %.3f) | page at the middle %.3f ms (p99 %.3f) | "
              "text filter %.3f ms (p99 %.3f) | %zu/%zu/%zu returned | %.2f KiB per session\n",
              sessions, a.median_ms, a.p99_ms, b.median_ms, b.p99_ms, c.median_ms, c.p99_ms, a.returned, b.returned,
              c.returned, static_cast<double>(after - before) / sessions);
  if (a.median_ms > kTargetMs || b.median_ms > kTargetMs) std::printf("        target missed: <= %.1f ms per page of 50\n", kTargetMs);
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {5000, 20000, 100000};
  std::printf("session.list, in process, %d calls per figure (median, p99); target <= %.1f ms per page of 50\n",
              kCalls, kTargetMs);
  for (const int n : sizes) run(n);
  return 0;
}
