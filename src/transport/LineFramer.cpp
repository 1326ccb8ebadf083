#include "switchboard/transport/LineFramer.h"

#include <cstring>

namespace switchboard::transport {

void LineFramer::emit(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  m_handler.on_line(line);
}

void LineFramer::append_partial(std::string_view bytes) {
  if (m_discarding) return;
  if (m_partial.size() + bytes.size() > m_max_line_bytes) {
    m_partial.clear();
    m_partial.shrink_to_fit();  // give back the memory a huge line took
    m_discarding = true;
    m_handler.on_overlong(m_max_line_bytes);
    return;
  }
  m_partial.append(bytes);
}

void LineFramer::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    const void* found = std::memchr(chunk.data(), '\n', chunk.size());
    if (found == nullptr) {
      append_partial(chunk);
      return;
    }
    const auto length = static_cast<std::size_t>(static_cast<const char*>(found) - chunk.data());
    const std::string_view head = chunk.substr(0, length);
    chunk.remove_prefix(length + 1);
    if (m_discarding) {
      m_discarding = false;  // the over-long line ends here; the stream is back in sync
      continue;
    }
    if (m_partial.empty()) {
      // Fast path: the whole line is inside this chunk, no copy.
      if (head.size() > m_max_line_bytes) {
        m_handler.on_overlong(m_max_line_bytes);
        continue;
      }
      emit(head);
      continue;
    }
    append_partial(head);
    if (m_discarding) {
      m_discarding = false;
      continue;
    }
    const std::string line = std::move(m_partial);
    m_partial.clear();
    emit(line);
  }
}

void LineFramer::finish() {
  if (m_discarding) {
    m_discarding = false;
    return;
  }
  if (m_partial.empty()) return;
  const std::string line = std::move(m_partial);
  m_partial.clear();
  emit(line);
}

}  // namespace switchboard::transport
