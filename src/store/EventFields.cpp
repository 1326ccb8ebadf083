#include "store/EventFields.h"

#include <array>

#include <nlohmann/json.hpp>

namespace switchboard::store {
namespace {

// A cursor over compact or pretty JSON that can read a string and skip any value. Every method returns false
// on malformed input instead of guessing.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : m_text(text) {}

  void skip_space() {
    while (m_at < m_text.size() &&
           (m_text[m_at] == ' ' || m_text[m_at] == '\n' || m_text[m_at] == '\r' || m_text[m_at] == '\t')) {
      ++m_at;
    }
  }
  bool consume(char c) {
    skip_space();
    if (m_at >= m_text.size() || m_text[m_at] != c) return false;
    ++m_at;
    return true;
  }
  bool peek(char c) {
    skip_space();
    return m_at < m_text.size() && m_text[m_at] == c;
  }

  // Reads a string token; `raw` is its contents between the quotes, escapes left as they are.
  bool string(std::string_view& raw, bool& escaped) {
    if (!consume('"')) return false;
    const std::size_t start = m_at;
    escaped = false;
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c == '\\') {
        escaped = true;
        m_at += 2;
        continue;
      }
      if (c == '"') {
        raw = m_text.substr(start, m_at - start);
        ++m_at;
        return true;
      }
      ++m_at;
    }
    return false;
  }

  // Skips one value of any type. Containers are skipped by counting brackets outside strings, so nested
  // content costs no recursion.
  bool skip_value() {
    skip_space();
    if (m_at >= m_text.size()) return false;
    const char first = m_text[m_at];
    if (first == '"') {
      std::string_view raw;
      bool escaped = false;
      return string(raw, escaped);
    }
    if (first != '{' && first != '[') {  // number, true, false, null
      while (m_at < m_text.size() && m_text[m_at] != ',' && m_text[m_at] != '}' && m_text[m_at] != ']') ++m_at;
      return true;
    }
    int depth = 0;
    while (m_at < m_text.size()) {
      const char c = m_text[m_at];
      if (c == '"') {
        std::string_view raw;
        bool escaped = false;
        if (!string(raw, escaped)) return false;
        continue;
      }
      ++m_at;
      if (c == '{' || c == '[') ++depth;
      if ((c == '}' || c == ']') && --depth == 0) return true;
    }
    return false;
  }

 private:
  std::string_view m_text;
  std::size_t m_at = 0;
};

// Walks the members of the object at the cursor; calls `member(key, scanner)` with the cursor on each value.
// `member` returns Stop to end the walk, Skip to have the value skipped, or Consumed once it read the value.
enum class Walk { Stop, Skip, Consumed };

template <class Member>
bool walk_object(Scanner& scanner, Member&& member) {
  if (!scanner.consume('{')) return false;
  if (scanner.consume('}')) return true;
  for (;;) {
    std::string_view key;
    bool escaped = false;
    if (!scanner.string(key, escaped) || !scanner.consume(':')) return false;
    switch (member(escaped ? std::string_view() : key, scanner)) {
      case Walk::Stop:
        return true;
      case Walk::Skip:
        if (!scanner.skip_value()) return false;
        break;
      case Walk::Consumed:
        break;
    }
    if (scanner.consume(',')) continue;
    return scanner.consume('}');
  }
}

std::string decode_string(std::string_view raw, bool escaped) {
  if (!escaped) return std::string(raw);
  std::string quoted;
  quoted.reserve(raw.size() + 2);
  quoted.append("\"").append(raw).append("\"");
  const auto parsed = nlohmann::json::parse(quoted, nullptr, /*allow_exceptions=*/false);
  if (const auto* text = parsed.get_ptr<const std::string*>()) return *text;
  return {};
}

}  // namespace

std::optional<std::string> extract_turn_id(std::string_view json) {
  Scanner scanner(json);
  std::optional<std::string> turn_id;
  walk_object(scanner, [&turn_id](std::string_view key, Scanner& top) {
    if (key != "data") return Walk::Skip;
    if (!top.peek('{')) return Walk::Stop;
    walk_object(top, [&turn_id](std::string_view data_key, Scanner& data) {
      if (data_key != "turnId") return Walk::Skip;
      std::string_view raw;
      bool escaped = false;
      if (data.peek('"') && data.string(raw, escaped)) turn_id = decode_string(raw, escaped);
      return Walk::Stop;
    });
    return Walk::Stop;
  });
  if (turn_id && turn_id->empty()) return std::nullopt;
  return turn_id;
}

const std::string& event_type_name(protocol::EventKind kind) {
  // Built once from the generated table, so binding a type to a statement never allocates.
  static const auto names = [] {
    std::array<std::string, protocol::kEvents.size()> result;
    for (std::size_t i = 0; i < result.size(); ++i) result[i] = std::string(protocol::kEvents[i].type);
    return result;
  }();
  return names[static_cast<std::size_t>(kind)];
}

std::optional<protocol::EventKind> event_kind_from_type(std::string_view type) {
  for (std::size_t i = 0; i < protocol::kEvents.size(); ++i) {
    if (protocol::kEvents[i].type == type) return static_cast<protocol::EventKind>(i);
  }
  return std::nullopt;
}

}  // namespace switchboard::store
