#include "acp/AcpTranslator.h"

#include <array>

#include "acp/AcpContent.h"
#include "common/NativeJson.h"
#include "common/OfferedModels.h"

namespace switchboard::adapters::acp {

using nlohmann::json;
using native::string_or_empty;

namespace {

// session/update kinds that carry nothing our events have a place for (docs/agents/acp.md): the echo or replay
// of the user's prompt (the engine has it), the agent's slash commands, mode changes (the session's mode is what
// the engine set), and the title.
constexpr std::array<std::string_view, 4> kDroppedUpdates{"user_message_chunk", "available_commands_update",
                                                          "session_info_update", "current_mode_update"};

// A config option's choices: a flat list of {value, name, description}, or groups of them ({group, name, options}).
void add_choices(const json& choices, std::vector<protocol::ModelInfo>& models) {
  if (!choices.is_array()) return;
  for (const auto& choice : choices) {
    if (const auto* grouped = native::array_at(choice, "options")) {
      add_choices(*grouped, models);
      continue;
    }
    auto flat = native::offered_models(json::array({choice}), {.id = "value", .name = "name"});
    for (auto& model : flat) models.push_back(std::move(model));
  }
}

std::vector<protocol::ModelInfo> models_of_config_options(const json& options, bool current_is_default) {
  std::vector<protocol::ModelInfo> models;
  if (!options.is_array()) return models;
  for (const auto& option : options) {
    if (string_or_empty(option, "category") != "model" || string_or_empty(option, "type") != "select") continue;
    if (const auto* choices = native::member(option, "options")) add_choices(*choices, models);
    const auto current = native::string_at(option, "currentValue");
    for (auto& model : models) {
      if (current_is_default && current && model.id == *current) model.is_default = true;
    }
    break;
  }
  return models;
}

// Grok Build's `_x.ai/session_notification` kinds that are dropped: streamed tool arguments (our ToolStarted
// carries the whole input, which the tool_call brings), per-request usage (the prompt's answer has the turn's
// sum), the bookkeeping around permission checks, and summaries and lists that repeat what other events say.
constexpr std::array<std::string_view, 9> kDroppedVendorUpdates{
    "tool_call_delta_chunk", "response_completed", "pending_interaction", "interaction_resolved",
    "session_summary_generated", "last_turn_summary", "model_changed", "background_tasks", "turn_started"};

}  // namespace

std::vector<protocol::ModelInfo> offered_models(const json& session_state, bool current_is_default) {
  if (const auto* state = native::object_at(session_state, "models")) {
    const auto* available = native::array_at(*state, "availableModels");
    auto models = native::offered_models(available != nullptr ? *available : json(), {.id = "modelId", .name = "name"});
    const auto current = native::string_at(*state, "currentModelId");
    for (auto& model : models) {
      if (current_is_default && current && model.id == *current) model.is_default = true;
    }
    if (!models.empty()) return models;
  }
  if (const auto* options = native::array_at(session_state, "configOptions")) return models_of_config_options(*options, current_is_default);
  return {};
}

AcpTranslator::AcpTranslator(AdapterListener& events, std::string log_prefix) : m_events(events), m_lines(std::move(log_prefix)) {}

bool AcpTranslator::is_ours(const json& params) {
  const auto id = native::string_at(params, "sessionId");
  if (id && *id == m_session && !m_session.empty()) return true;
  m_lines.dropped();
  return false;
}

void AcpTranslator::on_session_opened(const json& result, bool loaded) {
  if (auto models = offered_models(result, !loaded); !models.empty()) m_events.on_models(ModelsOffered{std::move(models)});
}

void AcpTranslator::on_update(const json& params) {
  m_lines.line();
  if (!is_ours(params)) return;
  if (m_replaying) return m_lines.dropped();
  const auto* update = native::object_at(params, "update");
  if (update == nullptr) return m_lines.malformed("session/update without update", params);
  const std::string kind = string_or_empty(*update, "sessionUpdate");
  if (kind == "agent_message_chunk") return on_text_chunk(*update, protocol::DeltaKind::Text);
  if (kind == "agent_thought_chunk") return on_text_chunk(*update, protocol::DeltaKind::Thinking);
  if (kind == "tool_call") return on_tool_call(*update);
  if (kind == "tool_call_update") return on_tool_call(*update);
  if (kind == "plan") return on_plan(*update);
  if (kind == "usage_update") return on_usage_update(*update);
  if (kind == "config_option_update") {
    // Only the model choices have a place in our events; an update without any says nothing we keep.
    auto models = offered_models(*update, false);
    if (models.empty()) return m_lines.dropped();
    return m_events.on_models(ModelsOffered{std::move(models)});
  }
  if (one_of(kDroppedUpdates, kind)) return m_lines.dropped();
  m_lines.unknown("session/update " + kind);
}

void AcpTranslator::on_extension(const std::string& method, const json& params) {
  m_lines.line();
  if (method == "_x.ai/session_notification") {
    if (!is_ours(params)) return;
    if (m_replaying) return m_lines.dropped();
    const auto* update = native::object_at(params, "update");
    if (update == nullptr) return m_lines.malformed(method + " without update", params);
    return on_vendor_update(*update);
  }
  // Every other extension notification (setup phases, queue and session lists, MCP state, the replayed turn's
  // end) says nothing a client of ours needs; an unknown one is expected of a newer agent.
  if (method.rfind("_x.ai/", 0) == 0 || method.rfind("_", 0) == 0) return m_lines.dropped();
  m_lines.unknown("notification " + method);
}

void AcpTranslator::on_vendor_update(const json& update) {
  const std::string kind = string_or_empty(update, "sessionUpdate");
  if (kind == "retry_state") {
    const std::string type = string_or_empty(update, "type");
    if (type == "failed") {
      if (auto message = native::string_at(update, "message")) m_turn_error = *message;
      return m_lines.dropped();
    }
    AgentStatus status;
    status.status = protocol::AgentStatusKind::Retrying;
    if (auto reason = native::string_at(update, "reason")) status.message = *reason;
    status.attempt = native::integer_at(update, "attempt");
    status.max_attempts = native::integer_at(update, "max_retries");
    return m_events.on_status(std::move(status));
  }
  if (kind == "turn_completed") {
    // An error turn says why here; the prompt's answer (an error, or stopReason) ends the turn.
    if (auto result = native::string_at(update, "agent_result"); result && string_or_empty(update, "stop_reason") == "error") {
      m_turn_error = *result;
    }
    return m_lines.dropped();
  }
  if (one_of(kDroppedVendorUpdates, kind)) return m_lines.dropped();
  m_lines.unknown("_x.ai update " + kind);
}

void AcpTranslator::on_text_chunk(const json& update, protocol::DeltaKind kind) {
  const auto* content = native::member(update, "content");
  const std::string text = content != nullptr ? content_text(*content) : std::string();
  if (text.empty()) return m_lines.dropped();
  if (!m_turn_running) return m_lines.dropped();  // a late chunk of a turn already over
  if (m_message_id && m_message_kind != kind) close_message();
  if (!m_message_id) {
    m_message_id = m_turn_id + "-" + std::to_string(++m_messages);
    m_message_kind = kind;
    m_message_text.clear();
  }
  m_message_text += text;
  m_events.on_delta(TextDelta{*m_message_id, kind, text, std::nullopt});
}

void AcpTranslator::close_message() {
  if (!m_message_id) return;
  auto id = *std::exchange(m_message_id, std::nullopt);
  if (m_message_kind == protocol::DeltaKind::Text) m_last_text = m_message_text;
  m_events.on_message(MessageCompleted{std::move(id), m_message_kind, std::exchange(m_message_text, {}), std::nullopt});
}

void AcpTranslator::on_tool_call(const json& update) {
  const std::string id = string_or_empty(update, "toolCallId");
  if (id.empty()) return m_lines.malformed("a tool call without toolCallId", update);
  if (!m_turn_running) return m_lines.dropped();
  auto& call = m_tools[id];
  if (call.done) return m_lines.dropped();
  if (!call.started) {
    // A call first seen in an update (an agent that sends no tool_call) starts there.
    close_message();
    call.started = true;
    call.tool = tool_name(update);
    const auto* input = native::object_at(update, "rawInput");
    ToolStarted started{id, call.tool, input != nullptr ? *input : json::object(), std::nullopt};
    // The change, when the call says it from the start (a diff in a later update has no event to go in).
    if (const auto* shown = native::member(update, "content")) started.diffs = content_diffs(*shown);
    m_events.on_tool_started(std::move(started));
  }
  const std::string status = string_or_empty(update, "status");
  const auto* content = native::member(update, "content");
  std::string output = content != nullptr ? content_text(*content) : std::string();
  if (const auto* raw = native::member(update, "rawOutput"); output.empty() && raw != nullptr) output = raw_output_text(*raw);
  if (status == "completed" || status == "failed") {
    call.done = true;
    return m_events.on_tool_completed(ToolCompleted{id, output, status == "failed"});
  }
  if (status == "in_progress" && content != nullptr) {
    // ACP's content replaces what an update said before: the whole output so far, of which the new part is sent.
    if (output.size() > call.output_sent) {
      m_events.on_tool_output(ToolOutput{id, output.substr(call.output_sent)});
      call.output_sent = output.size();
    }
    return;
  }
  m_lines.dropped();
}

void AcpTranslator::on_plan(const json& update) {
  if (!m_turn_running) return m_lines.dropped();
  // The agent's to-do list, shown like the other agents' plan tools: a tool call whose input is the list,
  // completed at once with the list as text.
  const auto* entries = native::array_at(update, "entries");
  if (entries == nullptr) return m_lines.malformed("plan without entries", update);
  close_message();
  const std::string id = m_turn_id + "-plan-" + std::to_string(++m_plans);
  json input = {{"entries", json::array()}};
  std::string text;
  for (const auto& entry : *entries) {
    const std::string status = string_or_empty(entry, "status");
    const std::string step = string_or_empty(entry, "content");
    input["entries"].push_back({{"content", step}, {"status", status}, {"priority", string_or_empty(entry, "priority")}});
    text += (status == "completed" ? "[x] " : status == "in_progress" ? "[~] " : "[ ] ") + step + "\n";
  }
  m_events.on_tool_started(ToolStarted{id, "plan", std::move(input), std::nullopt});
  m_events.on_tool_completed(ToolCompleted{id, std::move(text), false});
}

void AcpTranslator::on_usage_update(const json& update) {
  // The context window's fill and the session's cost so far: the cost is kept for the turn's usage.
  if (const auto* cost = native::object_at(update, "cost")) {
    if (string_or_empty(*cost, "currency") == "USD") m_cost_usd = native::number_at(*cost, "amount");
  }
  m_lines.dropped();
}

void AcpTranslator::on_permission_request(const json& id, const json& params, JsonRpcEndpoint::Reply reply) {
  m_lines.line();
  if (!is_ours(params)) return reply(permission_outcome(std::nullopt));
  const std::string native_id = native::dump(id);
  const auto* options = native::array_at(params, "options");
  m_permissions[native_id] = OpenPermission{options != nullptr ? *options : json::array(), std::move(reply)};
  close_message();
  m_events.on_permission_request(permission_ask(native_id, params));
}

bool AcpTranslator::answer_permission(const std::string& native_id, bool allow) {
  const auto it = m_permissions.find(native_id);
  if (it == m_permissions.end()) return false;
  auto open = std::move(it->second);
  m_permissions.erase(it);
  if (!allow) m_denied = true;
  open.reply(permission_outcome(option_for(open.options, allow)));
  return true;
}

void AcpTranslator::cancel_turn() {
  m_cancel_sent = true;
  auto open = std::exchange(m_permissions, {});
  for (auto& [native_id, request] : open) {
    request.reply(permission_outcome(std::nullopt));
    m_events.on_request_withdrawn(RequestWithdrawn{native_id});
  }
}

void AcpTranslator::turn_started(std::string turn_id) {
  m_turn_running = true;
  m_cancel_sent = false;
  m_denied = false;
  m_turn_id = std::move(turn_id);
  m_messages = 0;
  m_plans = 0;
  m_last_text.clear();
  m_message_id.reset();
  m_message_text.clear();
  m_tools.clear();
  m_turn_error.reset();
  m_cost_usd.reset();
}

void AcpTranslator::on_prompt_answer(const JsonRpcEndpoint::Outcome& outcome) {
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) {
    std::string why = error->message;
    if (error->data.is_object()) {
      if (auto detail = native::string_at(error->data, "message")) why = *detail;
    } else if (error->data.is_string()) {
      why += ": " + error->data.get<std::string>();
    }
    if (m_turn_error && why == "Internal error") why = *m_turn_error;
    return end_turn(protocol::StopReason::Error, why);
  }
  const auto& result = std::get<json>(outcome);
  // ACP wants `cancelled` after a session/cancel; OpenCode's ACP answers `end_turn` when the cancelled
  // permission reached it first (its reject ends the turn). The turn was cancelled either way. Without a cancel,
  // `cancelled` is an agent stopping at our deny (Grok Build does): the turn is over, not cancelled.
  auto reason = m_cancel_sent ? protocol::StopReason::Cancelled : stop_reason_of(string_or_empty(result, "stopReason"));
  if (reason == protocol::StopReason::Cancelled && !m_cancel_sent && m_denied) reason = protocol::StopReason::EndTurn;
  std::optional<protocol::Usage> usage = prompt_usage(result);
  if (m_cost_usd) {
    if (!usage) usage = protocol::Usage{};
    usage->cost_usd = m_cost_usd;
  }
  if (!m_turn_running) return m_lines.dropped();
  close_message();
  m_turn_running = false;
  TurnResult turn;
  turn.stop_reason = reason;
  turn.text = m_last_text;
  turn.usage = std::move(usage);
  m_tools.clear();
  m_events.on_turn_end(std::move(turn));
}

void AcpTranslator::turn_failed(const std::string& why) { end_turn(protocol::StopReason::Error, why); }

void AcpTranslator::end_turn(protocol::StopReason reason, std::optional<std::string> error) {
  if (!m_turn_running) return;
  close_message();
  m_turn_running = false;
  // A permission still open cannot be answered any more.
  auto open = std::exchange(m_permissions, {});
  for (auto& [native_id, request] : open) m_events.on_request_withdrawn(RequestWithdrawn{native_id});
  TurnResult turn;
  turn.stop_reason = reason;
  turn.text = m_last_text;
  turn.error = std::move(error);
  m_tools.clear();
  m_events.on_turn_end(std::move(turn));
}

}  // namespace switchboard::adapters::acp
