#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/CountOccurrences.h"
#include "support/FdIo.h"
#include "support/Pipe.h"
#include "support/SpawnedDaemon.h"

// Logging never blocks the reactor: a parent that pipes the daemon's stderr and never reads it (Node's default
// spawn) gets its lines dropped and counted once the pipe is full, and the daemon keeps answering.

namespace daemon_logging_tests {

using nlohmann::json;
using switchboard::testing::SpawnedDaemon;
using switchboard::testing::write_all;
using Clock = std::chrono::steady_clock;
using switchboard::testing::Pipe;
using switchboard::testing::count_occurrences;

// Reads what `fd` has within `timeout`; false on timeout or EOF.
bool read_some(int fd, std::string& into, std::chrono::milliseconds timeout) {
  pollfd poll_fd{fd, POLLIN, 0};
  if (::poll(&poll_fd, 1, static_cast<int>(timeout.count())) != 1) return false;
  char buf[65536];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0) return false;
  into.append(buf, static_cast<std::size_t>(n));
  return true;
}

TEST_CASE("logging: a parent that never reads stderr does not stall the daemon and its dropped lines are counted",
          "[daemon][logging]") {
  std::signal(SIGPIPE, SIG_IGN);
  Pipe in;
  Pipe out;
  Pipe err;  // nobody reads it until the end: it fills after ~64 KiB
  SpawnedDaemon daemon({"--log-level", "warn", "stdio", "--ephemeral", "--max-line-bytes", "1024"}, in.read_end(), out.write_end(),
                       err.write_end());
  REQUIRE(daemon.started());
  in.close_read();
  out.close_write();
  err.close_write();

  // 10,000 over-long lines, each a warning on stderr (~90 bytes: ~900 KB in all), with a ping after every 100.
  constexpr int kWarnings = 10000;
  constexpr int kEvery = 100;
  std::mutex mutex;
  std::map<int, Clock::time_point> sent;  // ping id -> when it was written
  std::thread writer([&] {
    const std::string overlong = std::string(1100, 'x') + "\n";
    const std::string init =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})";
    if (!write_all(in.write_end(), init + "\n")) return;
    for (int i = 1; i <= kWarnings / kEvery; ++i) {
      std::string chunk;
      for (int j = 0; j < kEvery; ++j) chunk += overlong;
      if (!write_all(in.write_end(), chunk)) return;
      {
        std::lock_guard lock(mutex);
        sent[i] = Clock::now();
      }
      if (!write_all(in.write_end(), R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"ping"})" + "\n")) return;
    }
  });

  // Every ping is answered, each within a few seconds of being sent (before the fix the daemon stopped at the
  // first write to the full pipe, and this loop timed out).
  std::string stdout_text;
  std::map<int, Clock::duration> latency;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  std::size_t scanned = 0;
  while (static_cast<int>(latency.size()) < kWarnings / kEvery && Clock::now() < deadline) {
    if (!read_some(out.read_end(), stdout_text, std::chrono::seconds(10))) break;
    for (std::size_t end; (end = stdout_text.find('\n', scanned)) != std::string::npos; scanned = end + 1) {
      const auto message = json::parse(stdout_text.substr(scanned, end - scanned), nullptr, false);
      if (!message.is_object() || !message.contains("result") || !message["id"].is_number_integer()) continue;
      const int id = message["id"].get<int>();
      if (id == 0) continue;
      std::lock_guard lock(mutex);
      latency[id] = Clock::now() - sent.at(id);
    }
  }
  const bool all_answered = static_cast<int>(latency.size()) == kWarnings / kEvery;
  if (!all_answered) ::kill(daemon.pid(), SIGKILL);  // unblocks the writer
  writer.join();
  INFO("pings answered: " << latency.size());
  REQUIRE(all_answered);
  Clock::duration worst{};
  for (const auto& [id, took] : latency) worst = std::max(worst, took);
  INFO("slowest ping: " << std::chrono::duration_cast<std::chrono::milliseconds>(worst).count() << " ms");
  CHECK(worst < std::chrono::seconds(5));

  // Drain the pipe: the daemon's next line is preceded by the count of those it dropped.
  std::string stderr_text;
  while (read_some(err.read_end(), stderr_text, std::chrono::milliseconds(200))) {
  }
  const std::size_t written_before = count_occurrences(stderr_text, "skipped a request line");
  CHECK(written_before < static_cast<std::size_t>(kWarnings));  // the pipe did fill
  REQUIRE(write_all(in.write_end(), std::string(1100, 'y') + "\n"));
  const auto report_deadline = Clock::now() + std::chrono::seconds(10);
  while (count_occurrences(stderr_text, "skipped a request line") == written_before && Clock::now() < report_deadline) {
    read_some(err.read_end(), stderr_text, std::chrono::milliseconds(200));
  }
  // Reports can also slip in while the pipe is full (a report is shorter than a warning): add them all up.
  const std::regex report(R"((\d+) log lines dropped \(stderr was full\))");
  std::size_t dropped = 0;
  std::size_t last_report_at = std::string::npos;
  for (auto it = std::sregex_iterator(stderr_text.begin(), stderr_text.end(), report); it != std::sregex_iterator();
       ++it) {
    dropped += std::stoul((*it)[1]);
    last_report_at = static_cast<std::size_t>(it->position(0));
  }
  REQUIRE(last_report_at != std::string::npos);
  CAPTURE(written_before, dropped);
  // Every warning was either written or counted (other warnings, e.g. about stdout's backlog, may be among them).
  CHECK(written_before + dropped >= static_cast<std::size_t>(kWarnings));
  // The last report comes right before the first line that fitted again, the one provoked after the drain.
  CHECK(count_occurrences(stderr_text.substr(last_report_at), "skipped a request line") == 1);

  in.close_write();
  CHECK(daemon.wait(std::chrono::seconds(10)) == 0);
}

}  // namespace daemon_logging_tests
