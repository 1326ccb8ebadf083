#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>

#include <spdlog/spdlog.h>

#include "daemon/LoggingSinks.h"
#include "support/CountOccurrences.h"

// The daemon's log sinks never wait for their output (src/daemon/LoggingSinks.h).

namespace logging_sinks_tests {

using switchboard::daemon::BackgroundFileSink;
using switchboard::daemon::NonBlockingStderrSink;
using switchboard::testing::count_occurrences;

std::string drain(int fd) {
  std::string text;
  char buf[65536];
  for (;;) {
    pollfd poll_fd{fd, POLLIN, 0};
    if (::poll(&poll_fd, 1, 0) != 1) return text;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return text;
    text.append(buf, static_cast<std::size_t>(n));
  }
}

TEST_CASE("logging: stderr on a full pipe drops and counts lines without blocking and leaves the shared fd blocking",
          "[logging]") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  auto sink = std::make_shared<NonBlockingStderrSink>(fds[1]);
  spdlog::logger logger("test", sink);
  logger.set_pattern("%l %v");

  const auto started = std::chrono::steady_clock::now();
  constexpr int kLines = 5000;  // ~500 KB: eight times what the pipe holds
  for (int i = 0; i < kLines; ++i) logger.warn("line {} {}", i, std::string(90, 'x'));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  // The descriptor the parent shares is untouched: only the sink's own reopened description is nonblocking.
  CHECK((::fcntl(fds[1], F_GETFL) & O_NONBLOCK) == 0);

  const std::size_t dropped = sink->dropped_total();
  std::string text = drain(fds[0]);
  const std::size_t written = count_occurrences(text, "warning line ");
  CHECK(dropped > 0);
  CHECK(written + dropped == kLines);
  CHECK(text.back() == '\n');  // whole lines only
  // A report can slip in while the pipe is full (it is shorter than a line and fits the last page's room).
  const std::regex note(R"(warning (\d+) log lines dropped \(stderr was full\)\n)");
  std::size_t reported = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), note); it != std::sregex_iterator(); ++it) {
    reported += std::stoul((*it)[1]);
  }
  CHECK(reported < dropped);

  logger.warn("after the drain");
  text = drain(fds[0]);
  // The rest of the count comes first, then the line.
  CHECK(text == "warning " + std::to_string(dropped - reported) +
                    " log lines dropped (stderr was full)\nwarning after the drain\n");
  logger.warn("and the next");
  CHECK(drain(fds[0]) == "warning and the next\n");
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("logging: the log file is written by its own thread and lines that do not fit its queue are counted",
          "[logging]") {
  char name[] = "/tmp/switchboard-log-XXXXXX";
  REQUIRE(::mkdtemp(name) != nullptr);
  const std::filesystem::path file = std::filesystem::path(name) / "daemon.log";
  constexpr int kLines = 20000;
  {
    auto sink = std::make_shared<BackgroundFileSink>(file.string(), /*max_lines=*/8);
    spdlog::logger logger("test", sink);
    logger.set_pattern("%l %v");
    for (int i = 0; i < kLines; ++i) logger.info("line {}", i);
  }  // the destructor writes what is queued
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string content = text.str();
  std::size_t reported = 0;
  const std::regex note(R"((\d+) log lines dropped \(the log file could not keep up\))");
  for (auto it = std::sregex_iterator(content.begin(), content.end(), note); it != std::sregex_iterator(); ++it) {
    reported += std::stoul((*it)[1]);
  }
  const std::size_t written = count_occurrences(content, "info line ");
  CAPTURE(written, reported);
  CHECK(written + reported == kLines);
  CHECK(content.find("info line 0\n") == 0);
  std::filesystem::remove_all(name);
}

}  // namespace logging_sinks_tests
