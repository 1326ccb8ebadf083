#include "process/TailBuffer.h"

namespace switchboard::process {

void TailBuffer::append(std::string_view bytes) {
  m_total += bytes.size();
  if (m_capacity == 0) return;
  if (bytes.size() >= m_capacity) {
    m_bytes.assign(bytes.substr(bytes.size() - m_capacity));
    return;
  }
  m_bytes.append(bytes);
  if (m_bytes.size() > 2 * m_capacity) m_bytes.erase(0, m_bytes.size() - m_capacity);
}

std::string TailBuffer::text() const {
  std::string_view view(m_bytes);
  const bool cut = m_total > view.size() || view.size() > m_capacity;
  if (view.size() > m_capacity) view.remove_prefix(view.size() - m_capacity);
  if (cut) {
    // Skip UTF-8 continuation bytes (10xxxxxx) whose lead byte was cut off.
    std::size_t skip = 0;
    while (skip < view.size() && skip < 3 && (static_cast<unsigned char>(view[skip]) & 0xC0) == 0x80) ++skip;
    view.remove_prefix(skip);
  }
  return std::string(view);
}

}  // namespace switchboard::process
