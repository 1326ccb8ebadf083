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
nlohmann::json user_message(std::string_view text, const std::vector<PreparedAttachment>& attachments = {});

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

// Claude Code's permission modes. Our sessions use the same names (session.setMode passes them through).
bool is_permission_mode(std::string_view mode);
// Claude Code's permission modes, our session modes for it (agents.list offers them).
std::vector<std::string> permission_modes();

// One NDJSON line: compact JSON and a newline. Never throws (invalid UTF-8 becomes U+FFFD).
std::string to_line(const nlohmann::json& message);

}  // namespace switchboard::adapters::claude
