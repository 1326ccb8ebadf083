#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::codex {

// How Codex's items and approval requests are named and described in our vocabulary. Pure functions.

// Our tool names for Codex's items (what rules are written against).
inline constexpr std::string_view kShellTool = "shell";        // commandExecution
inline constexpr std::string_view kPatchTool = "apply_patch";  // fileChange
inline constexpr std::string_view kWebSearchTool = "web_search";
inline constexpr std::string_view kViewImageTool = "view_image";

// The command a person typed, from Codex's command line: `/bin/bash -lc '<script>'` (or bash/sh/zsh -c/-lc)
// becomes `<script>` with its single-quote escapes undone; anything else is returned as it is.
std::string unwrap_shell_command(std::string_view command);

// The input reported with tool.started for a commandExecution item: {command, cwd}.
nlohmann::json command_input(const nlohmann::json& item);
// The input for a fileChange item: {changes: [{path, kind, diff}]} with kind add/delete/update (and movePath).
nlohmann::json file_change_input(const nlohmann::json& changes);
// The FileDiffs of such an input (live or from history): an added file's content whole, a deleted file's old
// content replaced by nothing, an update's diff one FileDiff per hunk.
std::vector<protocol::FileDiff> file_change_diffs(const nlohmann::json& input);

// The permission ask for item/commandExecution/requestApproval.
PermissionAsk command_approval_ask(const nlohmann::json& params);
// The permission ask for item/fileChange/requestApproval; `changes` are the item's changes (from its
// item/started), null when the item was not seen.
PermissionAsk file_change_approval_ask(const nlohmann::json& params, const nlohmann::json& changes);

// The text of a Codex error: its message, unless that is a provider's JSON error body, whose own message is
// taken instead ("{\"error\": {\"message\": \"bad request\"…}}" → "bad request").
std::string error_text(const nlohmann::json& error);
// Whether an error (TurnError) is one the next turn cannot fix by itself: unauthorized, usage limit reached.
bool is_fatal_error(const nlohmann::json& error);

// One model request's usage, live or from a rollout. OpenAI counts cached tokens inside the input tokens; our
// input tokens are the prompt tokens not read from the cache.
protocol::Usage request_usage(std::int64_t input, std::int64_t cached, std::int64_t output);
// A turn's usage is the sum of its requests' (`total` starts empty).
void add_usage(std::optional<protocol::Usage>& total, const protocol::Usage& more);


}  // namespace switchboard::adapters::codex
