#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard::process {

// The last `capacity` bytes of a stream (a child's stderr), so that when a CLI dies an adapter can say why
// ("error: invalid API key") without keeping everything it ever printed. Appending is amortized O(n): the
// buffer grows to twice the capacity before it drops its front.
class TailBuffer {
 public:
  explicit TailBuffer(std::size_t capacity) : m_capacity(capacity) {}

  void append(std::string_view bytes);
  // At most `capacity` bytes; when the front was cut inside a UTF-8 sequence, the broken lead bytes are
  // dropped too, so the text is safe to put in a JSON string.
  std::string text() const;
  std::size_t total_bytes() const { return m_total; }

 private:
  std::size_t m_capacity;
  std::string m_bytes;
  std::size_t m_total = 0;
};

}  // namespace switchboard::process
