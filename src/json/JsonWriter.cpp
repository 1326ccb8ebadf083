#include "switchboard/json/JsonWriter.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

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

}  // namespace

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  const auto* run = p;  // start of the bytes that need no escaping, copied in one append
  auto flush = [&](const unsigned char* upto) {
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run));
  };
  while (p < end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t n = valid_utf8_sequence(p, end);
      if (n != 0) {
        p += n;
        continue;
      }
      flush(p);
      out.append("\xEF\xBF\xBD");  // U+FFFD for each invalid byte
      run = ++p;
      continue;
    }
    flush(p);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default: {
        const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(escaped, sizeof escaped);
      }
    }
    run = ++p;
  }
  flush(p);
  out.push_back('"');
}

void JsonWriter::key(std::string_view name) {
  separate();
  append_quoted(m_out, name);
  m_out.push_back(':');
}

void JsonWriter::string(std::string_view text) {
  separate();
  append_quoted(m_out, text);
}

void JsonWriter::integer(std::int64_t value) {
  separate();
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  m_out.append(buf, result.ptr);
}

void JsonWriter::unsigned_integer(std::uint64_t value) {
  separate();
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  m_out.append(buf, result.ptr);
}

void JsonWriter::number(double value) {
  separate();
  if (!std::isfinite(value)) {  // JSON has no NaN or infinity
    m_out.append("null");
    return;
  }
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  m_out.append(buf, result.ptr);
}

void JsonWriter::value(const nlohmann::json& value) {
  separate();
  m_out.append(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void encode(JsonWriter& writer, const nlohmann::json& value) { writer.value(value); }

}  // namespace switchboard::json
