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
  // The session's MCP servers, handed to Codex as the thread's `mcp_servers` configuration.
  std::vector<protocol::McpServer> mcp_servers;
};

// The thread's configuration overrides (thread/start, resume and fork take them as `config`): Codex's update_plan
// tool, which Codex offers only when configured (its plans are what the adapter reports as the session's plan),
// and the session's MCP servers in Codex's own form (stdio: command, args, env; HTTP: url, http_headers).
nlohmann::json thread_config(const std::vector<protocol::McpServer>& mcp_servers);
inline constexpr int kMcpStartupGraceMs = 30000;

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
// thread/fork of a stored thread, keeping its turns up to and including `last_turn_id` when given (else all).
nlohmann::json fork_thread_params(std::string_view thread_id, const ThreadOptions& options,
                                  const std::optional<std::string>& last_turn_id);
// What a turn/start changes for this turn and the thread's later ones (each unset: unchanged).
struct TurnChanges {
  std::optional<ThreadPolicy> policy;  // after session.setMode
  std::optional<std::string> model;    // a per-turn override or session.setModel
  std::optional<std::string> effort;   // reasoning effort, after session.setOption `effort`
};
// A skill the turn runs (`/name arguments` naming one of the skills skills/list offered): its name and SKILL.md.
struct SkillRef {
  std::string name;
  std::string path;
};
// A user turn. With a skill, the text is `$name arguments` (how Codex's own composer mentions a skill) followed by
// the skill input item, which makes Codex put the skill's instructions in front of the model.
nlohmann::json turn_start_params(std::string_view thread_id, std::string_view text,
                                 const std::vector<protocol::Attachment>& attachments, const TurnChanges& changes,
                                 const std::optional<SkillRef>& skill = std::nullopt);
nlohmann::json turn_interrupt_params(std::string_view thread_id, std::string_view turn_id);
// thread/revert: the thread's history without `turn_id` and every later turn.
nlohmann::json thread_revert_params(std::string_view thread_id, std::string_view turn_id);
// skills/list for the thread's working directory.
nlohmann::json skills_list_params(std::string_view cwd);

// One enabled skill of skills/list's answer, as a command (its name, and a description for people), with the
// SKILL.md path a turn needs to run it.
struct OfferedSkill {
  protocol::AgentCommand command;
  std::string path;
};
std::vector<OfferedSkill> offered_skills(const nlohmann::json& skills_list_result);

// The reasoning efforts `model` takes, from model/list's answer, in Codex's order, and its default: the model's
// own entry, else (a model the catalogue does not know, e.g. behind a custom provider) the default model's.
struct ReasoningEfforts {
  std::vector<protocol::SessionOptionValue> values;
  std::string default_value;
};
std::optional<ReasoningEfforts> reasoning_efforts(const nlohmann::json& model_list_result, const std::optional<std::string>& model);
// The `effort` option (OptionsOffered), with `current` in force.
protocol::SessionOption effort_option(const ReasoningEfforts& efforts, const std::string& current);
inline constexpr std::string_view kEffortOption = "effort";

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
