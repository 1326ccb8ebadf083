#include "common/SseParser.h"

namespace switchboard::adapters {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

void SseParser::feed(std::string_view chunk) {
  for (const char c : chunk) {
    if (m_at_start) {
      // The mark may itself be split across chunks: hold its bytes in the line until it is complete or not.
      m_line.push_back(c);
      if (kByteOrderMark.starts_with(m_line)) {
        if (m_line.size() == kByteOrderMark.size()) {
          m_line.clear();
          m_at_start = false;
        }
        continue;
      }
      m_at_start = false;
      std::string held = std::move(m_line);
      m_line.clear();
      feed(held);
      continue;
    }
    if (c == '\n' && m_after_cr) {
      m_after_cr = false;  // the LF of a CRLF: the CR ended the line already
      continue;
    }
    m_after_cr = c == '\r';
    if (c == '\r' || c == '\n') {
      if (!m_skipping_line) line(m_line);
      m_skipping_line = false;
      m_line.clear();
      continue;
    }
    if (m_skipping_line) continue;
    if (m_line.size() >= m_max_line_bytes) {
      ++m_overlong_lines;
      m_skipping_line = true;
      m_line.clear();
      continue;
    }
    m_line.push_back(c);
  }
}

void SseParser::finish() {
  m_line.clear();
  m_type.clear();
  m_data.clear();
  m_has_data = false;
  m_skipping_line = false;
  m_after_cr = false;
}

void SseParser::line(std::string_view text) {
  if (text.empty()) return dispatch();
  if (text.front() == ':') {
    if (m_handlers.on_comment) m_handlers.on_comment(text.substr(1));
    return;
  }
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return field(text, {});
  auto value = text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  field(text.substr(0, colon), value);
}

void SseParser::field(std::string_view name, std::string_view value) {
  if (name == "event") {
    m_type = value;
  } else if (name == "data") {
    m_data.append(value).push_back('\n');
    m_has_data = true;
  } else if (name == "id") {
    if (value.find('\0') == std::string_view::npos) m_last_event_id = value;
  } else if (name == "retry") {
    if (!all_digits(value) || !m_handlers.on_retry) return;
    std::uint64_t millis = 0;
    for (const char c : value) {
      millis = millis * 10 + static_cast<std::uint64_t>(c - '0');
      if (millis > 24ULL * 60 * 60 * 1000) return;  // over a day is no reconnection delay anyone means
    }
    m_handlers.on_retry(std::chrono::milliseconds(millis));
  }
}

void SseParser::dispatch() {
  std::string type = std::exchange(m_type, std::string());
  if (!m_has_data) return;
  m_has_data = false;
  std::string data = std::exchange(m_data, std::string());
  if (!data.empty() && data.back() == '\n') data.pop_back();
  ++m_events;
  if (!m_handlers.on_event) return;
  SseEvent event;
  if (!type.empty()) event.type = std::move(type);
  event.data = std::move(data);
  event.last_event_id = m_last_event_id;
  m_handlers.on_event(std::move(event));
}

}  // namespace switchboard::adapters
