#pragma once

#include <string>
#include <variant>

#include "switchboard/protocol/generated/ErrorCodes.h"

namespace switchboard::engine {

// An expected failure of an engine operation, with its stable wire code. The engine knows nothing of JSON-RPC;
// EngineMethods turns these into RpcErrors.
struct EngineError {
  protocol::ErrorCode code;
  std::string message;
};

template <class T>
using Outcome = std::variant<T, EngineError>;

}  // namespace switchboard::engine
