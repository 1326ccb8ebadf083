#include "claude-code/ClaudeContent.h"

#include "common/FileDiffs.h"
#include "common/NativeJson.h"

namespace switchboard::adapters::claude {

std::vector<protocol::FileDiff> edit_diffs(std::string_view tool, const nlohmann::json& input) {
  std::vector<protocol::FileDiff> diffs;
  const auto path = native::string_at(input, "file_path");
  if (!path || path->empty()) return diffs;
  if (tool == "Edit") {
    const auto old_text = native::string_at(input, "old_string");
    const auto new_text = native::string_at(input, "new_string");
    if (old_text && new_text) diffs.push_back(replacement(*path, *old_text, *new_text));
  } else if (tool == "MultiEdit") {
    if (const auto* edits = native::array_at(input, "edits")) {
      for (const auto& edit : *edits) {
        const auto old_text = native::string_at(edit, "old_string");
        const auto new_text = native::string_at(edit, "new_string");
        if (old_text && new_text) diffs.push_back(replacement(*path, *old_text, *new_text));
      }
    }
  } else if (tool == "Write") {
    if (const auto content = native::string_at(input, "content")) diffs.push_back(whole_file(*path, *content));
  }
  return diffs;
}

std::string block_message_id(std::string_view native_message_id, std::size_t block_index) {
  std::string id(native_message_id);
  id += ':';
  id += std::to_string(block_index);
  return id;
}

std::size_t BlockNumbering::next(const std::string& native_message_id) { return m_seen[native_message_id]++; }

std::string flatten_tool_output(const nlohmann::json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return {};
  if (content.is_object()) {
    if (auto text = native::string_at(content, "text")) return *text;
    return native::dump(content);
  }
  if (!content.is_array()) return native::dump(content);
  std::string out;
  for (const auto& block : content) {
    if (!out.empty()) out += '\n';
    if (block.is_string()) {
      out += block.get<std::string>();
    } else if (auto text = native::string_at(block, "text")) {
      out += *text;
    } else {
      // Images and documents cannot be shown as text; say what was there rather than dropping it silently.
      out += "[" + native::string_at(block, "type").value_or("content") + "]";
    }
  }
  return out;
}

bool is_synthetic(const nlohmann::json& message) { return native::string_or_empty(message, "model") == "<synthetic>"; }

void report_assistant_content(const nlohmann::json& message, const std::optional<std::string>& parent_tool_use_id,
                              BlockNumbering& numbering, AdapterListener& listener, std::string* last_text) {
  const auto* content = native::member(message, "content");
  if (content == nullptr) return;
  if (content->is_string()) {
    // The API allows a plain string for a message's content; it is one text block.
    return report_assistant_content({{"id", native::string_or_empty(message, "id")},
                                     {"content", nlohmann::json::array({{{"type", "text"}, {"text", *content}}})}},
                                    parent_tool_use_id, numbering, listener, last_text);
  }
  if (!content->is_array()) return;
  const std::string native_id = native::string_or_empty(message, "id");
  for (const auto& block : *content) {
    const std::size_t index = numbering.next(native_id);
    const std::string type = native::string_or_empty(block, "type");
    if (type == "text") {
      std::string text = native::string_or_empty(block, "text");
      if (text.empty()) continue;
      if (last_text != nullptr) *last_text = text;
      listener.on_message(MessageCompleted{block_message_id(native_id, index), protocol::DeltaKind::Text, std::move(text), parent_tool_use_id});
    } else if (type == "thinking") {
      std::string thinking = native::string_or_empty(block, "thinking");
      if (thinking.empty()) continue;
      listener.on_message(
          MessageCompleted{block_message_id(native_id, index), protocol::DeltaKind::Thinking, std::move(thinking), parent_tool_use_id});
    } else if (type == "tool_use" || type == "server_tool_use" || type == "mcp_tool_use") {
      const auto* input = native::object_at(block, "input");
      std::string name = native::string_or_empty(block, "name");
      auto diffs = input != nullptr ? edit_diffs(name, *input) : std::vector<protocol::FileDiff>{};
      listener.on_tool_started(ToolStarted{native::string_or_empty(block, "id"), std::move(name),
                                           input != nullptr ? *input : nlohmann::json::object(), parent_tool_use_id, std::move(diffs)});
    } else if (type.size() > 12 && type.ends_with("_tool_result")) {
      // Results of tools the API ran itself (web_search_tool_result, …) come inside the assistant message.
      const auto* result = native::member(block, "content");
      const bool is_error = result != nullptr && result->is_object() &&
                            native::string_or_empty(*result, "type").ends_with("_error");
      listener.on_tool_completed(ToolCompleted{native::string_or_empty(block, "tool_use_id"),
                                               result != nullptr ? flatten_tool_output(*result) : std::string(), is_error});
    }
    // redacted_thinking and block types we do not know carry nothing a client can show.
  }
}

std::size_t report_tool_results(const nlohmann::json& message, AdapterListener& listener) {
  const auto* content = native::array_at(message, "content");
  if (content == nullptr) return 0;
  std::size_t reported = 0;
  for (const auto& block : *content) {
    if (native::string_or_empty(block, "type") != "tool_result") continue;
    const auto* output = native::member(block, "content");
    listener.on_tool_completed(ToolCompleted{native::string_or_empty(block, "tool_use_id"),
                                             output != nullptr ? flatten_tool_output(*output) : std::string(),
                                             native::bool_or(block, "is_error", false)});
    ++reported;
  }
  return reported;
}

std::optional<protocol::Usage> usage_from(const nlohmann::json& native_usage) {
  if (!native_usage.is_object()) return std::nullopt;
  protocol::Usage usage;
  const auto input = native::integer_at(native_usage, "input_tokens");
  const auto cache_write = native::integer_at(native_usage, "cache_creation_input_tokens");
  if (input || cache_write) usage.input_tokens = input.value_or(0) + cache_write.value_or(0);
  usage.output_tokens = native::integer_at(native_usage, "output_tokens");
  usage.cache_read_tokens = native::integer_at(native_usage, "cache_read_input_tokens");
  return usage;
}

protocol::StopReason stop_reason_from(std::string_view native_stop_reason) {
  if (native_stop_reason == "max_tokens" || native_stop_reason == "model_context_window_exceeded") {
    return protocol::StopReason::MaxTokens;
  }
  if (native_stop_reason == "refusal") return protocol::StopReason::Refusal;
  return protocol::StopReason::EndTurn;
}

}  // namespace switchboard::adapters::claude
