#include "support/AcpSchemaValidator.h"

#include <map>

#include "support/SchemaValidator.h"
#include "support/TextFile.h"

namespace switchboard::testing {
namespace acp_schema_validator_detail {

// What the result of each agent method is, in the schema's $defs.
const std::map<std::string, std::string>& response_types() {
  static const std::map<std::string, std::string> kTypes{
      {"initialize", "InitializeResponse"},     {"authenticate", "AuthenticateResponse"},
      {"session/new", "NewSessionResponse"},    {"session/load", "LoadSessionResponse"},
      {"session/list", "ListSessionsResponse"}, {"session/prompt", "PromptResponse"},
      {"session/set_mode", "SetSessionModeResponse"}, {"session/resume", "ResumeSessionResponse"},
      {"session/close", "CloseSessionResponse"}, {"session/set_config_option", "SetSessionConfigOptionResponse"},
  };
  return kTypes;
}

const std::map<std::string, std::string>& outgoing_types() {
  static const std::map<std::string, std::string> kTypes{
      {"session/update", "SessionNotification"},
      {"session/request_permission", "RequestPermissionRequest"},
      {"$/cancel_request", "CancelRequestNotification"},
  };
  return kTypes;
}

}  // namespace acp_schema_validator_detail

AcpSchemaValidator::AcpSchemaValidator(const std::filesystem::path& schema_file)
    : m_schema(nlohmann::json::parse(read_text_file(schema_file), nullptr, false)) {}

std::string AcpSchemaValidator::validate_against(const std::string& definition, const nlohmann::json& value) const {
  const auto& defs = m_schema.at("$defs");
  if (!defs.contains(definition)) return "no definition " + definition + " in the schema";
  // The definition as the root, with every definition beside it so its #/$defs/... references resolve.
  nlohmann::json rooted = defs.at(definition);
  rooted["$defs"] = defs;
  return json_schema_violations(rooted, value, definition);
}

std::string AcpSchemaValidator::validate(const nlohmann::json& message, const std::string& answers) const {
  namespace detail = acp_schema_validator_detail;
  if (!message.is_object() || message.value("jsonrpc", "") != "2.0") return "not a JSON-RPC 2.0 message";
  if (message.contains("method")) {
    const auto method = message.value("method", "");
    const auto it = detail::outgoing_types().find(method);
    if (it == detail::outgoing_types().end()) return "the agent sent a method it has no business sending: " + method;
    return validate_against(it->second, message.value("params", nlohmann::json::object()));
  }
  if (message.contains("error")) return validate_against("Error", message["error"]);
  const auto it = detail::response_types().find(answers);
  if (it == detail::response_types().end()) return "a response to an unknown method: " + answers;
  if (!message.contains("result")) return "a response without result or error";
  return validate_against(it->second, message["result"]);
}

}  // namespace switchboard::testing
