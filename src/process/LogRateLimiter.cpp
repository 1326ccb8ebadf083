#include "process/LogRateLimiter.h"

#include <utility>

namespace switchboard::process {

LogRateLimiter::Decision LogRateLimiter::admit(Clock::time_point now) {
  Decision decision;
  if (!m_started || now - m_window_start >= m_window) {
    m_started = true;
    m_window_start = now;
    m_admitted_in_window = 0;
    decision.suppressed_before = std::exchange(m_suppressed_unreported, 0);
  }
  if (m_admitted_in_window < m_lines_per_window) {
    ++m_admitted_in_window;
    decision.log = true;
    return decision;
  }
  ++m_suppressed_unreported;
  ++m_total_suppressed;
  return decision;
}

std::size_t LogRateLimiter::take_suppressed() { return std::exchange(m_suppressed_unreported, 0); }

}  // namespace switchboard::process
