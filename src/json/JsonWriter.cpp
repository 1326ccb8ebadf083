#include "switchboard/json/JsonWriter.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include <nlohmann/json.hpp>

#include "switchboard/support/Bug.h"

namespace switchboard::json {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Length of the valid UTF-8 sequence starting at `p`, or 0 if it is invalid (overlong forms, surrogates and
// code points above U+10FFFF included).
std::size_t valid_utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  std::size_t need = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) <= need) return 0;
  for (std::size_t i = 1; i <= need; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return need + 1;
}

// Plain bytes are copied as they are: printable ASCII other than '"' and '\'.
constexpr bool is_plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

// What an ASCII byte that is not plain becomes (`\n`, `\u001f`, ...), padded to 8 bytes so it is copied as one
// block; and U+FFFD, which replaces each byte of invalid UTF-8.
struct Escape {
  char text[7];
  std::uint8_t size;
};
constexpr auto kEscapes = [] {
  std::array<Escape, 0x80> table{};
  for (unsigned c = 0; c < 0x20; ++c) table[c] = {{'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF], 0}, 6};
  table['\n'] = {{'\\', 'n'}, 2};
  table['\r'] = {{'\\', 'r'}, 2};
  table['\t'] = {{'\\', 't'}, 2};
  table['\b'] = {{'\\', 'b'}, 2};
  table['\f'] = {{'\\', 'f'}, 2};
  table['"'] = {{'\\', '"'}, 2};
  table['\\'] = {{'\\', '\\'}, 2};
  return table;
}();
constexpr Escape kReplacement = {{'\xEF', '\xBF', '\xBD'}, 3};
static_assert(sizeof(Escape) == 8);

// ---- 8 bytes at a time (SWAR) -----------------------------------------------------------------------------
// For a little-endian word of 8 input bytes, a mask with the high bit of each byte that is not plain set:
//   b - 0x20 has its high bit set for b < 0x20 (and for b >= 0xA0),
//   b itself for b >= 0x80,
//   (b ^ '"') - 1 and (b ^ '\\') - 1 for b == '"' and b == '\\' (and for some b >= 0x80).
// Each extra flag is on a byte that is not plain anyway, except where a subtraction borrows from the byte
// above; a borrow only comes out of a byte that is truly flagged, so such false flags lie above (later in the
// text than) a true one. The lowest flag is therefore always right, and it is the only one used.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
constexpr bool kSwar = std::endian::native == std::endian::little;

inline std::uint64_t not_plain(std::uint64_t word) {
  const std::uint64_t control = word - kOnes * 0x20;
  const std::uint64_t quote = (word ^ (kOnes * '"')) - kOnes;
  const std::uint64_t backslash = (word ^ (kOnes * '\\')) - kOnes;
  return (control | word | quote | backslash) & kHighBits;
}

inline std::uint64_t load_word(const unsigned char* p) {
  std::uint64_t word;
  std::memcpy(&word, p, sizeof word);
  return word;
}

inline std::uint64_t load_u32(const unsigned char* p) {
  std::uint32_t half;
  std::memcpy(&half, p, sizeof half);
  return half;
}

// The `n` (1 to 7) bytes at `p` in the low bytes of a word, zeros above, without reading outside them: two
// overlapping 4-byte loads, or three single bytes (the bytes where they overlap are the same, so OR is exact).
inline std::uint64_t load_partial(const unsigned char* p, std::size_t n) {
  if (n >= 4) return load_u32(p) | (load_u32(p + n - 4) << (8 * (n - 4)));
  return std::uint64_t{p[0]} | (std::uint64_t{p[n / 2]} << (8 * (n / 2))) | (std::uint64_t{p[n - 1]} << (8 * (n - 1)));
}

constexpr std::size_t kWord = sizeof(std::uint64_t);

}  // namespace

void JsonWriter::check_untouched() {
  if (m_begin == nullptr || (m_begin == m_out.data() && m_end == m_begin + m_out.size())) return;
  report_bug("a JsonWriter's output string was changed while the writer was using it", __FILE__, __LINE__);
  // Degrade: go on after what is known to be there (what else was there may be overwritten).
  const std::size_t used = std::min(static_cast<std::size_t>(m_cur - m_begin), m_out.size());
  m_begin = m_out.data();
  m_cur = m_begin + used;
  m_end = m_begin + m_out.size();
}

void JsonWriter::grow(std::size_t bytes) {
  check_untouched();
  // Before the first write (or after finish()) the writer starts at the end of `out`.
  const std::size_t used = m_begin == nullptr ? m_out.size() : static_cast<std::size_t>(m_cur - m_begin);
  // resize() zero-fills only the new room; when it needs more capacity, it doubles it.
  m_out.resize(used + std::max(bytes, kGrowBytes));
  m_begin = m_out.data();
  m_cur = m_begin + used;
  m_end = m_begin + m_out.size();
}

void JsonWriter::finish() {
  if (m_begin == nullptr) return;
  check_untouched();
  m_out.resize(static_cast<std::size_t>(m_cur - m_begin));
  m_begin = m_cur = m_end = nullptr;
}

// The hot loop of the daemon. Room is kept for the rest of the input, the closing quote and one word more:
// plain bytes and valid UTF-8 take as many bytes out as in, so only an escape or a replaced byte (up to 6 out
// for 1 in) asks for more. Copies are whole words: writing up to a word past the end of what is kept is fine,
// as it stays within the room.
//
// quote_in_room() is the fast path, for text that needs no escaping (nearly all of it: ids, type names, most
// deltas); it hands over to quote_rest() at the first byte that is not plain.
void JsonWriter::quote_in_room(std::string_view text) {
  char* out = m_cur;
  *out++ = '"';
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* const end = p + text.size();
  if constexpr (kSwar) {
    while (true) {
      const auto left = static_cast<std::size_t>(end - p);
      if (left >= kWord) {
        const std::uint64_t word = load_word(p);
        std::memcpy(out, &word, kWord);
        const std::uint64_t flags = not_plain(word);
        if (flags != 0) {
          const auto plain = static_cast<std::size_t>(std::countr_zero(flags) / 8);
          out += plain;
          p += plain;
          break;
        }
        out += kWord;
        p += kWord;
        continue;
      }
      if (left == 0) {
        *out = '"';
        m_cur = out + 1;
        return;
      }
      // The last 1 to 7 bytes, as one partial word; the zeros above them are not text.
      const std::uint64_t word = load_partial(p, left);
      std::memcpy(out, &word, kWord);
      const std::uint64_t flags = not_plain(word) & ((std::uint64_t{1} << (8 * left)) - 1);
      if (flags == 0) {
        out[left] = '"';
        m_cur = out + left + 1;
        return;
      }
      const auto plain = static_cast<std::size_t>(std::countr_zero(flags) / 8);
      out += plain;
      p += plain;
      break;
    }
  }
  m_cur = out;
  quote_rest(p, end);
}

// The rest of a string from `p` on, with the closing quote: byte by byte from there, then back to words.
[[gnu::noinline]] void JsonWriter::quote_rest(const unsigned char* p, const unsigned char* end) {
  char* out = m_cur;
  while (true) {
    if constexpr (kSwar) {
      std::uint64_t flags = 0;
      while (p != end) {
        const auto left = static_cast<std::size_t>(end - p);
        const std::uint64_t word = left >= kWord ? load_word(p) : load_partial(p, left);
        std::memcpy(out, &word, kWord);
        flags = not_plain(word);
        if (left < kWord) flags &= (std::uint64_t{1} << (8 * left)) - 1;
        if (flags != 0) break;
        const std::size_t step = left >= kWord ? kWord : left;
        out += step;
        p += step;
      }
      if (p == end) break;
      const auto plain = static_cast<std::size_t>(std::countr_zero(flags) / 8);
      out += plain;
      p += plain;
    } else {
      while (p < end && is_plain(*p)) *out++ = static_cast<char>(*p++);
      if (p == end) break;
    }

    // Bytes that are not plain, for as long as they come (non-Latin text, runs of escapes), byte by byte.
    do {
      const unsigned char c = *p;
      if (c >= 0x80) {
        const std::size_t n = valid_utf8_sequence(p, end);
        if (n != 0) {
          if (end - p >= 4) {
            std::memcpy(out, p, 4);  // a fixed-size copy; the bytes past the sequence are overwritten next
          } else {
            std::memcpy(out, p, n);
          }
          out += n;
          p += n;
          continue;
        }
      }
      // An escape or a replacement: up to 6 bytes for 1, so more room. The escape is copied from a table as
      // one 8-byte block, which the room allows.
      if (static_cast<std::size_t>(m_end - out) < static_cast<std::size_t>(end - p) + 6 + 1 + kWord) {
        m_cur = out;
        room(static_cast<std::size_t>(end - p) + 6 + 1 + kWord);
        out = m_cur;
      }
      const Escape& escape = c >= 0x80 ? kReplacement : kEscapes[c];
      std::memcpy(out, &escape, sizeof escape);
      out += escape.size;
      ++p;
    } while (p != end && !is_plain(*p));
  }
  *out++ = '"';
  m_cur = out;
}

void append_quoted(std::string& out, std::string_view text) {
  JsonWriter writer(out);
  writer.quote(text);
}

void JsonWriter::key(std::string_view name) {
  room(1);
  separate();
  quote(name);
  room(1);
  *m_cur++ = ':';
}

void JsonWriter::number(double value) {
  if (!std::isfinite(value)) {  // JSON has no NaN or infinity
    null();
    return;
  }
  constexpr std::size_t kMaxDoubleChars = 32;  // the shortest round-trip form is at most 24
  room(1 + kMaxDoubleChars);
  separate();
  m_cur = std::to_chars(m_cur, m_cur + kMaxDoubleChars, value).ptr;
}

void JsonWriter::value(const nlohmann::json& value) {
  raw(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void encode(JsonWriter& writer, const nlohmann::json& value) { writer.value(value); }

}  // namespace switchboard::json
