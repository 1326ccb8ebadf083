#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace switchboard::acp {

using Json = nlohmann::json;

// Total readers of what the editor and the daemon send: a member that is missing or of another type reads as
// empty, never throws (an editor's odd message must not end the process).

inline std::string string_member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

inline const nlohmann::json& object_member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!object.is_object()) return kEmpty;
  const auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace switchboard::acp
