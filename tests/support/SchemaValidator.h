#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace switchboard::testing {

// Why `value` does not satisfy the JSON Schema (draft 7) `schema`, whose references resolve within it: one line per
// error, each starting with `prefix` and where in the value it is; empty when it does.
std::string json_schema_violations(const nlohmann::json& schema, const nlohmann::json& value, const std::string& prefix = "");

// Validates wire JSON against the protocol's own schema (the OpenRPC document the daemon serves, which is
// generated from schema/), using valijson. Test-only: at runtime the generated decoders do the checking.
class SchemaValidator {
 public:
  SchemaValidator();
  ~SchemaValidator();

  // Empty string when `event` (an event envelope with its data) is valid; otherwise the reasons.
  std::string validate_event(const nlohmann::json& event) const;
  // Empty string when `result` is a valid result of `method`.
  std::string validate_result(const std::string& method, const nlohmann::json& result) const;

  // Empty string when `value` is valid against the shared type `name` (components/schemas, from types.json).
  std::string validate_type(const std::string& name, const nlohmann::json& value) const;

  const nlohmann::json& document() const { return m_document; }

 private:
  std::string validate(const nlohmann::json& schema, const nlohmann::json& value) const;
  nlohmann::json m_document;
};

}  // namespace switchboard::testing
