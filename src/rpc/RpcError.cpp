#include "switchboard/rpc/RpcError.h"

#include <spdlog/spdlog.h>

#include "switchboard/support/RandomId.h"

namespace switchboard::rpc {

RpcError RpcError::invalid_params(std::string_view method, const json::DecodeError& error) {
  const std::string where = error.pointer.empty() ? std::string("params") : error.pointer;
  std::string message = "invalid params for " + std::string(method) + ": " + where + ": expected " + error.expected;
  if (error.actual == "unexpected field") message = "invalid params for " + std::string(method) + ": " + where + ": unexpected field";
  else message += ", got " + error.actual;
  return RpcError{protocol::ErrorCode::InvalidParams, std::move(message),
                  nlohmann::json{{"pointer", error.pointer}, {"expected", error.expected}, {"actual", error.actual}}};
}

RpcError RpcError::invalid_request(std::string_view why) {
  return RpcError{protocol::ErrorCode::InvalidRequest, "invalid request: " + std::string(why), nullptr};
}

RpcError RpcError::method_not_found(std::string_view method) {
  // The name is echoed back, but clipped: it came from the client and may be huge.
  std::string shown(method.substr(0, 128));
  return RpcError{protocol::ErrorCode::MethodNotFound, "method not found: " + shown, nullptr};
}

RpcError RpcError::internal_error(std::string_view detail) {
  const std::string reference = random_id("ref-", 6);
  spdlog::error("internal error {}: {}", reference, detail);
  return RpcError{protocol::ErrorCode::InternalError, "internal error (reference " + reference + ")",
                  nlohmann::json{{"reference", reference}}};
}

}  // namespace switchboard::rpc
