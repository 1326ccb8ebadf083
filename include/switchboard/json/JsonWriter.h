#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

// The writer's small operations must be inlined so that a literal's length is a constant and its copy a few
// moves; GCC does not always do it on its own for functions called this often.
#define SWITCHBOARD_JSON_INLINE [[gnu::always_inline]] inline

namespace switchboard::json {

// Appends compact JSON text to a caller-owned string, without building a DOM first.
//
// Why not nlohmann::json::dump(): events are the daemon's hottest path (every streamed token of every agent),
// and building a json object costs a map node per field. Generated encoders call this writer directly, so an
// event is serialized once, straight into its final buffer. Commas are inferred from the last byte written,
// which keeps the writer nestable.
//
// Strings are always emitted as valid JSON: control characters are escaped and invalid UTF-8 (agents print
// arbitrary bytes) is replaced with U+FFFD, so the output never breaks a client's parser.
//
// Why a cursor and spare room: std::string cannot append without a call and a capacity check per append, and
// at a few dozen appends per event that was most of the cost of an event. So the writer grows `out` ahead of
// what it writes (zero-filled room, at least kGrowBytes at a time) and writes through a pointer; finish() cuts
// `out` back to the text written. The destructor calls finish().
// HAZARD: between the first call that writes and finish(), `out` ends in that unused room. Do not read or
// change `out` in between: call finish() first. The writer can be used again after finish(); it then goes on
// at the end of `out`. A change to `out` behind a working writer's back is reported as a bug.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) noexcept : m_out(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() { finish(); }

  // Trims the unused room: afterwards `out` holds exactly the text written so far.
  void finish();

  // For a caller that serializes many values through one buffer and copies each out: the contents of `out`
  // without the room, valid until the next write; and clear(), which empties `out` but keeps the room.
  std::string_view text() const {
    return m_begin == nullptr ? std::string_view(m_out) : std::string_view(m_begin, static_cast<std::size_t>(m_cur - m_begin));
  }
  void clear() {
    if (m_begin == nullptr) m_out.clear();
    else m_cur = m_begin;
  }

  SWITCHBOARD_JSON_INLINE void begin_object() { open('{'); }
  SWITCHBOARD_JSON_INLINE void end_object() { close('}'); }
  SWITCHBOARD_JSON_INLINE void begin_array() { open('['); }
  SWITCHBOARD_JSON_INLINE void end_array() { close(']'); }

  // `quoted_key_colon` is a pre-escaped `"name":` literal (the generator emits them).
  SWITCHBOARD_JSON_INLINE void key_raw(std::string_view quoted_key_colon) { raw(quoted_key_colon); }
  void key(std::string_view name);
  // A pre-escaped key whose comma the caller knows: `"name":` as the first member of an object just begun, or
  // `,"name":` after another member. Written as is; nothing is inferred (the generator emits these).
  SWITCHBOARD_JSON_INLINE void member_raw(std::string_view text) {
    room(text.size());
    copy(text);
  }
  // A member_raw() key and its value in one step, with one room check (the generator emits these for string
  // and integer members; an event has a dozen of them).
  SWITCHBOARD_JSON_INLINE void member_string(std::string_view key, std::string_view text) {
    room(key.size() + text.size() + kQuoteRoom);
    copy(key);
    quote_in_room(text);
  }
  SWITCHBOARD_JSON_INLINE void member_integer(std::string_view key, std::int64_t value) {
    room(key.size() + kMaxIntegerChars);
    copy(key);
    m_cur = std::to_chars(m_cur, m_cur + kMaxIntegerChars, value).ptr;
  }
  SWITCHBOARD_JSON_INLINE void member_unsigned(std::string_view key, std::uint64_t value) {
    room(key.size() + kMaxIntegerChars);
    copy(key);
    m_cur = std::to_chars(m_cur, m_cur + kMaxIntegerChars, value).ptr;
  }
  // A key and already-serialized JSON text (a pre-quoted literal, say).
  SWITCHBOARD_JSON_INLINE void member_json(std::string_view key, std::string_view json_text) {
    room(key.size() + json_text.size());
    copy(key);
    copy(json_text);
  }

