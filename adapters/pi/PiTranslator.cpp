#include "pi/PiTranslator.h"

#include <array>

#include "common/FileDiffs.h"
#include "common/NativeJson.h"
#include "pi/PiPermissions.h"

namespace switchboard::adapters::pi {
namespace {

using nlohmann::json;
using protocol::DeltaKind;

// Events that carry nothing a client needs from us: the prompt's and the model call's brackets (the engine has
// its own turn lifecycle), the messages we already have (the user's prompt, the system prompt, tool results,
// which tool_execution_end reports), Pi's own queue (ours is the source of truth), its session bookkeeping and
// the state changes our own commands caused.
constexpr std::array kDroppedEvents = {
    std::string_view("agent_end"),
    std::string_view("turn_start"),           std::string_view("turn_end"),
    std::string_view("queue_update"),         std::string_view("entry_appended"),
    std::string_view("session_info_changed"), std::string_view("thinking_level_changed"),
    std::string_view("bash_execution_update"), std::string_view("summarization_retry_start"),
    std::string_view("summarization_retry_end"),
};

// Extension UI calls that expect no answer: nothing to show a client.
constexpr std::array kFireAndForget = {
    std::string_view("notify"),   std::string_view("setStatus"),       std::string_view("setWidget"),
    std::string_view("setTitle"), std::string_view("set_editor_text"),
};

constexpr std::array kDialogs = {
    std::string_view("select"),
    std::string_view("confirm"),
    std::string_view("input"),
    std::string_view("editor"),
};

// Pi's assistant stream events that say nothing the deltas and message_end do not.
constexpr std::array kDroppedStreamEvents = {
    std::string_view("start"),          std::string_view("text_start"),    std::string_view("text_end"),
    std::string_view("thinking_start"), std::string_view("thinking_end"),  std::string_view("toolcall_start"),
    std::string_view("toolcall_delta"), std::string_view("toolcall_end"),  std::string_view("done"),
    std::string_view("error"),
};

AgentStatus status_of(protocol::AgentStatusKind kind) {
  AgentStatus status;
  status.status = kind;
  return status;
}

void add(std::optional<std::int64_t>& total, std::optional<std::int64_t> more) {
  if (!more) return;
  total = total.value_or(0) + *more;
}

}  // namespace

std::string result_text(const json& result) {
  std::string text;
  const auto* content = native::array_at(result, "content");
  if (content == nullptr) return text;
  for (const auto& block : *content) {
    if (native::string_or_empty(block, "type") != "text") continue;
    if (!text.empty()) text += "\n";
    text += native::string_or_empty(block, "text");
  }
  return text;
}

std::vector<protocol::FileDiff> file_diffs(std::string_view tool, const json& input) {
  const auto path = native::string_at(input, "path");
  if (!path || path->empty()) return {};
  if (tool == "write") {
    const auto content = native::string_at(input, "content");
    if (!content) return {};
    return {whole_file(*path, *content)};
  }
  if (tool != "edit") return {};
  json edits = native::member(input, "edits") != nullptr ? input["edits"] : json::array({input});
  if (edits.is_string()) edits = json::parse(edits.get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (edits.is_object()) edits = json::array({edits});
  std::vector<protocol::FileDiff> diffs;
  if (!edits.is_array()) return diffs;
  for (const auto& one : edits) {
    const auto old_text = native::string_at(one, "oldText");
    const auto new_text = native::string_at(one, "newText");
    if (old_text && new_text) diffs.push_back(replacement(*path, *old_text, *new_text));
  }
  return diffs;
}

PiTranslator::PiTranslator(AdapterListener& events, Reply reply) : m_events(events), m_reply(std::move(reply)) {}

void PiTranslator::feed_line(std::string_view line) {
  const json message = native::parse_line(line);
  if (message.is_discarded()) return m_lines.not_json(line);
  feed(message);
}

void PiTranslator::turn_started() {
  m_turn_running = true;
  m_last_text.clear();
  m_last_error.reset();
  m_usage = protocol::Usage{};
  m_has_usage = false;
  m_status_raised = false;
  m_run_started = false;
}

void PiTranslator::turn_refused(const std::string& error) {
  TurnResult result;
  result.stop_reason = protocol::StopReason::Error;
  result.error = error;
  end_turn(std::move(result));
}

void PiTranslator::turn_handled() {
  if (!m_turn_running || m_run_started) return;
  end_turn(TurnResult{});
}

bool PiTranslator::take_dialog(const std::string& id) { return m_dialogs.erase(id) > 0; }

std::string PiTranslator::message_id(DeltaKind kind) const {
  std::string id = "pi-" + std::to_string(m_messages);
  if (kind == DeltaKind::Thinking) id += "-thinking";
  return id;
}

void PiTranslator::feed(const json& message) {
  m_lines.line();
  const auto type = native::string_at(message, "type");
  if (!message.is_object() || !type) return m_lines.malformed("no type", message);
  if (*type == "message_start") {
    const auto* inner = native::object_at(message, "message");
    if (inner == nullptr) return m_lines.malformed("message_start without a message", message);
    return on_message_start(*inner);
  }
  if (*type == "message_update") return on_message_update(message);
  if (*type == "message_end") {
    const auto* inner = native::object_at(message, "message");
    if (inner == nullptr) return m_lines.malformed("message_end without a message", message);
    return on_message_end(*inner);
  }
  if (*type == "tool_execution_start") return on_tool_start(message);
  if (*type == "tool_execution_update") return on_tool_update(message);
  if (*type == "tool_execution_end") return on_tool_end(message);
  if (*type == "extension_ui_request") return on_dialog(message);
  if (*type == "auto_retry_start") return on_retry_start(message);
  if (*type == "auto_retry_end") return on_retry_end(message);
  if (*type == "compaction_start") {
    m_status_raised = true;
    return m_events.on_status(status_of(protocol::AgentStatusKind::Compacting));
  }
  if (*type == "compaction_end") {
    m_status_raised = true;
    // A compaction that failed or was aborted compacted nothing: the agent is back at work, with Pi's reason.
    auto error = native::string_at(message, "errorMessage");
    if (!error && !native::bool_or(message, "aborted", false)) return m_events.on_status(status_of(protocol::AgentStatusKind::Compacted));
    AgentStatus status = status_of(protocol::AgentStatusKind::Working);
    status.message = error ? std::move(error) : std::optional<std::string>("compaction aborted");
    return m_events.on_status(std::move(status));
  }
  if (*type == "agent_settled") return on_settled(message);
  if (*type == "agent_start") {
    m_run_started = m_turn_running;
    return m_lines.dropped();
  }
  if (*type == "extension_error") {
    std::string what = native::string_or_empty(message, "error");
    if (what.empty()) what = native::dump(message).substr(0, 300);
    return m_events.on_error(AgentErrorReport{"a Pi extension failed: " + what, true});
  }
  if (one_of(kDroppedEvents, *type)) return m_lines.dropped();
  m_lines.unknown("event " + *type);
}

void PiTranslator::on_message_start(const json& message) {
  if (native::string_or_empty(message, "role") != "assistant") return m_lines.dropped();
  ++m_messages;
}

void PiTranslator::on_message_update(const json& event) {
  const auto* stream = native::object_at(event, "assistantMessageEvent");
  if (stream == nullptr) return m_lines.malformed("message_update without assistantMessageEvent", event);
  const std::string kind = native::string_or_empty(*stream, "type");
  if (kind == "text_delta" || kind == "thinking_delta") {
    const auto delta = native::string_at(*stream, "delta");
    if (!delta) return m_lines.malformed("a delta without its text", event);
    if (delta->empty()) return;
    const DeltaKind delta_kind = kind == "text_delta" ? DeltaKind::Text : DeltaKind::Thinking;
    return m_events.on_delta(TextDelta{message_id(delta_kind), delta_kind, *delta, std::nullopt});
  }
  if (one_of(kDroppedStreamEvents, kind)) return m_lines.dropped();
  m_lines.unknown("assistant stream event " + kind);
}

void PiTranslator::on_message_end(const json& message) {
  if (native::string_or_empty(message, "role") != "assistant") return m_lines.dropped();
  std::string text;
  std::string thinking;
  if (const auto* content = native::array_at(message, "content")) {
    for (const auto& block : *content) {
      const std::string type = native::string_or_empty(block, "type");
      if (type == "text") text += native::string_or_empty(block, "text");
      if (type == "thinking") thinking += native::string_or_empty(block, "thinking");
    }
  }
  if (const auto* usage = native::object_at(message, "usage")) {
    m_has_usage = true;
    add(m_usage.input_tokens, native::integer_at(*usage, "input"));
    add(m_usage.output_tokens, native::integer_at(*usage, "output"));
    add(m_usage.cache_read_tokens, native::integer_at(*usage, "cacheRead"));
    if (const auto* cost = native::object_at(*usage, "cost")) {
      if (const auto total = native::number_at(*cost, "total")) m_usage.cost_usd = m_usage.cost_usd.value_or(0.0) + *total;
    }
  }
  const std::string stop = native::string_or_empty(message, "stopReason");
  if (stop == "error") {
    m_last_error = native::string_at(message, "errorMessage").value_or("the model request failed");
  } else if (stop != "aborted") {
    m_last_error.reset();  // a retry that worked
  }
  if (!text.empty()) m_last_text = text;
  if (!thinking.empty()) m_events.on_message(MessageCompleted{message_id(DeltaKind::Thinking), DeltaKind::Thinking, thinking, std::nullopt});
  if (!text.empty()) m_events.on_message(MessageCompleted{message_id(DeltaKind::Text), DeltaKind::Text, text, std::nullopt});
}

void PiTranslator::on_tool_start(const json& event) {
  const auto id = native::string_at(event, "toolCallId");
  const auto tool = native::string_at(event, "toolName");
  if (!id || !tool) return m_lines.malformed("tool_execution_start without toolCallId or toolName", event);
  json input = json::object();
  if (const auto* args = native::object_at(event, "args")) input = *args;
  m_tool_output[*id].clear();
  auto diffs = file_diffs(*tool, input);
  ToolStarted started{*id, *tool, std::move(input), std::nullopt};
  started.diffs = std::move(diffs);
  if (auto parent = native::string_at(event, "parentToolCallId")) started.parent_tool_call_id = std::move(parent);
  m_events.on_tool_started(std::move(started));
}

void PiTranslator::on_tool_update(const json& event) {
  const auto id = native::string_at(event, "toolCallId");
  const auto* partial = native::object_at(event, "partialResult");
  if (!id || partial == nullptr) return m_lines.malformed("tool_execution_update without toolCallId or partialResult", event);
  // partialResult is the output so far, not a piece of it: what is new is what follows the text already passed on.
  const std::string so_far = result_text(*partial);
  auto& seen = m_tool_output[*id];
  std::string piece;
  if (so_far.size() > seen.size() && so_far.compare(0, seen.size(), seen) == 0) {
    piece = so_far.substr(seen.size());
  } else if (so_far != seen && !so_far.starts_with(seen)) {
    piece = so_far;  // the tool rewrote its output (a truncation window moved): pass it on whole
  }
  seen = so_far;
  if (!piece.empty()) m_events.on_tool_output(ToolOutput{*id, std::move(piece)});
}

void PiTranslator::on_tool_end(const json& event) {
  const auto id = native::string_at(event, "toolCallId");
  if (!id) return m_lines.malformed("tool_execution_end without toolCallId", event);
  m_tool_output.erase(*id);
  std::string output;
  if (const auto* result = native::object_at(event, "result")) output = result_text(*result);
  m_events.on_tool_completed(ToolCompleted{*id, std::move(output), native::bool_or(event, "isError", false)});
}

void PiTranslator::on_dialog(const json& event) {
  const auto id = native::string_at(event, "id");
  const std::string method = native::string_or_empty(event, "method");
  if (!id) return m_lines.malformed("extension_ui_request without an id", event);
  if (one_of(kFireAndForget, method)) return m_lines.dropped();
  if (!one_of(kDialogs, method)) return m_lines.unknown("extension UI method " + method);
  if (method != "input" || native::string_or_empty(event, "title") != kPermissionDialogTitle) {
    // Another extension's dialog (the user's own): no client is asked; it gets the answer a dismissed dialog gives,
    // at once, so the extension's turn goes on.
    m_lines.dropped();
    return m_reply(json{{"type", "extension_ui_response"}, {"id", *id}, {"cancelled", true}});
  }
  auto ask = permission_ask(*id, native::string_or_empty(event, "placeholder"));
  if (!ask) {
    m_lines.malformed("a permission dialog whose call is not JSON", event);
    return m_reply(permission_answer(*id, PermissionAnswer{false, "the daemon could not read the tool call"}));
  }
  m_dialogs.insert(*id);
  m_events.on_permission_request(std::move(*ask));
}

void PiTranslator::on_retry_start(const json& event) {
  AgentStatus status;
  status.status = protocol::AgentStatusKind::Retrying;
  status.message = native::string_at(event, "errorMessage");
  status.attempt = native::integer_at(event, "attempt");
  status.max_attempts = native::integer_at(event, "maxAttempts");
  status.retry_delay_ms = native::integer_at(event, "delayMs");
  m_status_raised = true;
  m_events.on_status(std::move(status));
}

void PiTranslator::on_retry_end(const json& event) {
  if (!native::bool_or(event, "success", false)) {
    if (auto error = native::string_at(event, "finalError")) m_last_error = std::move(error);
    return;
  }
  if (std::exchange(m_status_raised, false)) m_events.on_status(status_of(protocol::AgentStatusKind::Working));
}

void PiTranslator::on_settled(const json& event) {
  if (!m_turn_running) return m_lines.dropped();  // not a prompt of ours (Pi settled on its own)
  TurnResult result;
  result.text = m_last_text;
  if (m_has_usage) result.usage = m_usage;
  if (native::bool_or(event, "aborted", false)) {
    result.stop_reason = protocol::StopReason::Cancelled;
  } else if (m_last_error) {
    result.stop_reason = protocol::StopReason::Error;
    result.error = m_last_error;
  }
  end_turn(std::move(result));
}

void PiTranslator::end_turn(TurnResult result) {
  m_turn_running = false;
  m_tool_output.clear();
  // Dialogs of this turn are dismissed by Pi (an abort) or answered; an answer that comes later is not passed on.
  m_dialogs.clear();
  m_events.on_turn_end(std::move(result));
}

}  // namespace switchboard::adapters::pi
