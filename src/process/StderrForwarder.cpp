#include "process/StderrForwarder.h"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

namespace switchboard::process {

StderrForwarder::StderrForwarder(const StderrOptions& options, std::string log_name)
    : m_log_name(std::move(log_name)),
      m_max_line_bytes(options.max_logged_line_bytes),
      m_tail(options.tail_bytes),
      m_limiter(options.lines_per_window, options.window) {}

void StderrForwarder::feed(std::string_view chunk, LogRateLimiter::Clock::time_point now) {
  m_tail.append(chunk);
  while (!chunk.empty()) {
    const void* found = std::memchr(chunk.data(), '\n', chunk.size());
    const std::size_t length =
        found ? static_cast<std::size_t>(static_cast<const char*>(found) - chunk.data()) : chunk.size();
    const std::string_view piece = chunk.substr(0, length);
    const std::size_t room = m_max_line_bytes - std::min(m_max_line_bytes, m_line.size());
    m_line.append(piece.substr(0, room));
    m_line_dropped += piece.size() - std::min(room, piece.size());
    m_in_line = true;
    if (!found) return;
    chunk.remove_prefix(length + 1);
    end_line(now);
  }
}

void StderrForwarder::finish(LogRateLimiter::Clock::time_point now) {
  if (m_in_line && (!m_line.empty() || m_line_dropped > 0)) end_line(now);
  log_summary(m_limiter.take_suppressed());
}

void StderrForwarder::end_line(LogRateLimiter::Clock::time_point now) {
  if (!m_line.empty() && m_line.back() == '\r') m_line.pop_back();
  const auto decision = m_limiter.admit(now);
  log_summary(decision.suppressed_before);
  if (decision.log) {
    ++m_lines_logged;
    if (m_line_dropped > 0) spdlog::info("{}: {} [... {} more bytes]", m_log_name, m_line, m_line_dropped);
    else spdlog::info("{}: {}", m_log_name, m_line);
  }
  m_line.clear();
  m_line_dropped = 0;
  m_in_line = false;
}

void StderrForwarder::log_summary(std::size_t suppressed) {
  if (suppressed == 0) return;
  spdlog::info("{}: suppressed {} stderr lines (rate limit)", m_log_name, suppressed);
}

}  // namespace switchboard::process
