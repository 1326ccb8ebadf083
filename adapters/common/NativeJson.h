#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::adapters::native {

// Non-throwing reads of an agent CLI's JSON, shared by the adapters. The CLI's lines are input we do not control:
// a field may be missing, null or of another type in another version, and none of that may throw out of a
// translator. Every accessor answers "absent" for a value of the wrong type instead of converting it.

inline const nlohmann::json* member(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

inline const nlohmann::json* object_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  return value != nullptr && value->is_object() ? value : nullptr;
}

inline const nlohmann::json* array_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  return value != nullptr && value->is_array() ? value : nullptr;
}

inline std::optional<std::string> string_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (value == nullptr || !value->is_string()) return std::nullopt;
  return value->get_ref<const std::string&>();
}

inline std::string string_or_empty(const nlohmann::json& object, std::string_view key) {
  return string_at(object, key).value_or(std::string());
}

inline std::optional<double> number_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

// Integers that the CLI sometimes writes as floats (retry_delay_ms: 562.45) are rounded.
inline std::optional<std::int64_t> integer_at(const nlohmann::json& object, std::string_view key) {
  const auto* value = member(object, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  if (value->is_number_integer()) return value->get<std::int64_t>();
  const double number = value->get<double>();
  if (!std::isfinite(number) || std::fabs(number) > 9.0e15) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(number));
}

inline bool bool_or(const nlohmann::json& object, std::string_view key, bool fallback) {
  const auto* value = member(object, key);
  return value != nullptr && value->is_boolean() ? value->get<bool>() : fallback;
}

// Serializes without throwing: invalid UTF-8 inside strings becomes U+FFFD instead of an exception.
inline std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Deeper nesting than this is refused before parsing: no message of the CLI needs it, and copying or destroying
// a value nested 100,000 levels deep recurses that deep.
inline constexpr std::size_t kMaxLineNesting = 512;

// Parses one line; a discarded value (is_discarded()) when it is not JSON or is nested too deeply.
inline nlohmann::json parse_line(std::string_view line) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxLineNesting) return nlohmann::json(nlohmann::json::value_t::discarded);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
}

}  // namespace switchboard::adapters::native
