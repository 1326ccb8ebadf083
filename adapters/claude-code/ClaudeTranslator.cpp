#include "claude-code/ClaudeTranslator.h"

#include <array>
#include <cmath>

#include <spdlog/spdlog.h>

#include "claude-code/ClaudeMessages.h"
#include "claude-code/ClaudePermissions.h"
#include "common/NativeJson.h"

namespace switchboard::adapters::claude {
namespace {

// Top-level types the CLI emits that carry nothing a client needs: keep_alive is a heartbeat; the others are
// progress and account notices our vocabulary has no event for.
constexpr std::array kDroppedTypes{std::string_view("keep_alive"), std::string_view("tool_progress"),
                                   std::string_view("auth_status"), std::string_view("rate_limit_event"),
                                   std::string_view("streamlined_text"), std::string_view("streamlined_tool_use_summary")};

// system subtypes that are known and deliberately ignored: hook and background-task bookkeeping, file checkpoints.
constexpr std::array kDroppedSystemSubtypes{
    std::string_view("hook_started"), std::string_view("hook_progress"), std::string_view("hook_response"),
    std::string_view("task_started"), std::string_view("task_progress"), std::string_view("task_notification"),
    std::string_view("files_persisted"), std::string_view("local_command_output"), std::string_view("informational")};

std::optional<std::string> parent_of(const nlohmann::json& message) { return native::string_at(message, "parent_tool_use_id"); }

// A result error the next turn cannot fix by itself: missing or rejected credentials.
bool is_fatal_result_error(const nlohmann::json& result, std::string_view text) {
  const auto status = native::integer_at(result, "api_error_status");
  if (status == 401 || status == 403) return true;
  return text.starts_with("Not logged in") || text.starts_with("Invalid API key");
}

std::string result_error_text(const nlohmann::json& result, std::string_view subtype) {
  if (subtype == "error_max_turns") {
    const auto turns = native::integer_at(result, "num_turns");
    return "the agent stopped after reaching its turn limit" + (turns ? " (" + std::to_string(*turns) + " turns)" : std::string());
  }
  if (subtype == "error_max_budget_usd") return "the agent stopped after reaching its cost budget";
  if (subtype == "error_max_structured_output_retries") return "the agent could not produce the requested structured output";
  if (auto text = native::string_at(result, "result"); text && !text->empty()) return *text;
  if (const auto* errors = native::array_at(result, "errors")) {
    std::string joined;
    for (const auto& error : *errors) {
      if (!error.is_string()) continue;
      if (!joined.empty()) joined += "; ";
      joined += error.get<std::string>();
    }
    if (!joined.empty()) return joined;
  }
  return "the agent failed (" + std::string(subtype.empty() ? "no subtype" : subtype) + ")";
}

}  // namespace

ClaudeTranslator::ClaudeTranslator(AdapterListener& events, ClaudeControlSink& control) : m_events(events), m_control(control) {}

void ClaudeTranslator::feed_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty()) return;  // blank lines separate nothing in NDJSON; not worth a count
  if (m_fast_deltas) {
    if (auto delta = m_delta_reader.read(line); delta && on_fast_delta(*delta)) return;
  }
  const auto message = native::parse_line(line);
  if (message.is_discarded()) {
    m_lines.not_json(line);
    return;
  }
  feed(message);
}

void ClaudeTranslator::feed(const nlohmann::json& message) {
  m_lines.line();
  if (!message.is_object()) return malformed("not an object", message);
  const auto type = native::string_at(message, "type");
  if (!type) return malformed("no type", message);
  // The handlers read only through non-throwing accessors; this catch is the module edge for a nlohmann call
  // that throws anyway, so that one odd line cannot take the adapter down.
  try {
    if (*type == "stream_event") return on_stream_event(message);
    if (*type == "assistant") return on_assistant(message);
    if (*type == "user") return on_user(message);
    if (*type == "system") return on_system(message);
    if (*type == "result") return on_result(message);
    if (*type == "control_request") return on_control_request(message);
    if (*type == "control_response") return on_control_response(message);
    if (*type == "control_cancel_request") return on_control_cancel(message);
    if (one_of(kDroppedTypes, *type)) {
      m_lines.dropped();
      return;
    }
    unknown("type " + *type);
  } catch (const nlohmann::json::exception& error) {
    malformed(error.what(), message);
  }
}

