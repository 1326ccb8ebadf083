#include "checkpoint/BlobStream.h"

#include <charconv>

namespace switchboard::checkpoint {

bool BlobStream::feed(std::string_view chunk) {
  while (!chunk.empty()) {
    switch (m_expect) {
      case Expect::Header: {
        const auto end = chunk.find('\n');
        m_buffer.append(chunk.substr(0, end));
        if (end == std::string_view::npos) return true;
        chunk.remove_prefix(end + 1);
        const std::string_view header = m_buffer;
        if (header.size() > 8 && header.substr(header.size() - 8) == " missing") {
          m_on_object(m_index++, {}, true);
          m_buffer.clear();
          break;
        }
        const auto space = header.rfind(' ');
        if (space == std::string_view::npos) return false;
        const auto digits = header.substr(space + 1);
        std::size_t size = 0;
        const auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), size);
        if (parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size()) return false;
        m_size = size;
        m_buffer.clear();
        m_buffer.reserve(size);
        m_expect = Expect::Content;
        if (size == 0) {
          m_on_object(m_index++, {}, false);
          m_expect = Expect::Newline;
        }
        break;
      }
      case Expect::Content: {
        const auto take = std::min(chunk.size(), m_size - m_buffer.size());
        m_buffer.append(chunk.substr(0, take));
        chunk.remove_prefix(take);
        if (m_buffer.size() == m_size) {
          m_on_object(m_index++, m_buffer, false);
          m_buffer.clear();
          m_buffer.shrink_to_fit();
          m_expect = Expect::Newline;
        }
        break;
      }
      case Expect::Newline:
        if (chunk.front() != '\n') return false;
        chunk.remove_prefix(1);
        m_expect = Expect::Header;
        break;
    }
  }
  return true;
}

}  // namespace switchboard::checkpoint
