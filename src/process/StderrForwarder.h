#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "process/LogRateLimiter.h"
#include "switchboard/process/SpawnSpec.h"
#include "process/TailBuffer.h"

namespace switchboard::process {

// What happens to a child's stderr: each line goes to the daemon's log (spdlog, info level, prefixed with the
// child's name), at most N lines per window with a "suppressed K lines" summary for the rest, and the raw
// bytes' tail is kept for stderr_tail(). Lines longer than the logging cap are logged cut, with a marker. The
// clock is a parameter so tests can drive the rate limit.
class StderrForwarder {
 public:
  StderrForwarder(const StderrOptions& options, std::string log_name);

  void feed(std::string_view chunk, LogRateLimiter::Clock::time_point now = LogRateLimiter::Clock::now());
  // End of stream: logs an unterminated last line and the pending suppression summary.
  void finish(LogRateLimiter::Clock::time_point now = LogRateLimiter::Clock::now());

  std::string tail() const { return m_tail.text(); }
  std::size_t lines_logged() const { return m_lines_logged; }
  std::size_t lines_suppressed() const { return m_limiter.total_suppressed(); }

 private:
  void end_line(LogRateLimiter::Clock::time_point now);
  void log_summary(std::size_t suppressed);

  std::string m_log_name;
  std::size_t m_max_line_bytes;
  TailBuffer m_tail;
  LogRateLimiter m_limiter;
  std::string m_line;            // the current line, up to m_max_line_bytes
  std::size_t m_line_dropped = 0;  // bytes of the current line beyond the cap
  bool m_in_line = false;
  std::size_t m_lines_logged = 0;
};

}  // namespace switchboard::process