void ClaudeTranslator::expect_control_response(std::string request_id, ControlRequestKind kind) {
  if (kind == ControlRequestKind::Interrupt) m_interrupt_requested = true;
  m_sent_requests[std::move(request_id)] = kind;
}

std::optional<ToolRequest> ClaudeTranslator::take_tool_request(const std::string& request_id) {
  const auto it = m_tool_requests.find(request_id);
  if (it == m_tool_requests.end()) return std::nullopt;
  ToolRequest request = std::move(it->second);
  m_tool_requests.erase(it);
  return request;
}

// ---- system ----------------------------------------------------------------------------------------------------

void ClaudeTranslator::on_system(const nlohmann::json& message) {
  const std::string subtype = native::string_or_empty(message, "subtype");
  if (subtype == "init") {
    ClaudeInit init;
    init.session_id = native::string_or_empty(message, "session_id");
    init.model = native::string_or_empty(message, "model");
    init.permission_mode = native::string_or_empty(message, "permissionMode");
    init.cwd = native::string_or_empty(message, "cwd");
    init.version = native::string_or_empty(message, "claude_code_version");
    if (const auto* tools = native::array_at(message, "tools")) {
      for (const auto& tool : *tools) {
        if (tool.is_string()) init.tools.push_back(tool.get<std::string>());
      }
    }
    if (const auto* servers = native::array_at(message, "mcp_servers")) {
      for (const auto& server : *servers) {
        auto name = native::string_or_empty(server, "name");
        if (!name.empty()) init.mcp_servers.emplace_back(std::move(name), native::string_or_empty(server, "status"));
      }
    }
    if (init.session_id.empty()) return malformed("system/init without session_id", message);
    m_turn_active = true;
    if (!init.permission_mode.empty()) m_permission_mode = init.permission_mode;
    // init repeats every turn; the session only needs to hear about a new id (the first, or after a fork).
    if (init.session_id != m_provider_session_id) {
      m_provider_session_id = init.session_id;
      m_events.on_provider_session(ProviderSession{init.session_id});
    }
    m_init = init;
    m_control.on_init(*m_init);
    return;
  }
  if (subtype == "status") {
    if (auto mode = native::string_at(message, "permissionMode"); mode && !mode->empty() && *mode != m_permission_mode) {
      m_permission_mode = *mode;
      m_control.on_permission_mode(*mode);
    }
    if (native::string_or_empty(message, "compact_result") == "failed") {
      const auto why = native::string_or_empty(message, "compact_error");
      m_control.on_compact_failed(why.empty() ? "no reason given" : why);
    }
    if (native::string_or_empty(message, "status") == "compacting") {
      AgentStatus status;
      status.status = protocol::AgentStatusKind::Compacting;
      status.message = "compacting the conversation";
      return report_status(std::move(status));
    }
    // "requesting" (before every model request) or null: whatever was showing is over.
    return clear_status();
  }
  if (subtype == "api_retry") {
    AgentStatus status;
    status.status = protocol::AgentStatusKind::Retrying;
    std::string why;
    if (auto code = native::integer_at(message, "error_status")) why = "HTTP " + std::to_string(*code);
    if (auto error = native::string_at(message, "error"); error && !error->empty()) why += (why.empty() ? "" : ": ") + *error;
    status.message = why.empty() ? "the model request failed; retrying" : "the model request failed (" + why + "); retrying";
    status.attempt = native::integer_at(message, "attempt");
    status.max_attempts = native::integer_at(message, "max_retries");
    status.retry_delay_ms = native::integer_at(message, "retry_delay_ms");
    return report_status(std::move(status));
  }
  if (subtype == "compact_boundary") {
    AgentStatus status;
    status.status = protocol::AgentStatusKind::Compacted;
    std::string text = "compacted the conversation";
    if (const auto* metadata = native::object_at(message, "compact_metadata")) {
      const std::string trigger = native::string_or_empty(*metadata, "trigger");
      const auto before = native::integer_at(*metadata, "pre_tokens");
      if (!trigger.empty() || before) {
        text += " (";
        if (!trigger.empty()) text += trigger;
        if (!trigger.empty() && before) text += ", ";
        if (before) text += std::to_string(*before) + " tokens before";
        text += ")";
      }
    }
    status.message = std::move(text);
    report_status(std::move(status));
    m_status_raised = false;  // compacted is a final word, not something that is still going on
    return;
  }
  if (subtype == "commands_changed") {
    // The commands changed (skills reloaded, an MCP server's prompts arrived): the whole list again.
    const auto* commands = native::array_at(message, "commands");
    if (commands == nullptr) return malformed("commands_changed without commands", message);
    m_events.on_commands(CommandsOffered{offered_commands(*commands)});
    return;
  }
  if (one_of(kDroppedSystemSubtypes, subtype)) {
    m_lines.dropped();
    return;
  }
  unknown("system subtype " + subtype);
}

