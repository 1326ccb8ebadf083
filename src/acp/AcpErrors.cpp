#include "acp/AcpErrors.h"

#include <string>

#include "switchboard/protocol/generated/ErrorCodes.h"

namespace switchboard::acp {
namespace acp_errors_detail {

namespace p = protocol;

constexpr std::int64_t code(p::ErrorCode value) { return static_cast<std::int64_t>(value); }

AcpErrorCode acp_code_of(std::int64_t ours) {
  if (ours == code(p::ErrorCode::UnknownSession)) return AcpErrorCode::ResourceNotFound;
  if (ours == code(p::ErrorCode::InvalidParams) || ours == code(p::ErrorCode::UnknownAgent) ||
      ours == code(p::ErrorCode::BadWorkingDirectory) || ours == code(p::ErrorCode::Unsupported)) {
    return AcpErrorCode::InvalidParams;
  }
  return AcpErrorCode::InternalError;
}

}  // namespace acp_errors_detail

using namespace acp_errors_detail;

nlohmann::json acp_error(AcpErrorCode value, std::string_view message) {
  return nlohmann::json{{"code", static_cast<int>(value)}, {"message", std::string(message)}};
}

nlohmann::json acp_error_of(const nlohmann::json& daemon_response, std::string_view what) {
  const auto& error = daemon_response.contains("error") && daemon_response["error"].is_object() ? daemon_response["error"]
                                                                                               : nlohmann::json::object();
  const std::int64_t ours = error.contains("code") && error["code"].is_number_integer() ? error["code"].get<std::int64_t>() : 0;
  const std::string message = error.contains("message") && error["message"].is_string() ? error["message"].get<std::string>()
                                                                                        : std::string("the daemon gave no reason");
  auto result = acp_error(acp_code_of(ours), std::string(what) + ": " + message);
  if (ours != 0) result["data"] = {{"switchboardCode", ours}};
  return result;
}

}  // namespace switchboard::acp
