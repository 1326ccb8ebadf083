#include "rpc/PlainEnvelope.h"

#include <charconv>
#include <cstdint>

namespace switchboard::rpc {
namespace {

// A forward-only reader over the message. Every method returns false (or nullopt) at the first byte it does
// not expect; the envelope reader then gives up on the whole text.
class EnvelopeCursor {
 public:
  explicit EnvelopeCursor(std::string_view text) : m_text(text) {}

  // JSON's whitespace, as nlohmann's lexer skips it.
  void skip_space() {
    while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' || m_text[m_at] == '\n' || m_text[m_at] == '\r')) ++m_at;
  }
  bool at_end() const { return m_at == m_text.size(); }
  char peek() const { return at_end() ? '\0' : m_text[m_at]; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++m_at;
    return true;
  }
  bool eat(std::string_view word) {
    if (m_text.substr(m_at, word.size()) != word) return false;
    m_at += word.size();
    return true;
  }

  // A string of printable ASCII without escapes; returns its contents. Anything else (an escape, a control
  // character, a byte above 0x7e) is left to the full parser, which checks escapes and UTF-8.
  std::optional<std::string_view> plain_string() {
    if (!eat('"')) return std::nullopt;
    const std::size_t start = m_at;
    for (; m_at < m_text.size(); ++m_at) {
      const char c = m_text[m_at];
      if (c == '"') return m_text.substr(start, m_at++ - start);
      if (c == '\\' || c < 0x20 || c > 0x7e) return std::nullopt;
    }
    return std::nullopt;
  }

  // An integer in JSON's grammar (no fraction, no exponent) that fits 64 bits, typed as nlohmann types it:
  // unsigned when not negative, signed when negative. A number followed by '.', 'e' or anything but a
  // delimiter fails later, where the caller expects ',' or '}'.
  std::optional<nlohmann::json> integer() {
    const std::size_t start = m_at;
    const bool negative = eat('-');
    const std::size_t digits = m_at;
    while (m_at < m_text.size() && m_text[m_at] >= '0' && m_text[m_at] <= '9') ++m_at;
    if (m_at == digits || (m_text[digits] == '0' && m_at - digits > 1)) return std::nullopt;  // none, or a leading 0
    const char* first = m_text.data() + start;
    const char* last = m_text.data() + m_at;
    if (negative) {
      std::int64_t value = 0;
      const auto [end, error] = std::from_chars(first, last, value);
      if (error != std::errc() || end != last) return std::nullopt;
      return nlohmann::json(value);
    }
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc() || end != last) return std::nullopt;
    return nlohmann::json(value);
  }

  // An object or array, skipped by counting brackets outside strings; returns its text. Only its extent is
  // found here: whether it is valid JSON is for the caller's parse of that text to say.
  std::optional<std::string_view> bracketed() {
    const char open = peek();
    if (open != '{' && open != '[') return std::nullopt;
    const std::size_t start = m_at;
    std::size_t depth = 0;
    bool in_string = false;
    for (; m_at < m_text.size(); ++m_at) {
      const char c = m_text[m_at];
      if (in_string) {
        if (c == '\\') ++m_at;
        else if (c == '"') in_string = false;
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if ((c == '}' || c == ']') && --depth == 0) {
        ++m_at;
        return m_text.substr(start, m_at - start);
      }
    }
    return std::nullopt;
  }

 private:
  std::string_view m_text;
  std::size_t m_at = 0;
};

}  // namespace

std::optional<PlainEnvelope> read_plain_envelope(std::string_view text) {
  EnvelopeCursor cursor(text);
  PlainEnvelope envelope;
  bool seen_version = false, seen_id = false, seen_method = false, seen_params = false;

  cursor.skip_space();
  if (!cursor.eat('{')) return std::nullopt;
  do {
    cursor.skip_space();
    const auto key = cursor.plain_string();
    if (!key) return std::nullopt;
    cursor.skip_space();
    if (!cursor.eat(':')) return std::nullopt;
    cursor.skip_space();
    // A member seen twice is left to the full parser (nlohmann keeps the last one).
    if (*key == "jsonrpc" && !seen_version) {
      const auto version = cursor.plain_string();
      if (!version || *version != "2.0") return std::nullopt;
      seen_version = true;
    } else if (*key == "id" && !seen_id) {
      if (cursor.peek() == '"') {
        const auto id = cursor.plain_string();
        if (!id) return std::nullopt;
        envelope.id = std::string(*id);
      } else if (cursor.eat(std::string_view("null"))) {
        envelope.id = nullptr;
      } else {
        auto id = cursor.integer();
        if (!id) return std::nullopt;
        envelope.id = std::move(*id);
      }
      envelope.is_notification = false;
      seen_id = true;
    } else if (*key == "method" && !seen_method) {
      const auto method = cursor.plain_string();
      if (!method) return std::nullopt;
      envelope.method = *method;
      seen_method = true;
    } else if (*key == "params" && !seen_params) {
      const auto params = cursor.bracketed();
      if (!params) return std::nullopt;
      envelope.params = *params;
      seen_params = true;
    } else {
      return std::nullopt;
    }
    cursor.skip_space();
  } while (cursor.eat(','));
  if (!cursor.eat('}')) return std::nullopt;
  cursor.skip_space();
  if (!cursor.at_end() || !seen_version || !seen_method) return std::nullopt;
  return envelope;
}

}  // namespace switchboard::rpc