void ClaudeTranslator::report_status(AgentStatus status) {
  m_status_raised = status.status == protocol::AgentStatusKind::Retrying || status.status == protocol::AgentStatusKind::Compacting;
  m_events.on_status(std::move(status));
}

void ClaudeTranslator::clear_status() {
  if (!m_status_raised) return;
  m_status_raised = false;
  AgentStatus working;
  working.status = protocol::AgentStatusKind::Working;
  m_events.on_status(std::move(working));
}

// ---- streamed partial messages -----------------------------------------------------------------------------------

void ClaudeTranslator::on_stream_event(const nlohmann::json& message) {
  const auto* event = native::object_at(message, "event");
  if (event == nullptr) return malformed("stream_event without event", message);
  m_turn_active = true;
  const auto parent = parent_of(message);
  StreamedMessage& stream = m_streams[parent.value_or(std::string())];
  const std::string type = native::string_or_empty(*event, "type");
  if (type == "message_start") {
    const auto* started = native::object_at(*event, "message");
    stream.native_id = started != nullptr ? native::string_or_empty(*started, "id") : std::string();
    stream.text_blocks.clear();
    clear_status();  // the model answers: a retry or compaction before it is over
    return;
  }
  if (type == "content_block_start") {
    const auto index = native::integer_at(*event, "index");
    const auto* block = native::object_at(*event, "content_block");
    if (!index || block == nullptr) return malformed("content_block_start without index or block", message);
    const std::string kind = native::string_or_empty(*block, "type");
    if (kind == "text") stream.text_blocks[*index] = protocol::DeltaKind::Text;
    if (kind == "thinking") stream.text_blocks[*index] = protocol::DeltaKind::Thinking;
    return;  // tool_use blocks are reported whole, from their assistant line
  }
  if (type == "content_block_delta") {
    const auto index = native::integer_at(*event, "index");
    const auto* delta = native::object_at(*event, "delta");
    if (!index || delta == nullptr) return malformed("content_block_delta without index or delta", message);
    const std::string kind = native::string_or_empty(*delta, "type");
    std::optional<protocol::DeltaKind> delta_kind;
    std::string text;
    if (kind == "text_delta") {
      delta_kind = protocol::DeltaKind::Text;
      text = native::string_or_empty(*delta, "text");
    } else if (kind == "thinking_delta") {
      delta_kind = protocol::DeltaKind::Thinking;
      text = native::string_or_empty(*delta, "thinking");
    } else {
      return;  // input_json_delta (the input arrives whole), signature_delta, citations_delta
    }
    if (stream.native_id.empty()) return malformed("content_block_delta before message_start", message);
    if (text.empty()) return;
    m_events.on_delta(TextDelta{block_message_id(stream.native_id, static_cast<std::size_t>(*index)), *delta_kind, std::move(text), parent});
    return;
  }
  // content_block_stop, message_delta, message_stop, ping: the assistant and result lines carry what they say.
}

