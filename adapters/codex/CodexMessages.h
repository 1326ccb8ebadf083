#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codex/CodexProtocol.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::codex {

// Everything the adapter writes to `codex app-server`'s stdin, as JSON values; to_line() turns one into the bytes
// to write. Codex's JSON-RPC has two quirks every encoder here follows: no "jsonrpc" member, and `params` always
// present (an empty object when there is nothing to say).

// How a thread runs: Codex's approval policy and sandbox. Our session modes name presets of the two.
struct ThreadPolicy {
  std::string approval_policy = "on-request";  // untrusted | on-request | never
  std::string sandbox = "workspace-write";     // read-only | workspace-write | danger-full-access
};

// Our modes for Codex sessions (session.create / session.setMode), after Codex's own presets:
//   read-only    on-request + read-only sandbox: reads freely, asks before any change
//   auto         on-request + workspace-write (the default): edits and runs in the workspace, asks to go beyond
//   untrusted    untrusted + workspace-write: asks before every command that is not known to be safe
//   full-access  never + danger-full-access: no sandbox, never asks
std::optional<ThreadPolicy> policy_for_mode(std::string_view mode);
inline constexpr std::string_view kDefaultMode = "auto";

// A request with the id it was given; the adapter announces `id` and `kind` to the translator when it writes it.
struct OutgoingRequest {
  std::int64_t id = 0;
  RequestKind kind = RequestKind::Initialize;
  nlohmann::json message;
};

struct ThreadOptions {
  std::string cwd;
  ThreadPolicy policy;
  std::optional<std::string> model;
};

// Numbers our requests (1, 2, …; one counter per app-server process) and encodes them.
class CodexRequests {
 public:
  OutgoingRequest initialize(std::string_view client_name, std::string_view client_version);
  OutgoingRequest thread_start(const ThreadOptions& options);
  // Reopens a thread stored under CODEX_HOME, in a fresh process. The turns are not sent back (the engine has
  // the session's events): `excludeTurns`.
  OutgoingRequest thread_resume(std::string_view thread_id, const ThreadOptions& options);
  // A new thread carrying a stored thread's conversation (its id becomes the provider session id), for when the
  // thread itself cannot be resumed because another process has it open.
  OutgoingRequest thread_fork(std::string_view thread_id, const ThreadOptions& options);
  // A user turn. `policy` (after session.setMode) and `model` (a per-turn override) apply from this turn on.
  OutgoingRequest turn_start(std::string_view thread_id, std::string_view text,
                             const std::vector<protocol::Attachment>& attachments,
                             const std::optional<ThreadPolicy>& policy, const std::optional<std::string>& model);
  OutgoingRequest turn_interrupt(std::string_view thread_id, std::string_view turn_id);

  std::int64_t last_id() const { return m_next - 1; }

 private:
  OutgoingRequest request(RequestKind kind, std::string_view method, nlohmann::json params);
  std::int64_t m_next = 1;
};

// The `initialized` notification that must follow the initialize response.
nlohmann::json initialized_notification();

// The answer to an approval request: {"id": <Codex's id>, "result": {"decision": …}}.
nlohmann::json approval_response(const nlohmann::json& request_id, ApprovalDecision decision);
std::string_view to_string(ApprovalDecision decision);

// Refuses a request from Codex the adapter cannot serve.
nlohmann::json error_response(const nlohmann::json& request_id, int code, std::string_view message);
inline constexpr int kMethodNotFound = -32601;

// The input items of a turn: the prompt text, then one localImage per image attachment (Codex reads the file),
// then one text item naming the other attached files by path.
nlohmann::json turn_input(std::string_view text, const std::vector<protocol::Attachment>& attachments);

// One NDJSON line: compact JSON and a newline. Never throws (invalid UTF-8 becomes U+FFFD).
std::string to_line(const nlohmann::json& message);

}  // namespace switchboard::adapters::codex
