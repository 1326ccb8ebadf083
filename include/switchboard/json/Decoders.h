#pragma once

// Building blocks of the generated decoders (src/protocol/generated/Types.cpp). They read with get_ptr and
// type checks, never the throwing get<>, and report failures through DecodeContext.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/json/DecodeContext.h"

namespace switchboard::json {

bool decode(const nlohmann::json& json, std::string& out, DecodeContext& context);
bool decode(const nlohmann::json& json, std::int64_t& out, DecodeContext& context);
bool decode(const nlohmann::json& json, double& out, DecodeContext& context);
bool decode(const nlohmann::json& json, bool& out, DecodeContext& context);
bool decode(const nlohmann::json& json, nlohmann::json& out, DecodeContext& context);

// The generated overloads for protocol structs live in switchboard::protocol; bring them in by ADL.
template <class T>
bool decode(const nlohmann::json& json, std::vector<T>& out, DecodeContext& context) {
  if (!json.is_array()) return context.fail("array", json);
  out.clear();
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    context.push(i);
    T item{};
    if (!decode(json[i], item, context)) return false;
    context.pop();
    out.push_back(std::move(item));
  }
  return true;
}

// Name of the schema type for "missing" messages.
template <class T> constexpr std::string_view expected_name() {
  if constexpr (std::is_same_v<T, std::string>) return "string";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "integer";
  else if constexpr (std::is_same_v<T, double>) return "number";
  else if constexpr (std::is_same_v<T, bool>) return "boolean";
  else return "value";
}

template <class T>
bool decode_required(const nlohmann::json& object, std::string_view key, T& out, DecodeContext& context) {
  const auto it = object.find(key);
  if (it == object.end()) return context.fail_missing(key, expected_name<T>());
  context.push(key);
  if (!decode(*it, out, context)) return false;
  context.pop();
  return true;
}

// An absent field stays nullopt. An explicit null is treated as absent too: clients written in languages with
// nullable fields often send it for "not set".
template <class T>
bool decode_optional(const nlohmann::json& object, std::string_view key, std::optional<T>& out,
                     DecodeContext& context) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    out.reset();
    return true;
  }
  context.push(key);
  T value{};
  if (!decode(*it, value, context)) return false;
  context.pop();
  out = std::move(value);
  return true;
}

// Refuses members that the schema does not declare (additionalProperties: false): a typo in a field name is
// reported instead of silently ignored.
bool reject_unknown_fields(const nlohmann::json& object, std::span<const std::string_view> known,
                           DecodeContext& context);

// Number of code points in valid UTF-8 text (the unit of minLength/maxLength).
std::size_t utf8_length(std::string_view text);

}  // namespace switchboard::json