bool ClaudeTranslator::on_fast_delta(StreamDelta& delta) {
  // What on_stream_event does for the same line, in the same order.
  StreamedMessage& stream = m_streams[delta.parent_tool_use_id.value_or(std::string())];
  if (stream.native_id.empty()) return false;  // before message_start: malformed, which the general path reports
  m_lines.line();
  m_turn_active = true;
  if (delta.text.empty()) return true;
  m_events.on_delta(TextDelta{block_message_id(stream.native_id, static_cast<std::size_t>(delta.index)), delta.kind,
                              std::move(delta.text), std::move(delta.parent_tool_use_id)});
  return true;
}

// ---- whole messages ------------------------------------------------------------------------------------------------

void ClaudeTranslator::on_assistant(const nlohmann::json& message) {
  const auto* body = native::object_at(message, "message");
  if (body == nullptr) return malformed("assistant without message", message);
  m_turn_active = true;
  if (is_synthetic(*body)) {
    // The CLI's own words (an API error): the result that follows carries the same text as the turn's error.
    m_lines.dropped();
    return;
  }
  clear_status();
  const auto parent = parent_of(message);
  if (const auto* content = native::array_at(*body, "content")) {
    for (const auto& block : *content) {
      if (native::string_or_empty(block, "type") != "tool_use") continue;
      const auto* input = native::object_at(block, "input");
      m_plan.tool_called(native::string_or_empty(block, "id"), native::string_or_empty(block, "name"),
                         input != nullptr ? *input : nlohmann::json::object());
    }
  }
  if (!parent) {
    // A sub-agent's requests fill its own context, not the session's.
    remember_uuid(message);
    report_context(*body);
  }
  report_assistant_content(*body, parent, m_numbering, m_events);
}

void ClaudeTranslator::remember_uuid(const nlohmann::json& message) {
  if (auto uuid = native::string_at(message, "uuid"); uuid && !uuid->empty()) m_last_message_uuid = std::move(*uuid);
}

void ClaudeTranslator::report_context(const nlohmann::json& body) {
  // Every content block of one API message comes as its own line with the same usage: one report per message.
  const std::string id = native::string_or_empty(body, "id");
  if (id.empty() || id == m_context_message_id) return;
  const auto* usage = native::object_at(body, "usage");
  if (usage == nullptr) return;
  const auto prompt = native::integer_at(*usage, "input_tokens").value_or(0) +
                      native::integer_at(*usage, "cache_creation_input_tokens").value_or(0) +
                      native::integer_at(*usage, "cache_read_input_tokens").value_or(0);
  if (prompt <= 0) return;
  m_context_message_id = id;
  protocol::ContextUsage context = m_context.value_or(protocol::ContextUsage{});
  context.used_tokens = prompt;
  context.window_tokens = m_context_window;
  m_context = context;
  m_events.on_usage(UsageUpdate{std::move(context)});
}

