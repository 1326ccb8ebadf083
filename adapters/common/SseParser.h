#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace switchboard::adapters {

// One event of a text/event-stream, as the WHATWG HTML standard's "interpreting an event stream" dispatches it.
struct SseEvent {
  std::string type = "message";  // the `event:` field, "message" when there was none
  std::string data;              // the `data:` lines joined with '\n'
  std::string last_event_id;     // the stream's last event id when it was dispatched (ids carry over)
};

// An incremental event-stream parser: bytes in, in chunks split anywhere (inside a field, between a CR and its
// LF, inside a UTF-8 sequence), events out. The rules are the standard's:
// - lines end with CRLF, LF or CR; a leading byte-order mark is skipped;
// - a line starting with ':' is a comment; otherwise `name: value` (one space after the colon dropped) or a bare
//   `name` with an empty value; unknown fields are ignored;
// - `data` appends its value and a '\n'; `event` sets the type; `id` sets the last event id unless the value
//   holds a NUL; `retry` with only ASCII digits sets the reconnection time;
// - an empty line dispatches the event (none when no data was given), trailing '\n' of the data removed; the
//   type resets, the last event id does not;
// - at the end of the stream an event not closed by an empty line is dropped.
// A line longer than `max_line_bytes` is skipped (counted); the parser goes on at the next line end. It does no
// I/O; the handlers run inside feed() and may not destroy the parser.
class SseParser {
 public:
  struct Handlers {
    std::function<void(SseEvent event)> on_event;
    std::function<void(std::chrono::milliseconds retry)> on_retry;  // optional
    std::function<void(std::string_view comment)> on_comment;       // optional: heartbeats
  };

  explicit SseParser(Handlers handlers, std::size_t max_line_bytes = 16 * 1024 * 1024)
      : m_handlers(std::move(handlers)), m_max_line_bytes(max_line_bytes) {}

  void feed(std::string_view chunk);
  // The stream ended: whatever is not closed by an empty line is dropped.
  void finish();

  const std::string& last_event_id() const { return m_last_event_id; }
  std::uint64_t events() const { return m_events; }
  std::uint64_t overlong_lines() const { return m_overlong_lines; }

 private:
  void line(std::string_view text);
  void field(std::string_view name, std::string_view value);
  void dispatch();

  Handlers m_handlers;
  std::size_t m_max_line_bytes;
  std::string m_line;            // the line being read
  bool m_skipping_line = false;  // it is over the cap: its bytes are dropped until the line end
  bool m_after_cr = false;       // the last byte was a CR: an LF right after it ends nothing more
  bool m_at_start = true;        // a byte-order mark may come first
  std::string m_type;
  std::string m_data;
  bool m_has_data = false;
  std::string m_last_event_id;
  std::uint64_t m_events = 0;
  std::uint64_t m_overlong_lines = 0;
};

}  // namespace switchboard::adapters
