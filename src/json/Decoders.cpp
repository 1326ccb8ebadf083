#include "switchboard/json/Decoders.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace switchboard::json {

bool decode(const nlohmann::json& json, std::string& out, DecodeContext& context) {
  const auto* text = json.get_ptr<const std::string*>();
  if (text == nullptr) return context.fail("string", json);
  out = *text;
  return true;
}

bool decode(const nlohmann::json& json, std::int64_t& out, DecodeContext& context) {
  // Unsigned first: nlohmann's get_ptr<int64_t*> also answers for an unsigned value (is_number_integer() is true
  // for both) and hands out the same storage read as signed, so 2^64-1 would come back as -1.
  if (const auto* value = json.get_ptr<const std::uint64_t*>()) {
    if (*value > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return context.fail("integer within 64-bit signed range", json);
    }
    out = static_cast<std::int64_t>(*value);
    return true;
  }
  if (const auto* value = json.get_ptr<const std::int64_t*>()) {
    out = *value;
    return true;
  }
  // 3.0 is an integer in JSON Schema's sense; 3.5 is not. The range is checked before the cast: converting a
  // double outside int64's range is undefined behaviour. -2^63 and 2^63 are exact doubles; 2^63 itself is out.
  if (const auto* value = json.get_ptr<const double*>()) {
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (*value >= -kTwoTo63 && *value < kTwoTo63 && std::trunc(*value) == *value) {
      out = static_cast<std::int64_t>(*value);
      return true;
    }
  }
  return context.fail("integer", json);
}

bool decode(const nlohmann::json& json, double& out, DecodeContext& context) {
  if (!json.is_number()) return context.fail("number", json);
  out = json.get<double>();  // cannot throw: the type was checked
  return true;
}

bool decode(const nlohmann::json& json, bool& out, DecodeContext& context) {
  const auto* value = json.get_ptr<const bool*>();
  if (value == nullptr) return context.fail("boolean", json);
  out = *value;
  return true;
}

bool decode(const nlohmann::json& json, nlohmann::json& out, DecodeContext&) {
  out = json;
  return true;
}

bool reject_unknown_fields(const nlohmann::json& object, std::span<const std::string_view> known,
                           DecodeContext& context) {
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) return context.fail_unknown(key);
  }
  return true;
}

std::size_t utf8_length(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

}  // namespace switchboard::json