void ClaudeTranslator::report_turn_usage(const nlohmann::json& result) {
  const auto* models = native::object_at(result, "modelUsage");
  if (models == nullptr || models->empty()) return;
  protocol::ContextUsage context = m_context.value_or(protocol::ContextUsage{});
  std::int64_t input = 0;
  std::int64_t output = 0;
  std::int64_t cache_read = 0;
  double cost = 0;
  bool costed = false;
  for (const auto& [name, usage] : models->items()) {
    if (!usage.is_object()) continue;
    input += native::integer_at(usage, "inputTokens").value_or(0) + native::integer_at(usage, "cacheCreationInputTokens").value_or(0);
    output += native::integer_at(usage, "outputTokens").value_or(0);
    cache_read += native::integer_at(usage, "cacheReadInputTokens").value_or(0);
    if (auto spent = native::number_at(usage, "costUSD"); spent && std::isfinite(*spent)) {
      cost += *spent;
      costed = true;
    }
    // The window of the model the session runs (init names it, "[1m]" suffix and all), else of the one used.
    const auto window = native::integer_at(usage, "contextWindow");
    if (window && *window > 0 && (!m_context_window || (m_init && name == m_init->model))) m_context_window = window;
  }
  context.window_tokens = m_context_window;
  context.input_tokens = input;
  context.output_tokens = output;
  context.cache_read_tokens = cache_read;
  if (costed) context.cost_usd = cost;
  m_context = context;
  m_events.on_usage(UsageUpdate{std::move(context)});
}

void ClaudeTranslator::on_user(const nlohmann::json& message) {
  const auto* body = native::object_at(message, "message");
  if (body == nullptr) return malformed("user without message", message);
  m_turn_active = true;
  // Replays of our own prompts, the interrupt markers, a compaction summary and a sub-agent's prompt are all user
  // text: the engine already published the prompt, and the others are not something a user said.
  if (native::bool_or(message, "isReplay", false)) {
    m_lines.dropped();
    return;
  }
  if (report_tool_results(*body, m_events) == 0) {
    m_lines.dropped();
    return;
  }
  if (!parent_of(message)) remember_uuid(message);
  const auto* structured = native::member(message, "tool_use_result");
  const nlohmann::json none;
  bool plan_changed = false;
  if (const auto* content = native::array_at(*body, "content")) {
    for (const auto& block : *content) {
      if (native::string_or_empty(block, "type") != "tool_result") continue;
      plan_changed |= m_plan.tool_finished(native::string_or_empty(block, "tool_use_id"), native::bool_or(block, "is_error", false),
                                           structured != nullptr ? *structured : none);
    }
  }
  if (plan_changed) m_events.on_plan(PlanUpdate{m_plan.entries()});
}

void ClaudeTranslator::on_result(const nlohmann::json& message) {
  const std::string subtype = native::string_or_empty(message, "subtype");
  const bool is_error = native::bool_or(message, "is_error", subtype != "success");

  TurnResult result;
  if (const auto* usage = native::object_at(message, "usage")) result.usage = usage_from(*usage);
  if (auto total = native::number_at(message, "total_cost_usd"); total && std::isfinite(*total)) {
    // The CLI reports what the whole process has cost so far; the turn cost the difference. A smaller total
    // means a process that started over (it should have got a new translator).
    const double turn_cost = *total >= m_cost_reported_usd ? *total - m_cost_reported_usd : *total;
    m_cost_reported_usd = *total;
    if (!result.usage) result.usage = protocol::Usage{};
    result.usage->cost_usd = turn_cost;
  }

  const std::string terminal = native::string_or_empty(message, "terminal_reason");
  const bool cancelled = is_error && subtype == "error_during_execution" &&
                         (m_interrupt_requested || terminal.starts_with("aborted"));
  if (cancelled) {
    result.stop_reason = protocol::StopReason::Cancelled;
  } else if (is_error) {
    result.stop_reason = protocol::StopReason::Error;
    result.error = result_error_text(message, subtype);
    m_events.on_error(AgentErrorReport{*result.error, /*recoverable=*/!is_fatal_result_error(message, *result.error)});
  } else {
    result.stop_reason = stop_reason_from(native::string_or_empty(message, "stop_reason"));
    result.text = native::string_or_empty(message, "result");
  }
  report_turn_usage(message);
  end_of_turn();
  m_events.on_turn_end(std::move(result));
}

