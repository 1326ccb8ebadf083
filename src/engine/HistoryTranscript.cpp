#include "engine/HistoryTranscript.h"

#include "switchboard/json/JsonWriter.h"
#include "switchboard/support/Clock.h"

namespace switchboard::engine {

template <class Payload>
void HistoryTranscript::add(protocol::HistoryEventType type, const Payload& payload, std::optional<std::int64_t> ts) {
  // The payload is written by the schema's own encoder, so data is exactly what the live event would carry.
  std::string text;
  json::JsonWriter writer(text);
  protocol::encode(writer, payload);
  writer.finish();  // `text` is read below
  protocol::HistoryEvent event;
  event.type = type;
  event.ts = ts;
  event.data = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  m_events.push_back(std::move(event));
}

std::string HistoryTranscript::next_turn_id(const std::string& prompt_id) {
  ++m_turns;
  std::string id = prompt_id;
  if (id.empty() || m_used_ids.count(id) != 0) id = "turn-" + std::to_string(m_turns);
  while (m_used_ids.count(id) != 0) id += "+";  // a prompt id that happens to read "turn-<n>"
  m_used_ids.insert(id);
  return id;
}

const std::string& HistoryTranscript::turn_id() {
  if (m_turn_id.empty()) m_turn_id = next_turn_id({});
  return m_turn_id;
}

void HistoryTranscript::on_user_prompt(UserPrompt prompt) {
  // The agent closes a turn before the next prompt; a sink that did not is closed here without a turn.stopped
  // (nothing says how it ended).
  m_turn_id = next_turn_id(prompt.prompt_id);
  m_last_text.clear();
  protocol::TurnStartedEvent started;
  started.turn_id = m_turn_id;
  started.text = std::move(prompt.text);
  add(protocol::HistoryEventType::TurnStarted, started, parse_iso8601_millis(prompt.timestamp));
}

void HistoryTranscript::on_message(adapters::MessageCompleted event) {
  // As live: a sub-agent's text is not the answer to the user's prompt.
  if (event.kind == protocol::DeltaKind::Text && !event.parent_tool_call_id) m_last_text = event.text;
  protocol::MessageCompletedEvent message;
  message.turn_id = turn_id();
  message.message_id = std::move(event.message_id);
  message.role = protocol::MessageCompletedEventRole::Assistant;
  message.kind = event.kind;
  message.text = std::move(event.text);
  message.parent_tool_call_id = std::move(event.parent_tool_call_id);
  add(protocol::HistoryEventType::MessageCompleted, message);
}

void HistoryTranscript::on_tool_started(adapters::ToolStarted event) {
  protocol::ToolStartedEvent started;
  started.turn_id = turn_id();
  started.tool_call_id = std::move(event.tool_call_id);
  started.tool = std::move(event.tool);
  // The schema says input is an object; a history that recorded anything else keeps it under "input".
  started.input = event.input.is_object() ? std::move(event.input) : nlohmann::json{{"input", std::move(event.input)}};
  started.parent_tool_call_id = std::move(event.parent_tool_call_id);
  if (!event.diffs.empty()) started.diffs = std::move(event.diffs);
  add(protocol::HistoryEventType::ToolStarted, started);
}

void HistoryTranscript::on_tool_completed(adapters::ToolCompleted event) {
  protocol::ToolCompletedEvent completed;
  completed.turn_id = turn_id();
  completed.tool_call_id = std::move(event.tool_call_id);
  completed.output = std::move(event.output);
  completed.is_error = event.is_error;
  add(protocol::HistoryEventType::ToolCompleted, completed);
}

void HistoryTranscript::on_plan(adapters::PlanUpdate event) {
  protocol::PlanUpdatedEvent updated;
  updated.turn_id = turn_id();
  updated.entries = std::move(event.entries);
  add(protocol::HistoryEventType::PlanUpdated, updated);
}

void HistoryTranscript::on_turn_end(adapters::TurnResult result) {
  protocol::TurnStoppedEvent stopped;
  stopped.turn_id = turn_id();
  stopped.stop_reason = result.stop_reason;
  if (result.text.empty()) result.text = m_last_text;
  if (!result.text.empty()) stopped.text = std::move(result.text);
  stopped.usage = std::move(result.usage);
  stopped.error = std::move(result.error);
  add(protocol::HistoryEventType::TurnStopped, stopped);
  m_turn_id.clear();
  m_last_text.clear();
}

}  // namespace switchboard::engine
