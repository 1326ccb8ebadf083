#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include "process/LogRateLimiter.h"
#include "process/StderrForwarder.h"
#include "process/TailBuffer.h"
#include "support/CapturedLog.h"

namespace stderr_forwarder_tests {

using namespace switchboard::process;
using namespace std::chrono_literals;

using switchboard::testing::CapturedLog;

TEST_CASE("log rate limiter: N lines per window then one summary", "[process]") {
  LogRateLimiter limiter(2, 1000ms);
  const auto t0 = LogRateLimiter::Clock::time_point{} + 10s;
  CHECK(limiter.admit(t0).log);
  CHECK(limiter.admit(t0 + 1ms).log);
  CHECK_FALSE(limiter.admit(t0 + 2ms).log);
  CHECK_FALSE(limiter.admit(t0 + 999ms).log);
  const auto next = limiter.admit(t0 + 1000ms);
  CHECK(next.log);
  CHECK(next.suppressed_before == 2);
  CHECK(limiter.admit(t0 + 1001ms).suppressed_before == 0);
  CHECK_FALSE(limiter.admit(t0 + 1002ms).log);
  CHECK(limiter.take_suppressed() == 1);
  CHECK(limiter.take_suppressed() == 0);
  CHECK(limiter.total_suppressed() == 3);
}

TEST_CASE("tail buffer: keeps the last bytes and no broken UTF-8 lead", "[process]") {
  TailBuffer tail(8);
  tail.append("abc");
  CHECK(tail.text() == "abc");
  tail.append("defghij");
  CHECK(tail.text() == "cdefghij");
  tail.append(std::string(100, 'x') + "end");
  CHECK(tail.text() == "xxxxxend");
  CHECK(tail.total_bytes() == 113);
  TailBuffer utf8(4);
  utf8.append("a\xC3\xA9\xC3\xA9");  // "aéé": the cut lands inside the first é
  CHECK(utf8.text() == "\xC3\xA9\xC3\xA9");
  utf8.append("z");
  CHECK(utf8.text() == "\xC3\xA9z");  // the orphan continuation byte is dropped
  TailBuffer none(0);
  none.append("anything");
  CHECK(none.text().empty());
}

TEST_CASE("stderr forwarder: lines are logged with a prefix and rate-limited with a summary", "[process]") {
  CapturedLog log;
  StderrOptions options;
  options.lines_per_window = 2;
  options.window = 1000ms;
  StderrForwarder forwarder(options, "agent[7]");
  const auto t0 = LogRateLimiter::Clock::time_point{} + 10s;
  forwarder.feed("one\ntwo\nthr", t0);
  forwarder.feed("ee\nfour\n", t0 + 1ms);
  forwarder.feed("five\r\n", t0 + 2s);
  forwarder.feed("six\nseven\nunterminated", t0 + 2s);
  forwarder.finish(t0 + 2s);
  CHECK(log.lines() == std::vector<std::string>{"agent[7]: one", "agent[7]: two",
                                                "agent[7]: suppressed 2 stderr lines (rate limit)",
                                                "agent[7]: five", "agent[7]: six",
                                                "agent[7]: suppressed 2 stderr lines (rate limit)"});
  CHECK(forwarder.lines_logged() == 4);
  CHECK(forwarder.lines_suppressed() == 4);
  CHECK(forwarder.tail() == "one\ntwo\nthree\nfour\nfive\r\nsix\nseven\nunterminated");
}

TEST_CASE("stderr forwarder: long lines are logged cut with the count of dropped bytes", "[process]") {
  CapturedLog log;
  StderrOptions options;
  options.max_logged_line_bytes = 5;
  StderrForwarder forwarder(options, "cli");
  forwarder.feed("abcdefgh");
  forwarder.feed("ij\nok\n");
  forwarder.finish();
  CHECK(log.lines() == std::vector<std::string>{"cli: abcde [... 5 more bytes]", "cli: ok"});
}

}  // namespace stderr_forwarder_tests
