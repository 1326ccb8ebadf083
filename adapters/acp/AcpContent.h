#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::acp {

// Reading ACP's content and tool-call objects, shared by the translator and its tests. Every reader is total:
// a field of another type or shape reads as absent, never throws.

// The tool's ACP kind (read, edit, delete, move, search, execute, think, fetch, switch_mode, other). A tool_call
// may leave it out until a later update (Grok Build's live tool_call does, and carries it in its
// `_meta["x.ai/tool"].kind` instead): then that, else "other".
std::string tool_kind(const nlohmann::json& tool_call);

// The tool name our events and rules use: the kind, which is the same for every ACP agent (so one rule
// `execute(npm test*)` answers a shell command of any of them), or the title when the kind says nothing
// ("other", "think", or none).
std::string tool_name(const nlohmann::json& tool_call);

// What a rule pattern is matched against: the command line of an `execute` tool, else the first location's
// path, else a path or file in the raw input; empty when there is none.
std::string tool_subject(const nlohmann::json& tool_call);

// The text of ACP content: a ContentBlock ({"type":"text"}), a tool-call content item ({"type":"content",
// "content":{...}}, or a diff, shown as "<path>: edited"), or an array of them, joined.
std::string content_text(const nlohmann::json& content);

// The file changes in a tool call's content: its `diff` items ({"type":"diff","path","oldText"?,"newText"}; no
// oldText: a new file), as our FileDiffs. None when the content holds none.
std::vector<protocol::FileDiff> content_diffs(const nlohmann::json& content);

// A tool's raw output as text: a string as it is; an object's `output`, which Grok Build sends as an array of
// byte values (decoded; a non-byte element makes it unreadable), or its `output_for_prompt`/`stdout`; else the
// JSON. Empty for null.
std::string raw_output_text(const nlohmann::json& raw_output);

// The bytes of an array of integers 0..255, or nullopt.
std::optional<std::string> bytes_of(const nlohmann::json& array);

// ACP's stopReason as ours: end_turn, cancelled, refusal, max_tokens and max_turn_requests (both MaxTokens);
// anything else is an end of turn we do not know, reported as EndTurn.
protocol::StopReason stop_reason_of(std::string_view reason);

// The usage in a session/prompt result: ACP's `usage` (inputTokens, outputTokens, cachedReadTokens), else the
// same fields under `_meta.usage` (Grok Build 1.0.41 puts them there); nullopt when neither is present.
std::optional<protocol::Usage> prompt_usage(const nlohmann::json& result);

// The PermissionAsk for a session/request_permission's params; `native_id` names it.
PermissionAsk permission_ask(std::string native_id, const nlohmann::json& params);

// The option to select for our decision. The engine keeps every session, project and always rule itself, so an
// allow is allow_once and a deny reject_once; an agent that offers only the "always" variant gets that. nullopt:
// the agent offered no option of that direction (the request is then answered `cancelled`).
std::optional<std::string> option_for(const nlohmann::json& options, bool allow);

// The result that answers a permission request: {"outcome":{"outcome":"selected","optionId":...}}, or
// {"outcome":{"outcome":"cancelled"}} without an option.
nlohmann::json permission_outcome(const std::optional<std::string>& option_id);

}  // namespace switchboard::adapters::acp
