#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::acp {

// ACP's error codes (its schema's ErrorCode): the JSON-RPC ones and ACP's own.
enum class AcpErrorCode : int {
  ParseError = -32700,
  InvalidRequest = -32600,
  MethodNotFound = -32601,
  InvalidParams = -32602,
  InternalError = -32603,
  RequestCancelled = -32800,
  ResourceNotFound = -32002,
};

// A JSON-RPC error object.
nlohmann::json acp_error(AcpErrorCode code, std::string_view message);

// The ACP error for a failed call to the daemon (a response with "error"): our codes map to ACP's (an unknown
// session is ResourceNotFound, bad input InvalidParams, the rest InternalError), the message is ours (written
// for clients: no paths beyond what the editor sent, no internals), prefixed with `what` was being done, and
// our code is kept in data.switchboardCode.
nlohmann::json acp_error_of(const nlohmann::json& daemon_response, std::string_view what);

}  // namespace switchboard::acp
