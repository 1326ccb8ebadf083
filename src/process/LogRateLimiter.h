#pragma once

#include <chrono>
#include <cstddef>

namespace switchboard::process {

// Lets through at most N log lines per time window and counts the rest, so a child that floods its stderr
// costs the log one summary line per window ("suppressed K lines") instead of gigabytes. Fixed windows: the
// first line after a window ends opens the next one and carries the count suppressed before it. The clock is
// passed in, so tests need no sleeps.
class LogRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  struct Decision {
    bool log = false;                 // log this line
    std::size_t suppressed_before = 0;  // lines dropped since the last summary: report them first (if > 0)
  };

  LogRateLimiter(std::size_t lines_per_window, std::chrono::milliseconds window)
      : m_lines_per_window(lines_per_window), m_window(window) {}

  Decision admit(Clock::time_point now);
  // The suppressed count not yet reported (for a final summary at end of stream); resets it.
  std::size_t take_suppressed();

  std::size_t total_suppressed() const { return m_total_suppressed; }

 private:
  std::size_t m_lines_per_window;
  std::chrono::milliseconds m_window;
  bool m_started = false;
  Clock::time_point m_window_start{};
  std::size_t m_admitted_in_window = 0;
  std::size_t m_suppressed_unreported = 0;
  std::size_t m_total_suppressed = 0;
};

}  // namespace switchboard::process
