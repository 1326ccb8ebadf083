#include "switchboard/json/DecodeContext.h"

#include <nlohmann/json.hpp>

namespace switchboard::json {
namespace {

void append_pointer_segment(std::string& pointer, std::string_view segment) {
  pointer.push_back('/');
  for (const char c : segment) {
    if (c == '~') pointer.append("~0");
    else if (c == '/') pointer.append("~1");
    else pointer.push_back(c);
  }
}

}  // namespace

std::string to_json_pointer(const std::vector<std::string>& segments) {
  std::string pointer;
  for (const auto& segment : segments) append_pointer_segment(pointer, segment);
  return pointer;
}

std::string_view json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "integer";
    case nlohmann::json::value_t::number_float: return "number";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::binary: return "binary";
    case nlohmann::json::value_t::discarded: return "discarded";
  }
  return "unknown";
}

bool DecodeContext::record(std::string expected, std::string actual) {
  if (m_failed) return false;
  m_failed = true;
  std::vector<std::string> segments;
  segments.reserve(m_path.size());
  for (const auto& segment : m_path) {
    if (const auto* key = std::get_if<std::string>(&segment)) segments.push_back(*key);
    else segments.push_back(std::to_string(std::get<std::size_t>(segment)));
  }
  m_error = DecodeError{to_json_pointer(segments), std::move(expected), std::move(actual)};
  return false;
}

bool DecodeContext::fail(std::string_view expected, const nlohmann::json& actual) {
  return record(std::string(expected), std::string(json_type_name(actual)));
}

bool DecodeContext::fail_at(std::string_view key, std::string_view expected, const nlohmann::json& actual) {
  push(key);
  // A constraint failure on a value of the right type: say which value, briefly.
  std::string shown = actual.is_string() ? "string of " + std::to_string(actual.get_ref<const std::string&>().size()) + " bytes"
                                         : actual.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown.size() > 64) shown = std::string(json_type_name(actual));
  const bool result = record(std::string(expected), std::move(shown));
  pop();
  return result;
}

bool DecodeContext::fail_missing(std::string_view key, std::string_view expected) {
  push(key);
  const bool result = record(std::string(expected), "missing");
  pop();
  return result;
}

bool DecodeContext::fail_unknown(std::string_view key) {
  push(key);
  const bool result = record("no such field", "unexpected field");
  pop();
  return result;
}

}  // namespace switchboard::json
