#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::claude {

// How the content of Claude's messages becomes normalized events. Shared by the live translator and the history
// reader, so a conversation read back from disk produces the same ids and events as it did live.

// The normalized id of one content block of a native message: "<message id>:<block index>". Claude streams each
// block under its index and then writes one assistant line per block, so text and a tool call of one API
// message arrive as two lines with the same message id; numbering the blocks keeps a message.completed on the
// id of its own deltas.
std::string block_message_id(std::string_view native_message_id, std::size_t block_index);

// Numbers the content blocks of each native message in the order its assistant lines deliver them.
class BlockNumbering {
 public:
  std::size_t next(const std::string& native_message_id);
  void clear() { m_seen.clear(); }

 private:
  std::unordered_map<std::string, std::size_t> m_seen;
};

// A tool result's content as text: a string as it is, text blocks joined by newlines, any other block (an image)
// as a placeholder naming its type.
std::string flatten_tool_output(const nlohmann::json& content);

// Whether the CLI wrote this assistant message itself (model "<synthetic>": API errors, "No response requested.")
// instead of the model.
bool is_synthetic(const nlohmann::json& message);

// The file changes of a call of Claude Code's file tools (Edit: old_string → new_string; MultiEdit: one per edit;
// Write: the whole file's content), empty for any other tool or an input without a file_path.
std::vector<protocol::FileDiff> edit_diffs(std::string_view tool, const nlohmann::json& input);

// Reports the content blocks of one native assistant message: text and thinking as completed messages, tool calls
// as started (under the sub-agent's parent tool call, if any), server-side tool results as completed. Empty text
// and thinking blocks (thinking the API chose not to show) and redacted thinking report nothing. `last_text`, when
// given, receives the text of the last text block.
void report_assistant_content(const nlohmann::json& message, const std::optional<std::string>& parent_tool_use_id,
                              BlockNumbering& numbering, AdapterListener& listener, std::string* last_text = nullptr);

// Reports the tool_result blocks of a native user message as completed tool calls; returns how many it found.
std::size_t report_tool_results(const nlohmann::json& message, AdapterListener& listener);

// Claude's token counts in our terms. inputTokens counts every prompt token not read from the cache (Anthropic's
// input_tokens plus cache_creation_input_tokens), cacheReadTokens those read from it, so their sum is the prompt.
std::optional<protocol::Usage> usage_from(const nlohmann::json& native_usage);

// An Anthropic API stop_reason in our vocabulary; tool_use, stop_sequence, pause_turn and unknown ones end a turn
// normally.
protocol::StopReason stop_reason_from(std::string_view native_stop_reason);

}  // namespace switchboard::adapters::claude