  SWITCHBOARD_JSON_INLINE void string(std::string_view text) {
    room(1);
    separate();
    quote(text);
  }
  // A string known to need no escaping, already with its quotes (`"text"`): enum values, event types.
  SWITCHBOARD_JSON_INLINE void quoted_raw(std::string_view quoted_text) { raw(quoted_text); }
  void integer(std::int64_t value) {
    room(1 + kMaxIntegerChars);
    separate();
    m_cur = std::to_chars(m_cur, m_cur + kMaxIntegerChars, value).ptr;
  }
  void unsigned_integer(std::uint64_t value) {
    room(1 + kMaxIntegerChars);
    separate();
    m_cur = std::to_chars(m_cur, m_cur + kMaxIntegerChars, value).ptr;
  }
  void number(double value);
  SWITCHBOARD_JSON_INLINE void boolean(bool value) { raw(value ? std::string_view("true") : std::string_view("false")); }
  SWITCHBOARD_JSON_INLINE void null() { raw("null"); }
  void value(const nlohmann::json& value);
  // Already-serialized JSON text, trusted to be valid.
  SWITCHBOARD_JSON_INLINE void raw(std::string_view json_text) {
    room(1 + json_text.size());
    separate();
    copy(json_text);
  }

 private:
  friend void append_quoted(std::string& out, std::string_view text);

  // The least the writer grows `out` by: an event fits in one step.
  static constexpr std::size_t kGrowBytes = 256;
  // "-9223372036854775808" and "18446744073709551615" are 20 characters.
  static constexpr std::size_t kMaxIntegerChars = 20;
  // What quoting needs beyond the text when nothing is escaped: both quotes, and one word that the escaper may
  // write past the end (it copies whole words).
  static constexpr std::size_t kQuoteRoom = 2 + sizeof(std::uint64_t);

  // Makes room for `bytes` (at least 1) more bytes at m_cur.
  SWITCHBOARD_JSON_INLINE void room(std::size_t bytes) {
#ifndef NDEBUG
    check_untouched();  // debug builds look for the hazard above at every call
#endif
    if (static_cast<std::size_t>(m_end - m_cur) < bytes) grow(bytes);
  }
  void check_untouched();
  void grow(std::size_t bytes);

  // Whether a value that follows this byte needs a comma before it: not after the start of a container, a key
  // or a line.
  static constexpr auto kCommaAfter = [] {
    std::array<bool, 256> table{};
    table.fill(true);
    for (const unsigned char c : {'{', '[', ':', '\n'}) table[c] = false;
    return table;
  }();
  // A value needs a comma before it unless it opens a container or follows a key. Needs room for 1 byte.
  SWITCHBOARD_JSON_INLINE void separate() {
    if (m_cur != m_begin && kCommaAfter[static_cast<unsigned char>(m_cur[-1])]) *m_cur++ = ',';
  }
  SWITCHBOARD_JSON_INLINE void open(char bracket) {
    room(2);
    separate();
    *m_cur++ = bracket;
  }
  SWITCHBOARD_JSON_INLINE void close(char bracket) {
    room(1);
    *m_cur++ = bracket;
  }
  // Copies `text`; needs the room.
  SWITCHBOARD_JSON_INLINE void copy(std::string_view text) {
    std::memcpy(m_cur, text.data(), text.size());
    m_cur += text.size();
  }
  // Writes `text` as a JSON string literal, quotes included (no comma).
  SWITCHBOARD_JSON_INLINE void quote(std::string_view text) {
    room(text.size() + kQuoteRoom);
    quote_in_room(text);
  }
  // The same with room for text.size() + kQuoteRoom bytes already made.
  void quote_in_room(std::string_view text);
  void quote_rest(const unsigned char* p, const unsigned char* end);

  // All null until the first write and after finish(); then m_out.data(), the end of the text written, and
  // m_out.data() + m_out.size(): [m_cur, m_end) is the room.
  std::string& m_out;
  char* m_begin = nullptr;
  char* m_cur = nullptr;
  char* m_end = nullptr;
};

// Appends `text` as a JSON string literal (with quotes) to `out`.
void append_quoted(std::string& out, std::string_view text);

// Overloads the generated encoders call for scalar fields.
inline void encode(JsonWriter& writer, const std::string& value) { writer.string(value); }
inline void encode(JsonWriter& writer, std::int64_t value) { writer.integer(value); }
inline void encode(JsonWriter& writer, double value) { writer.number(value); }
inline void encode(JsonWriter& writer, bool value) { writer.boolean(value); }
void encode(JsonWriter& writer, const nlohmann::json& value);

template <class T>
void encode(JsonWriter& writer, const std::vector<T>& values) {
  writer.begin_array();
  for (const auto& value : values) encode(writer, value);
  writer.end_array();
}

}  // namespace switchboard::json
