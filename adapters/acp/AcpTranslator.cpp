#include "acp/AcpTranslator.h"

#include <algorithm>
#include <array>

#include "acp/AcpContent.h"
#include "common/NativeJson.h"
#include "common/OfferedModels.h"

namespace switchboard::adapters::acp {

using nlohmann::json;
using native::string_or_empty;

namespace {

// session/update kinds that carry nothing our events have a place for (docs/agents/acp.md): the echo or replay
// of the user's prompt (the engine has it), mode changes (the session's mode is what the engine set), and the
// title.
constexpr std::array<std::string_view, 3> kDroppedUpdates{"user_message_chunk", "session_info_update", "current_mode_update"};

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
// carries the whole input, which the tool_call brings), the bookkeeping around permission checks, and summaries
// and lists that repeat what other events say. (Each model response's usage, `response_completed`, is read.)
constexpr std::array<std::string_view, 8> kDroppedVendorUpdates{
    "tool_call_delta_chunk", "pending_interaction", "interaction_resolved", "session_summary_generated",
    "last_turn_summary", "model_changed", "background_tasks", "turn_started"};

// A plan or command list as text, to tell a repeat from a change.
std::string plan_key(const std::vector<protocol::PlanEntry>& plan) {
  std::string key;
  for (const auto& entry : plan) {
    key += std::string(protocol::to_string(entry.status)) + "|" + (entry.priority ? std::string(protocol::to_string(*entry.priority)) : "") +
           "|" + entry.content + "\n";
  }
  return key;
}

std::string commands_key(const std::vector<protocol::AgentCommand>& commands) {
  std::string key;
  for (const auto& command : commands) {
    key += command.name + "|" + command.description.value_or("") + "|" + command.argument_hint.value_or("") + "\n";
  }
  return key;
}

// The context window of each model a session/new or session/load answer lists (`_meta.totalContextTokens`, which
// Grok Build gives), by model id.
void read_model_windows(const json& result, std::map<std::string, std::int64_t>& windows, std::string& current) {
  const auto* state = native::object_at(result, "models");
  if (state == nullptr) return;
  if (auto id = native::string_at(*state, "currentModelId")) current = *id;
  const auto* available = native::array_at(*state, "availableModels");
  if (available == nullptr) return;
  for (const auto& model : *available) {
    const auto id = native::string_at(model, "modelId");
    const auto* meta = native::object_at(model, "_meta");
    if (!id || meta == nullptr) continue;
    if (auto window = native::integer_at(*meta, "totalContextTokens"); window && *window > 0) windows[*id] = *window;
  }
}

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
  read_model_windows(result, m_model_windows, m_current_model);
  if (auto models = offered_models(result, !loaded); !models.empty()) m_events.on_models(ModelsOffered{std::move(models)});
  if (const auto* options = native::array_at(result, "configOptions")) {
    m_options = offered_options(*options);
    m_events.on_options(OptionsOffered{m_options.options});
  }
}

void AcpTranslator::on_config_options(const json& holder) {
  const auto* options = native::array_at(holder, "configOptions");
  if (options == nullptr) return m_lines.dropped();
  if (auto models = offered_models(holder, false); !models.empty()) m_events.on_models(ModelsOffered{std::move(models)});
  for (const auto& option : *options) {
    if (string_or_empty(option, "category") != "model") continue;
    if (auto current = native::string_at(option, "currentValue")) m_current_model = *current;
  }
  m_options = offered_options(*options);
  m_events.on_options(OptionsOffered{m_options.options});
}

void AcpTranslator::set_mcp_servers(std::vector<protocol::McpServerState> servers) {
  m_mcp = std::move(servers);
  if (!m_mcp.empty()) m_events.on_mcp_status(McpStatusReport{m_mcp});
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
  if (kind == "config_option_update") return on_config_options(*update);
  if (kind == "available_commands_update") return on_commands_update(*update);
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
  if (method == "_x.ai/mcp/server_status") {
    if (!is_ours(params)) return;
    return on_mcp_server_status(params);
  }
  // Every other extension notification (setup phases, queue and session lists, MCP progress counts, the replayed
  // turn's end) says nothing a client of ours needs; an unknown one is expected of a newer agent.
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
  if (kind == "auto_compact_started" || kind == "auto_compact_completed") {
    // Grok summarized its conversation (on its own, or for /compact): a status, as for every agent that compacts.
    AgentStatus status;
    status.status = kind == "auto_compact_started" ? protocol::AgentStatusKind::Compacting : protocol::AgentStatusKind::Compacted;
    return m_events.on_status(std::move(status));
  }
  if (kind == "response_completed") {
    if (const auto* usage = native::object_at(update, "usage")) return on_model_usage(*usage);
    return m_lines.dropped();
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
  // The agent's to-do list, whole: reported when it differs from the last one (an agent may repeat it).
  const auto* entries = native::array_at(update, "entries");
  if (entries == nullptr) return m_lines.malformed("plan without entries", update);
  auto plan = plan_entries(*entries);
  auto key = plan_key(plan);
  if (m_last_plan == key) return m_lines.dropped();
  m_last_plan = std::move(key);
  m_events.on_plan(PlanUpdate{std::move(plan)});
}

void AcpTranslator::on_commands_update(const json& update) {
  const auto* available = native::array_at(update, "availableCommands");
  if (available == nullptr) return m_lines.malformed("available_commands_update without availableCommands", update);
  std::vector<std::string> names;
  for (const auto& command : *available) {
    if (auto name = native::string_at(command, "name")) names.push_back(*name);
  }
  m_offered_command_names = std::move(names);
  auto commands = offered_commands(*available, m_hidden_commands);
  auto key = commands_key(commands);
  if (m_last_commands == key) return m_lines.dropped();
  m_last_commands = std::move(key);
  m_events.on_commands(CommandsOffered{std::move(commands)});
}

std::optional<bool> AcpTranslator::offers_command(std::string_view name) const {
  if (!m_offered_command_names) return std::nullopt;
  return std::find(m_offered_command_names->begin(), m_offered_command_names->end(), name) != m_offered_command_names->end();
}

void AcpTranslator::on_usage_update(const json& update) {
  // ACP's own report: the tokens in the context, the window's size, and the session's cost so far.
  m_standard_usage = true;
  const auto used = native::integer_at(update, "used");
  if (!used) return m_lines.malformed("usage_update without used", update);
  m_usage.used_tokens = *used;
  if (auto size = native::integer_at(update, "size"); size && *size > 0) m_usage.window_tokens = *size;
  if (const auto* cost = native::object_at(update, "cost")) {
    // The cost is kept for the turn's usage too. Only dollars have a place in our events.
    if (string_or_empty(*cost, "currency") == "USD") {
      m_cost_usd = native::number_at(*cost, "amount");
      m_usage.cost_usd = m_cost_usd;
    }
  }
  report_usage();
}

void AcpTranslator::on_model_usage(const json& usage) {
  // One model response's usage (Grok Build): what it was sent plus what it wrote is in the context now. An agent
  // that sends ACP's usage_update is read from that instead.
  if (m_standard_usage) return m_lines.dropped();
  const auto input = native::integer_at(usage, "input_tokens").value_or(0);
  const auto output = native::integer_at(usage, "output_tokens").value_or(0);
  const auto cache_read = native::integer_at(usage, "cache_read_input_tokens").value_or(0);
  if (input + output <= 0) return m_lines.dropped();
  m_usage.used_tokens = input + output;
  m_usage.input_tokens = m_usage.input_tokens.value_or(0) + input;
  m_usage.output_tokens = m_usage.output_tokens.value_or(0) + output;
  m_usage.cache_read_tokens = m_usage.cache_read_tokens.value_or(0) + cache_read;
  if (const auto window = m_model_windows.find(m_current_model); window != m_model_windows.end()) {
    m_usage.window_tokens = window->second;
  } else {
    m_usage.window_tokens.reset();
  }
  report_usage();
}

void AcpTranslator::report_usage() { m_events.on_usage(UsageUpdate{m_usage}); }

void AcpTranslator::on_mcp_server_status(const json& params) {
  // Grok Build's word on one of the session's MCP servers ({name, status, reason, tools}).
  const auto name = native::string_at(params, "name");
  auto it = std::find_if(m_mcp.begin(), m_mcp.end(), [&](const protocol::McpServerState& state) { return name && state.name == *name; });
  if (it == m_mcp.end()) return m_lines.dropped();  // one the agent found on its own (its config), not the session's
  it->status = mcp_status_of(string_or_empty(params, "status"));
  it->error.reset();
  it->tools.reset();
  if (it->status == protocol::McpServerStatusKind::Failed) it->error = native::string_at(params, "reason");
  if (it->status == protocol::McpServerStatusKind::Connected) it->tools = native::integer_at(params, "tools");
  m_events.on_mcp_status(McpStatusReport{m_mcp});
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
  // The agent's id for the prompt, where it names one (Grok Build's `_meta.promptId`).
  if (const auto* meta = native::object_at(result, "_meta")) turn.native_turn_ref = native::string_at(*meta, "promptId");
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
