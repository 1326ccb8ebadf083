#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeAttachments.h"
#include "claude-code/ClaudeControl.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::claude {

// Everything the adapter writes to Claude Code's stdin (`--input-format stream-json`), as JSON values; to_line()
// turns one into the bytes to write. Request ids are the caller's: it hands the same id to the translator's
// expect_control_response().

// A user turn: inlined images first (the API reads images best before the text that refers to them), then the
// prompt, then one text block naming the other attached files by path.
// `uuid`, when given, becomes the message's uuid in the CLI's conversation (its history file and what
// rewind_conversation and --resume-session-at name).
nlohmann::json user_message(std::string_view text, const std::vector<PreparedAttachment>& attachments = {},
                            std::string_view uuid = {});

// The answer to a can_use_tool request. Allow echoes the input (the CLI runs the tool with `updatedInput`), or
// the replacement input the answer carries; deny tells the model why. A denied plan (ExitPlanMode) keeps the
// agent planning.
nlohmann::json permission_response(const ToolRequest& request, const PermissionAnswer& answer);

// The answer to an AskUserQuestion request: an approval whose input carries `answers`, mapping each question's
// text to its answer (answers[i] answers question i; a multi-select answer is one string, labels joined by ", ").
// A rejection denies the tool, so the model goes on without answers.
nlohmann::json question_response(const ToolRequest& request, const QuestionAnswer& answer);

// Refuses a control request the adapter cannot serve (hooks, MCP messages, elicitation).
nlohmann::json control_error(std::string_view request_id, std::string_view message);

nlohmann::json initialize_request(std::string_view request_id);
// The models the CLI lists in its answer to initialize (`models`: value, displayName, description; the entry
// `default` is the CLI's own default choice).
std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& initialize_response);
nlohmann::json interrupt_request(std::string_view request_id);
nlohmann::json set_permission_mode_request(std::string_view request_id, std::string_view mode);
nlohmann::json set_model_request(std::string_view request_id, std::string_view model);
nlohmann::json get_context_usage_request(std::string_view request_id);
nlohmann::json mcp_status_request(std::string_view request_id);
// The effort level from the next model request on (the CLI's own /effort does the same).
nlohmann::json set_effort_request(std::string_view request_id, std::string_view effort);
// Drops the prompt with this uuid and everything after it; the CLI refuses a prompt that is not its last one.
nlohmann::json rewind_conversation_request(std::string_view request_id, std::string_view prompt_uuid);

// The commands the CLI offers (the initialize answer's `commands`, system/commands_changed): name, description,
// argumentHint. Those that only make sense in the CLI's own terminal, or that would pull the conversation from
// under the session, are left out (docs/agents/claude-code.md lists them).
std::vector<protocol::AgentCommand> offered_commands(const nlohmann::json& list);

// Claude Code's effort levels (--effort), lowest first, and the one it uses when none is set.
std::vector<std::string> effort_levels();
inline constexpr std::string_view kDefaultEffort = "high";
bool is_effort_level(std::string_view effort);
// The session's options: the effort level, with `current` in force.
std::vector<protocol::SessionOption> session_options(std::string_view current_effort);

// Claude Code's permission modes. Our sessions use the same names (session.setMode passes them through).
bool is_permission_mode(std::string_view mode);
// Claude Code's permission modes, our session modes for it (agents.list offers them).
std::vector<std::string> permission_modes();

// One NDJSON line: compact JSON and a newline. Never throws (invalid UTF-8 becomes U+FFFD).
std::string to_line(const nlohmann::json& message);

}  // namespace switchboard::adapters::claude
