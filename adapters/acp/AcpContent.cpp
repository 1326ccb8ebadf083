#include "acp/AcpContent.h"

#include <array>

#include "common/LineStats.h"
#include "common/NativeJson.h"
#include "common/PermissionText.h"
#include "common/RulePattern.h"

namespace switchboard::adapters::acp {

using nlohmann::json;
using native::string_or_empty;

namespace {

// Kinds that say nothing about what the tool does to the machine: the title names it better.
constexpr std::array<std::string_view, 3> kVagueKinds{"other", "think", "switch_mode"};

std::string joined_command(const json& command) {
  if (command.is_string()) return command.get<std::string>();
  if (!command.is_array()) return {};
  std::string out;
  for (const auto& word : command) {
    if (!word.is_string()) continue;
    if (!out.empty()) out += ' ';
    out += word.get<std::string>();
  }
  return out;
}

}  // namespace

std::string tool_kind(const json& tool_call) {
  if (auto kind = native::string_at(tool_call, "kind"); kind && !kind->empty()) return *kind;
  if (const auto* meta = native::object_at(tool_call, "_meta")) {
    if (const auto* tool = native::object_at(*meta, "x.ai/tool")) {
      if (auto kind = native::string_at(*tool, "kind"); kind && !kind->empty()) return *kind;
    }
  }
  return "other";
}

std::string tool_name(const json& tool_call) {
  const std::string kind = tool_kind(tool_call);
  if (!one_of(kVagueKinds, kind)) return kind;
  const std::string title = string_or_empty(tool_call, "title");
  return title.empty() ? kind : title;
}

std::string tool_subject(const json& tool_call) {
  const auto* input = native::object_at(tool_call, "rawInput");
  if (tool_kind(tool_call) == "execute" && input != nullptr) {
    if (const auto* command = native::member(*input, "command")) {
      if (auto line = joined_command(*command); !line.empty()) return line;
    }
  }
  if (const auto* locations = native::array_at(tool_call, "locations"); locations != nullptr && !locations->empty()) {
    if (auto path = string_or_empty((*locations)[0], "path"); !path.empty()) return path;
  }
  if (input != nullptr) {
    for (const auto* key : {"path", "file_path", "filePath", "target_file"}) {
      if (auto path = string_or_empty(*input, key); !path.empty()) return path;
    }
  }
  return {};
}

std::vector<protocol::FileDiff> content_diffs(const json& content) {
  std::vector<protocol::FileDiff> diffs;
  if (!content.is_array()) return diffs;
  for (const auto& item : content) {
    if (string_or_empty(item, "type") != "diff") continue;
    const auto path = native::string_at(item, "path");
    const auto new_text = native::string_at(item, "newText");
    if (!path || path->empty() || !new_text) continue;
    protocol::FileDiff diff;
    diff.path = *path;
    diff.old_text = native::string_at(item, "oldText");
    diff.new_text = *new_text;
    diffs.push_back(std::move(diff));
  }
  return diffs;
}

std::string content_text(const json& content) {
  if (content.is_array()) {
    std::string out;
    for (const auto& item : content) out += content_text(item);
    return out;
  }
  if (!content.is_object()) return {};
  const std::string type = string_or_empty(content, "type");
  if (type == "text") return string_or_empty(content, "text");
  if (type == "content") {
    const auto* inner = native::member(content, "content");
    return inner != nullptr ? content_text(*inner) : std::string();
  }
  if (type == "diff") return string_or_empty(content, "path") + ": edited\n";
  if (type == "resource") {
    if (const auto* resource = native::object_at(content, "resource")) return string_or_empty(*resource, "text");
  }
  return {};
}

std::optional<std::string> bytes_of(const json& array) {
  if (!array.is_array()) return std::nullopt;
  std::string out;
  out.reserve(array.size());
  for (const auto& byte : array) {
    if (!byte.is_number_integer()) return std::nullopt;
    const auto value = byte.get<std::int64_t>();
    if (value < 0 || value > 255) return std::nullopt;
    out.push_back(static_cast<char>(static_cast<unsigned char>(value)));
  }
  return out;
}

std::string raw_output_text(const json& raw_output) {
  if (raw_output.is_null()) return {};
  if (raw_output.is_string()) return raw_output.get<std::string>();
  if (raw_output.is_object()) {
    if (const auto* output = native::member(raw_output, "output")) {
      if (output->is_string()) return output->get<std::string>();
      if (auto bytes = bytes_of(*output)) return *bytes;
    }
    for (const auto* key : {"output_for_prompt", "stdout"}) {
      if (auto text = native::string_at(raw_output, key)) return *text;
    }
  }
  return native::dump(raw_output);
}

protocol::StopReason stop_reason_of(std::string_view reason) {
  if (reason == "cancelled") return protocol::StopReason::Cancelled;
  if (reason == "refusal") return protocol::StopReason::Refusal;
  if (reason == "max_tokens" || reason == "max_turn_requests") return protocol::StopReason::MaxTokens;
  return protocol::StopReason::EndTurn;
}

std::optional<protocol::Usage> prompt_usage(const json& result) {
  const json* usage = native::object_at(result, "usage");
  if (usage == nullptr) {
    if (const auto* meta = native::object_at(result, "_meta")) usage = native::object_at(*meta, "usage");
  }
  if (usage == nullptr) return std::nullopt;
  protocol::Usage out;
  out.input_tokens = native::integer_at(*usage, "inputTokens");
  out.output_tokens = native::integer_at(*usage, "outputTokens");
  out.cache_read_tokens = native::integer_at(*usage, "cachedReadTokens");
  if (!out.input_tokens && !out.output_tokens && !out.cache_read_tokens) return std::nullopt;
  return out;
}

PermissionAsk permission_ask(std::string native_id, const json& params) {
  static const json kNone = json::object();
  const auto* call = native::object_at(params, "toolCall");
  const json& tool_call = call != nullptr ? *call : kNone;
  PermissionAsk ask;
  ask.native_id = std::move(native_id);
  ask.tool = tool_name(tool_call);
  if (const auto* input = native::object_at(tool_call, "rawInput")) ask.input = *input;
  ask.subject = tool_subject(tool_call);
  const std::string title = string_or_empty(tool_call, "title");
  if (ask.tool == "execute" && !ask.subject.empty()) {
    // The command as it will run: a title is the agent's summary of it (OpenCode's is the model's description).
    ask.description = run_description(ask.subject, title);
  } else {
    ask.description = !title.empty() ? title : ask.subject.empty() ? ask.tool : ask.tool + ": " + ask.subject;
  }
  ask.suggested_rule = native::exact_rule(ask.tool, ask.subject);
  return ask;
}

std::optional<std::string> option_for(const json& options, bool allow) {
  if (!options.is_array()) return std::nullopt;
  const std::string_view once = allow ? "allow_once" : "reject_once";
  const std::string_view always = allow ? "allow_always" : "reject_always";
  std::optional<std::string> fallback;
  for (const auto& option : options) {
    const std::string kind = string_or_empty(option, "kind");
    auto id = native::string_at(option, "optionId");
    if (!id) continue;
    if (kind == once) return id;
    if (kind == always && !fallback) fallback = id;
  }
  return fallback;
}

json permission_outcome(const std::optional<std::string>& option_id) {
  if (!option_id) return json{{"outcome", {{"outcome", "cancelled"}}}};
  return json{{"outcome", {{"outcome", "selected"}, {"optionId", *option_id}}}};
}

}  // namespace switchboard::adapters::acp
