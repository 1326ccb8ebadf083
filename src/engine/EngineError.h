#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "switchboard/protocol/generated/ErrorCodes.h"

namespace switchboard::engine {

// An expected failure of an engine operation, with its stable wire code. The engine knows nothing of JSON-RPC;
// EngineMethods turns these into RpcErrors.
struct EngineError {
  protocol::ErrorCode code;
  std::string message;
  // InvalidParams: the JSON pointer of the bad field in the call's params (data.pointer on the wire).
  std::optional<std::string> pointer{};
  // MergeConflict, CheckoutNotClean, UncommittedWork: the files concerned (data.files on the wire).
  std::vector<std::string> files{};
};

template <class T>
using Outcome = std::variant<T, EngineError>;

}  // namespace switchboard::engine
