#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace switchboard::json {

// Where decoding failed and why, for a -32602 that names the bad field.
struct DecodeError {
  std::string pointer;   // RFC 6901 JSON pointer into the params, "" for the params object itself
  std::string expected;  // what the schema wanted, e.g. "string" or "integer >= 1"
  std::string actual;    // what was there, e.g. "number" or "missing"
};

// Tracks the path while generated decoders walk a value. The first failure is kept (later ones are usually
// consequences of it), and the pointer is only rendered on failure, so a successful decode costs no strings.
class DecodeContext {
 public:
  void push(std::string_view key) { m_path.emplace_back(std::string(key)); }
  void push(std::size_t index) { m_path.emplace_back(index); }
  void pop() { m_path.pop_back(); }

  // Records a type or constraint failure at the current path; always returns false so decoders can
  // `return context.fail(...)`.
  bool fail(std::string_view expected, const nlohmann::json& actual);
  // The same, one level below the current path (for a constraint on a member that was already decoded).
  bool fail_at(std::string_view key, std::string_view expected, const nlohmann::json& actual);
  bool fail_missing(std::string_view key, std::string_view expected);
  bool fail_unknown(std::string_view key);

  bool failed() const { return m_failed; }
  const DecodeError& error() const { return m_error; }

 private:
  bool record(std::string expected, std::string actual);

  std::vector<std::variant<std::string, std::size_t>> m_path;
  bool m_failed = false;
  DecodeError m_error;
};

// Renders a path segment list as a JSON pointer (escaping '~' and '/').
std::string to_json_pointer(const std::vector<std::string>& segments);

// The JSON type name used in error messages: "string", "number", "integer", "boolean", "null", "array", "object".
std::string_view json_type_name(const nlohmann::json& value);

}  // namespace switchboard::json
