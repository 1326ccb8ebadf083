#pragma once

#include <optional>
#include <string>
#include <vector>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/JsonRpcEndpoint.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::codex {

// The params of everything the adapter sends to `codex app-server`, and the results of its answers to Codex's
// requests; the kit's JsonRpcEndpoint numbers the requests and writes the lines. Codex's JSON-RPC has two quirks:
// no "jsonrpc" member (kRpcOptions), and `params` always present (every builder here returns an object).

// How the adapter's endpoint speaks Codex's dialect.
inline const JsonRpcEndpoint::Options kRpcOptions{"codex", /*send_jsonrpc_member=*/false};

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
// The default first: clients and `switchboard acp` take the first as the mode of a session that names none.
inline std::vector<std::string> codex_modes() { return {"auto", "read-only", "untrusted", "full-access"}; }
inline constexpr std::string_view kDefaultMode = "auto";

struct ThreadOptions {
  std::string cwd;
  ThreadPolicy policy;
  std::optional<std::string> model;
};

nlohmann::json initialize_params(std::string_view client_name, std::string_view client_version);
// model/list asks for one page of this many models: more than any catalogue Codex ships; the rest would be lost.
inline constexpr int kModelListPage = 100;
nlohmann::json model_list_params();
// The models of model/list's answer (`data`: model, displayName, description, isDefault), without the hidden ones.
std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& model_list_result);
// thread/start.
nlohmann::json thread_params(const ThreadOptions& options);
// thread/resume reopens a thread stored under CODEX_HOME, in a fresh process; thread/fork starts a new thread
// carrying a stored thread's conversation (its id becomes the provider session id), for when the thread itself
// cannot be resumed because another process has it open. Both take the same params; the turns are not sent back
// (the engine has the session's events): `excludeTurns`.
nlohmann::json reopen_thread_params(std::string_view thread_id, const ThreadOptions& options);
// A user turn. `policy` (after session.setMode) and `model` (a per-turn override) apply from this turn on.
nlohmann::json turn_start_params(std::string_view thread_id, std::string_view text,
                                 const std::vector<protocol::Attachment>& attachments,
                                 const std::optional<ThreadPolicy>& policy, const std::optional<std::string>& model);
nlohmann::json turn_interrupt_params(std::string_view thread_id, std::string_view turn_id);

// How an approval is answered (Codex's CommandExecutionApprovalDecision / FileChangeApprovalDecision).
enum class ApprovalDecision {
  Accept,            // run it this once
  AcceptForSession,  // run it, and do not ask again for the same thing in this thread
  Decline,           // do not run it; the turn goes on and the model hears "rejected by user"
  Cancel,            // do not run it, and interrupt the turn
};

// The result answering an approval request: {"decision": …}.
nlohmann::json approval_result(ApprovalDecision decision);
std::string_view to_string(ApprovalDecision decision);

// The input items of a turn: the prompt text, then one localImage per image attachment (Codex reads the file),
// then one text item naming the other attached files by path.
nlohmann::json turn_input(std::string_view text, const std::vector<protocol::Attachment>& attachments);

}  // namespace switchboard::adapters::codex