void ClaudeTranslator::end_of_turn() {
  // Whatever the CLI asked during the turn, it no longer waits for; what was streaming is complete.
  m_tool_requests.clear();
  m_streams.clear();
  m_numbering.clear();
  m_turn_active = false;
  m_interrupt_requested = false;
  m_status_raised = false;  // the turn's end clears the status for clients too
}

// ---- control protocol --------------------------------------------------------------------------------------------

void ClaudeTranslator::on_control_request(const nlohmann::json& message) {
  const auto request_id = native::string_at(message, "request_id");
  const auto* request = native::object_at(message, "request");
  if (!request_id || request == nullptr) return malformed("control_request without request_id or request", message);
  const std::string subtype = native::string_or_empty(*request, "subtype");
  if (subtype != "can_use_tool") {
    // Hooks, SDK-hosted MCP servers and elicitation are never configured by this adapter.
    m_control.on_unanswerable_request(*request_id, subtype);
    return;
  }
  ToolRequest pending;
  pending.request_id = *request_id;
  pending.tool = native::string_or_empty(*request, "tool_name");
  if (const auto* input = native::object_at(*request, "input")) pending.input = *input;
  pending.tool_use_id = native::string_or_empty(*request, "tool_use_id");
  pending.kind = tool_request_kind(pending.tool);
  if (pending.tool.empty()) {
    // Unanswerable as a permission; refusing it lets the turn go on.
    m_control.on_unanswerable_request(*request_id, "can_use_tool without tool_name");
    return malformed("can_use_tool without tool_name", message);
  }
  m_turn_active = true;
  if (pending.kind == ToolRequestKind::Question) {
    if (auto ask = question_ask(pending.input)) {
      m_tool_requests[*request_id] = pending;
      ask->native_id = *request_id;
      m_events.on_question(std::move(*ask));
      return;
    }
    // No question we can show: ask for the tool like any other, so the user can still let it run or not.
    pending.kind = ToolRequestKind::Permission;
  }
  const std::string cwd = m_init ? m_init->cwd : std::string();
  PermissionAsk ask = permission_ask(*request, m_permission_mode, cwd);
  m_tool_requests[*request_id] = std::move(pending);
  ask.native_id = *request_id;
  m_events.on_permission_request(std::move(ask));
}

void ClaudeTranslator::on_control_response(const nlohmann::json& message) {
  const auto* response = native::object_at(message, "response");
  const auto request_id = response != nullptr ? native::string_at(*response, "request_id") : std::nullopt;
  if (!request_id) return malformed("control_response without request_id", message);
  const auto it = m_sent_requests.find(*request_id);
  if (it == m_sent_requests.end()) return unknown("control_response for unknown request " + *request_id);
  ControlResult result;
  result.request_id = *request_id;
  result.kind = it->second;
  m_sent_requests.erase(it);
  result.ok = native::string_or_empty(*response, "subtype") == "success";
  if (result.ok) {
    if (const auto* payload = native::member(*response, "response")) result.response = *payload;
  } else {
    result.error = native::string_at(*response, "error").value_or("no reason given");
  }
  if (result.kind == ControlRequestKind::Interrupt && (!result.ok || !m_turn_active)) {
    // Nothing was interrupted (refused, or the turn had already ended): the next turn's failure is a failure.
    m_interrupt_requested = false;
  }
  m_control.on_control_result(result);
}

void ClaudeTranslator::on_control_cancel(const nlohmann::json& message) {
  const auto request_id = native::string_at(message, "request_id");
  if (!request_id) return malformed("control_cancel_request without request_id", message);
  // The CLI no longer waits for this answer: a late answer must not be written, and the engine withdraws the
  // request it opened for it (resolved as cancelled for every client). An id we do not hold open (answered
  // already, or never asked) has nothing left to withdraw.
  if (m_tool_requests.erase(*request_id) == 0) {
    m_lines.dropped();
    return;
  }
  m_events.on_request_withdrawn(RequestWithdrawn{*request_id});
}


}  // namespace switchboard::adapters::claude
