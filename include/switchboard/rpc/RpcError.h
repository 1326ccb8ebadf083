#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "switchboard/json/DecodeContext.h"
#include "switchboard/protocol/generated/ErrorCodes.h"

namespace switchboard::rpc {

// An expected failure on its way to the wire: code (from schema/errors.json), a message safe to show a user,
// and optional structured data. Defects never become an RpcError directly; they go through internal_error(),
// which logs the details and discloses only a reference.
struct RpcError {
  protocol::ErrorCode code;
  std::string message;
  nlohmann::json data;  // null when absent

  static RpcError invalid_params(std::string_view method, const json::DecodeError& error);
  static RpcError invalid_request(std::string_view why);
  static RpcError method_not_found(std::string_view method);
  // Logs `detail` at error level under a fresh reference id; the wire sees only the reference.
  static RpcError internal_error(std::string_view detail);
};

}  // namespace switchboard::rpc
