#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace switchboard::transport {

// Splits a byte stream into NDJSON lines.
//
// Lines end at '\n' only (U+2028/U+2029 inside JSON strings are content, not separators); a '\r' before the
// '\n' is dropped. A line may arrive across any number of chunks. A line longer than the cap is reported once
// through on_overlong and its bytes are discarded up to the next '\n', so one bad client message cannot grow
// memory or desynchronize the stream. At end of input, a final line without '\n' is still delivered.
class LineFramer {
 public:
  struct Handler {
    std::function<void(std::string_view line)> on_line;
    std::function<void(std::size_t limit)> on_overlong;
  };

  LineFramer(std::size_t max_line_bytes, Handler handler)
      : m_max_line_bytes(max_line_bytes), m_handler(std::move(handler)) {}

  void feed(std::string_view chunk);
  // End of input: delivers the unterminated last line, if any.
  void finish();

  std::size_t buffered_bytes() const { return m_partial.size(); }

 private:
  void emit(std::string_view line);
  void append_partial(std::string_view bytes);

  std::size_t m_max_line_bytes;
  Handler m_handler;
  std::string m_partial;    // bytes of the current line seen so far
  bool m_discarding = false;  // inside an over-long line, skipping to its '\n'
};

}  // namespace switchboard::transport
