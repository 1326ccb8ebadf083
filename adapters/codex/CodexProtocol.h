#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::adapters::codex {

// What the translator, the encoders and the adapter share about `codex app-server`'s JSON-RPC over stdio. Codex
// speaks JSON-RPC 2.0 without the "jsonrpc" member; requests go both ways. Our requests carry our own integer ids
// (from 1); Codex's requests to us (approvals) carry its ids, counting from 0 per process, so the two id spaces
// are told apart by the direction of the message, never by the value. The normalized events go to the
// AdapterListener; this header holds what only the adapter needs.

// The requests the adapter sends. The translator needs the kind to interpret the response.
enum class RequestKind { Initialize, ThreadStart, ThreadResume, ThreadFork, TurnStart, TurnInterrupt };

std::string_view to_string(RequestKind kind);

// Codex's answer to one of our requests.
struct CodexResponse {
  std::int64_t id = 0;
  RequestKind kind = RequestKind::Initialize;
  bool ok = false;
  std::string error;                // set when !ok: the JSON-RPC error's message
  nlohmann::json result = nullptr;  // set when ok
};

// What a server→client approval request is about.
enum class ApprovalKind {
  Command,     // item/commandExecution/requestApproval
  FileChange,  // item/fileChange/requestApproval
};

// An approval request Codex is waiting on. `id` is Codex's JSON-RPC id (a number or a string), echoed in the
// answer; `native_id` is the string the engine knows it by.
struct ApprovalRequest {
  nlohmann::json id;
  std::string native_id;
  ApprovalKind kind = ApprovalKind::Command;
  std::string item_id;
  std::string turn_id;
};

// How an approval is answered (Codex's CommandExecutionApprovalDecision / FileChangeApprovalDecision).
enum class ApprovalDecision {
  Accept,            // run it this once
  AcceptForSession,  // run it, and do not ask again for the same thing in this thread
  Decline,           // do not run it; the turn goes on and the model hears "rejected by user"
  Cancel,            // do not run it, and interrupt the turn
};

// What the translator reports that only the adapter needs; none of it is a normalized event.
class CodexControlSink {
 public:
  virtual ~CodexControlSink() = default;
  // A response to a request the adapter announced with CodexTranslator::expect_response().
  virtual void on_response(const CodexResponse& response) = 0;
  // Codex asked something the adapter cannot answer (user input, MCP elicitation, dynamic tools, token
  // refresh, …). The adapter must reply with CodexMessages' error_response(), or Codex waits forever.
  virtual void on_unanswerable_request(const nlohmann::json& id, const std::string& method) = 0;
};

}  // namespace switchboard::adapters::codex
