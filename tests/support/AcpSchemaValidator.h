#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace switchboard::testing {

// Validates the messages `switchboard acp` sends an editor against the ACP JSON Schema that ships in the
// official SDK package (schema/v1/schema.json), with valijson. Each message is checked against the definition
// for what it is: a response against the named method's response type (InitializeResponse, PromptResponse,
// ...), an error against Error, session/update against SessionNotification, session/request_permission
// against RequestPermissionRequest, $/cancel_request against CancelRequestNotification. Test-only.
class AcpSchemaValidator {
 public:
  explicit AcpSchemaValidator(const std::filesystem::path& schema_file);

  bool loaded() const { return m_schema.is_object(); }
  // Empty when `message` is valid; else the reasons. `answers`: the method the message answers (responses).
  std::string validate(const nlohmann::json& message, const std::string& answers) const;

 private:
  std::string validate_against(const std::string& definition, const nlohmann::json& value) const;
  nlohmann::json m_schema;
};

}  // namespace switchboard::testing
