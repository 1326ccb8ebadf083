#include "support/SchemaValidator.h"

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include "switchboard/protocol/generated/OpenRpcDocument.h"

namespace switchboard::testing {

SchemaValidator::SchemaValidator() : m_document(nlohmann::json::parse(protocol::openrpc_document_text())) {}

SchemaValidator::~SchemaValidator() = default;

std::string json_schema_violations(const nlohmann::json& schema, const nlohmann::json& value, const std::string& prefix) {
  valijson::Schema compiled;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema);
  parser.populateSchema(schema_adapter, compiled);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter value_adapter(value);
  if (validator.validate(compiled, value_adapter, &results)) return {};
  std::string reasons;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const auto& part : error.context) where += part;
    reasons += prefix + where + ": " + error.description + "\n";
  }
  return reasons.empty() ? prefix + (prefix.empty() ? "invalid" : ": invalid") : reasons;
}

std::string SchemaValidator::validate(const nlohmann::json& schema, const nlohmann::json& value) const {
  // Refs point at #/components/schemas/…; give the sub-schema the components so they resolve locally.
  nlohmann::json rooted = schema;
  rooted["components"] = m_document.at("components");
  return json_schema_violations(rooted, value);
}

std::string SchemaValidator::validate_event(const nlohmann::json& event) const {
  const auto& envelope = m_document.at("components").at("schemas").at("EventEnvelope");
  if (auto reasons = validate(envelope, event); !reasons.empty()) return "envelope: " + reasons;
  for (const auto& declared : m_document.at("x-events")) {
    if (declared.at("type") != event.at("type")) continue;
    const bool session_scoped = declared.at("scope") == "session";
    if (session_scoped != event.contains("sessionId")) return "sessionId presence does not match the event's scope";
    return validate(declared.at("data"), event.at("data"));
  }
  return "event type not declared (or internal): " + event.at("type").dump();
}

std::string SchemaValidator::validate_result(const std::string& method, const nlohmann::json& result) const {
  for (const auto& declared : m_document.at("methods")) {
    if (declared.at("name") == method) return validate(declared.at("result").at("schema"), result);
  }
  return "method not declared: " + method;
}

std::string SchemaValidator::validate_type(const std::string& name, const nlohmann::json& value) const {
  const auto& schemas = m_document.at("components").at("schemas");
  if (!schemas.contains(name)) return "type not declared: " + name;
  return validate(schemas.at(name), value);
}

}  // namespace switchboard::testing
