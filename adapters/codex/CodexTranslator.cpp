#include "codex/CodexTranslator.h"

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "codex/CodexPermissions.h"
#include "codex/CodexPlan.h"
#include "common/McpServers.h"
#include "common/NativeJson.h"

namespace switchboard::adapters::codex {
namespace {

// Notifications that carry nothing a client needs from an agent session: account and connection state, the
// thread's own bookkeeping (status, names, goals, settings), hooks, diffs the fileChange items already carry, and the per-process announcements answered elsewhere.
constexpr std::array kDroppedNotifications{
    std::string_view("thread/status/changed"),      std::string_view("account/rateLimits/updated"),
    std::string_view("remoteControl/status/changed"), std::string_view("thread/started"),
    std::string_view("thread/goal/updated"),        std::string_view("thread/goal/cleared"),
    std::string_view("thread/name/updated"),        std::string_view("thread/settings/updated"),
    std::string_view("thread/readState/changed"),   std::string_view("thread/archived"),
    std::string_view("thread/unarchived"),          std::string_view("thread/closed"),
    std::string_view("thread/compacted"),           std::string_view("turn/diff/updated"),
    std::string_view("item/fileChange/patchUpdated"), std::string_view("item/commandExecution/terminalInteraction"),
    std::string_view("hook/started"),               std::string_view("hook/completed"),
    std::string_view("account/updated"),            std::string_view("app/list/updated"),
    std::string_view("fs/changed"),                 std::string_view("turn/moderationMetadata"),
    std::string_view("model/safetyBuffering/updated"), std::string_view("model/verification"),
    std::string_view("thread/environment/connected"), std::string_view("thread/environment/disconnected"),
    std::string_view("item/autoApprovalReview/started"), std::string_view("item/autoApprovalReview/completed")};

// Notifications that are only logged: things a person running the daemon may want to see, not a session event.
constexpr std::array kLoggedNotifications{std::string_view("warning"), std::string_view("configWarning"),
                                          std::string_view("deprecationNotice"), std::string_view("guardianWarning"),
                                          std::string_view("model/rerouted")};

// Item types that are known and not reported: the user's own prompt (the engine published it) and bookkeeping.
constexpr std::array kDroppedItems{std::string_view("userMessage"), std::string_view("hookPrompt"),
                                   std::string_view("subAgentActivity"), std::string_view("sleep"),
                                   std::string_view("enteredReviewMode"), std::string_view("exitedReviewMode"),
                                   std::string_view("functionCallOutput")};

std::string join_strings(const nlohmann::json* list, std::string_view separator) {
  std::string out;
  if (list == nullptr) return out;
  for (const auto& entry : *list) {
    if (!entry.is_string() || entry.get_ref<const std::string&>().empty()) continue;
    if (!out.empty()) out += separator;
    out += entry.get_ref<const std::string&>();
  }
  return out;
}

// An MCP tool result as text: its text content blocks joined, other blocks named.
std::string mcp_output(const nlohmann::json& item) {
  if (const auto* error = native::object_at(item, "error")) return native::string_or_empty(*error, "message");
  const auto* result = native::object_at(item, "result");
  if (result == nullptr) return {};
  std::string out;
  if (const auto* content = native::array_at(*result, "content")) {
    for (const auto& block : *content) {
      if (!out.empty()) out += "\n";
      const std::string type = native::string_or_empty(block, "type");
      out += type == "text" ? native::string_or_empty(block, "text") : "[" + (type.empty() ? std::string("content") : type) + "]";
    }
  }
  if (out.empty()) {
    if (const auto* structured = native::member(*result, "structuredContent"); structured != nullptr && !structured->is_null()) {
      out = native::dump(*structured);
    }
  }
  return out;
}

std::string file_change_output(const nlohmann::json& item) {
  std::string out;
  const auto input = file_change_input(native::member(item, "changes") ? *native::member(item, "changes") : nlohmann::json());
  for (const auto& change : input["changes"]) {
    if (!out.empty()) out += "\n";
    out += change.value("kind", std::string("update")) + " " + change.value("path", std::string());
  }
  return out;
}

nlohmann::json arguments_object(const nlohmann::json& item) {
  const auto* arguments = native::member(item, "arguments");
  if (arguments == nullptr || arguments->is_null()) return nlohmann::json::object();
  if (arguments->is_object()) return *arguments;
  return {{"arguments", *arguments}};
}

}  // namespace

CodexTranslator::CodexTranslator(AdapterListener& events) : m_events(events) {}

JsonRpcEndpoint::Handlers CodexTranslator::handlers() {
  // The handlers read only through non-throwing accessors; the catch is the module edge for a nlohmann call that
  // throws anyway, so that one odd message cannot take the adapter down.
  const auto guarded = [this](const nlohmann::json& params, const auto& handle) {
    m_lines.line();
    try {
      handle();
    } catch (const nlohmann::json::exception& error) {
      malformed(error.what(), params);
    }
  };
  return {[this, guarded](const std::string& method, const nlohmann::json& params) {
            guarded(params, [&] { on_notification(method, params); });
          },
          [this, guarded](const nlohmann::json& id, const std::string& method, const nlohmann::json& params, JsonRpcEndpoint::Reply reply) {
            guarded(params, [&] { on_request(id, method, params, std::move(reply)); });
          }};
}

void CodexTranslator::turn_requested() {
  // A new turn: whatever the last one left behind is over.
  m_turn_active = true;
  m_turn_id.clear();
  m_last_text.clear();
  m_usage.reset();
  m_last_error.reset();
}

std::optional<JsonRpcEndpoint::Reply> CodexTranslator::take_approval(const std::string& native_id) {
  const auto it = m_approvals.find(native_id);
  if (it == m_approvals.end()) return std::nullopt;
  auto reply = std::move(it->second);
  m_approvals.erase(it);
  return reply;
}

// ---- answers to our requests ---------------------------------------------------------------------------------

void CodexTranslator::on_turn_start_answer(const JsonRpcEndpoint::Outcome& outcome) {
  if (const auto* result = std::get_if<nlohmann::json>(&outcome)) {
    if (const auto* turn = native::object_at(*result, "turn"); turn != nullptr && m_turn_id.empty()) {
      m_turn_id = native::string_or_empty(*turn, "id");
    }
    return;
  }
  const auto& failure = std::get<JsonRpcEndpoint::Error>(outcome);
  // Gone: the adapter reports the agent unavailable, which ends the turn.
  if (!m_turn_active || failure.code == JsonRpcEndpoint::kAgentGone) return;
  // The turn never started; the engine still waits for its end.
  const std::string error = "Codex refused the turn: " + (failure.message.empty() ? "no reason given" : failure.message);
  m_events.on_error(AgentErrorReport{error, /*recoverable=*/true});
  TurnResult result;
  result.stop_reason = protocol::StopReason::Error;
  result.error = error;
  end_turn(std::move(result));
}

void CodexTranslator::compaction_requested() {
  m_compaction_requested = true;
  m_compaction_turn_id.clear();
}

void CodexTranslator::watch_mcp_servers(const std::vector<protocol::McpServer>& servers) {
  m_mcp_servers = pending_mcp_states(servers);
  if (!m_mcp_servers.empty()) m_events.on_mcp_status(McpStatusReport{m_mcp_servers});
}

void CodexTranslator::on_thread_opened(const nlohmann::json& result) {
  const auto* thread = native::object_at(result, "thread");
  const std::string id = thread != nullptr ? native::string_or_empty(*thread, "id") : std::string();
  if (id.empty()) return malformed("thread response without thread.id", result);
  if (id == m_thread_id) return;
  m_thread_id = id;
  m_events.on_provider_session(ProviderSession{id});
}

// ---- requests from Codex -----------------------------------------------------------------------------------------

void CodexTranslator::on_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params, JsonRpcEndpoint::Reply reply) {
  const bool command = method == "item/commandExecution/requestApproval";
  const bool file_change = method == "item/fileChange/requestApproval";
  if ((!command && !file_change) || !params.is_object() || params.empty()) {
    // User input, MCP elicitation, dynamic tools, token refresh, …: refused, or Codex waits forever.
    if (command || file_change) malformed("approval request without params", params);
    else unknown("server request " + method);
    return reply(JsonRpcEndpoint::method_not_found(method));
  }
  PermissionAsk ask;
  if (command) {
    ask = command_approval_ask(params);
  } else {
    const auto changes = m_file_changes.find(native::string_or_empty(params, "itemId"));
    ask = file_change_approval_ask(params, changes != m_file_changes.end() ? changes->second : nlohmann::json());
  }
  ask.native_id = native::dump(id);
  m_approvals[ask.native_id] = std::move(reply);
  m_events.on_permission_request(std::move(ask));
}

// ---- notifications -----------------------------------------------------------------------------------------------

void CodexTranslator::on_notification(const std::string& method, const nlohmann::json& params) {
  if (method == "item/agentMessage/delta" || method == "item/reasoning/summaryTextDelta" ||
      method == "item/reasoning/textDelta" || method == "item/plan/delta") {
    const auto item = native::string_at(params, "itemId");
    const auto delta = native::string_at(params, "delta");
    if (!item || !delta) return malformed(method + " without itemId or delta", params);
    if (delta->empty()) return;
    if (method == "item/reasoning/textDelta") return m_events.on_delta(TextDelta{*item + ":content", protocol::DeltaKind::Thinking, *delta, std::nullopt});
    const auto kind = method == "item/reasoning/summaryTextDelta" ? protocol::DeltaKind::Thinking : protocol::DeltaKind::Text;
    return m_events.on_delta(TextDelta{*item, kind, *delta, std::nullopt});
  }
  if (method == "item/reasoning/summaryPartAdded") {
    // A second summary part starts a new paragraph of the same thinking message.
    const auto item = native::string_at(params, "itemId");
    if (item && native::integer_at(params, "summaryIndex").value_or(0) > 0) {
      m_events.on_delta(TextDelta{*item, protocol::DeltaKind::Thinking, "\n\n", std::nullopt});
    } else {
      m_lines.dropped();
    }
    return;
  }
  if (method == "item/commandExecution/outputDelta" || method == "item/fileChange/outputDelta") {
    const auto item = native::string_at(params, "itemId");
    const auto delta = native::string_at(params, "delta");
    if (!item || !delta) return malformed(method + " without itemId or delta", params);
    if (!delta->empty()) m_events.on_tool_output(ToolOutput{*item, *delta});
    return;
  }
  if (method == "item/mcpToolCall/progress") {
    const auto item = native::string_at(params, "itemId");
    const auto text = native::string_at(params, "message");
    if (!item || !text) return malformed(method + " without itemId or message", params);
    m_events.on_tool_output(ToolOutput{*item, *text + "\n"});
    return;
  }
  if (method == "item/started" || method == "item/completed") {
    const auto* item = native::object_at(params, "item");
    if (item == nullptr) return malformed(method + " without item", params);
    if (native::string_or_empty(*item, "id").empty()) return malformed(method + " item without id", params);
    return method == "item/started" ? on_item_started(*item) : on_item_completed(*item);
  }
  if (method == "turn/started") {
    const auto* turn = native::object_at(params, "turn");
    if (turn == nullptr) return malformed("turn/started without turn", params);
    // A turn the adapter did not ask for is not the session's turn; the first one after thread/compact/start on
    // this thread is the compaction's.
    if (!m_turn_active) {
      const std::string thread = native::string_or_empty(params, "threadId");
      if (m_compaction_requested && m_compaction_turn_id.empty() && (thread.empty() || thread == m_thread_id)) {
        m_compaction_turn_id = native::string_or_empty(*turn, "id");
      }
      return m_lines.dropped();
    }
    m_turn_id = native::string_or_empty(*turn, "id");
    return;
  }
  if (method == "turn/completed") return on_turn_completed(params);
  if (method == "thread/tokenUsage/updated") return on_token_usage(params);
  if (method == "turn/plan/updated") return on_plan_updated(params);
  if (method == "mcpServer/startupStatus/updated") return on_mcp_startup(params);
  if (method == "skills/changed") {
    if (m_skills_changed) m_skills_changed();
    return;
  }
  if (method == "error") return on_error_notification(params);
  if (method == "serverRequest/resolved") {
    // Codex no longer waits (answered, or its turn ended): a late answer must not be written.
    if (const auto* id = native::member(params, "requestId")) m_approvals.erase(native::dump(*id));
    m_lines.dropped();
    return;
  }
  if (one_of(kLoggedNotifications, method)) {
    m_lines.dropped();
    const auto text = native::string_at(params, "message");
    spdlog::info("codex: {}: {:.300}", method, text ? *text : native::dump(params));
    return;
  }
  if (one_of(kDroppedNotifications, method)) {
    m_lines.dropped();
    return;
  }
  unknown("notification " + method);
}

void CodexTranslator::on_item_started(const nlohmann::json& item) {
  const std::string type = native::string_or_empty(item, "type");
  const std::string id = native::string_or_empty(item, "id");
  if (type == "agentMessage" || type == "reasoning" || type == "plan") {
    // Deltas and the completed item follow; there is nothing to show before the first piece. The model is
    // answering, so a retry or compaction before it is over.
    return clear_status();
  }
  if (type == "commandExecution") return start_tool(id, std::string(kShellTool), command_input(item));
  if (type == "fileChange") {
    const nlohmann::json changes = native::member(item, "changes") ? *native::member(item, "changes") : nlohmann::json::array();
    m_file_changes[id] = changes;
    return start_tool(id, std::string(kPatchTool), file_change_input(changes));
  }
  if (type == "mcpToolCall") {
    return start_tool(id, "mcp__" + native::string_or_empty(item, "server") + "__" + native::string_or_empty(item, "tool"),
                      arguments_object(item));
  }
  if (type == "dynamicToolCall") return start_tool(id, native::string_or_empty(item, "tool"), arguments_object(item));
  if (type == "webSearch") return start_tool(id, std::string(kWebSearchTool), {{"query", native::string_or_empty(item, "query")}});
  if (type == "imageView") return start_tool(id, std::string(kViewImageTool), {{"path", native::string_or_empty(item, "path")}});
  if (type == "collabAgentToolCall") {
    nlohmann::json input = nlohmann::json::object();
    if (auto prompt = native::string_at(item, "prompt")) input["prompt"] = *prompt;
    if (auto model = native::string_at(item, "model")) input["model"] = *model;
    return start_tool(id, "agent_" + native::string_or_empty(item, "tool"), std::move(input));
  }
  if (type == "imageGeneration") return start_tool(id, "image_generation", nlohmann::json::object());
  if (type == "contextCompaction") {
    AgentStatus status;
    status.status = protocol::AgentStatusKind::Compacting;
    status.message = "compacting the conversation";
    m_status_raised = true;
    m_events.on_status(std::move(status));
    return;
  }
  if (one_of(kDroppedItems, type)) {
    m_lines.dropped();
    return;
  }
  unknown("item type " + type);
}

void CodexTranslator::clear_status() {
  if (!m_status_raised) return;
  m_status_raised = false;
  m_events.on_status(AgentStatus{});  // working
}

void CodexTranslator::start_tool(const std::string& id, std::string tool, nlohmann::json input) {
  clear_status();
  m_open_tools.insert(id);
  auto diffs = tool == kPatchTool ? file_change_diffs(input) : std::vector<protocol::FileDiff>{};
  m_events.on_tool_started(ToolStarted{id, std::move(tool), std::move(input), std::nullopt, std::move(diffs)});
}

void CodexTranslator::complete_tool(const nlohmann::json& item, const std::string& id, std::string output, bool is_error) {
  if (!m_open_tools.contains(id)) {
    // Completed without a start we saw (a resumed item, or a version that skips item/started): start it now,
    // so that every tool.completed has its tool.started.
    m_open_tools.insert(id);
    on_item_started(item);
  }
  m_open_tools.erase(id);
  m_file_changes.erase(id);
  m_events.on_tool_completed(ToolCompleted{id, std::move(output), is_error});
}

void CodexTranslator::on_item_completed(const nlohmann::json& item) {
  const std::string type = native::string_or_empty(item, "type");
  const std::string id = native::string_or_empty(item, "id");
  const std::string status = native::string_or_empty(item, "status");
  if (type == "agentMessage") {
    std::string text = native::string_or_empty(item, "text");
    m_last_text = text;
    m_events.on_message(MessageCompleted{id, protocol::DeltaKind::Text, std::move(text), std::nullopt});
    return;
  }
  if (type == "reasoning") {
    std::string summary = join_strings(native::array_at(item, "summary"), "\n\n");
    std::string content = join_strings(native::array_at(item, "content"), "\n\n");
    if (!summary.empty()) m_events.on_message(MessageCompleted{id, protocol::DeltaKind::Thinking, std::move(summary), std::nullopt});
    if (!content.empty()) m_events.on_message(MessageCompleted{id + ":content", protocol::DeltaKind::Thinking, std::move(content), std::nullopt});
    if (summary.empty() && content.empty()) m_lines.dropped();  // encrypted reasoning only
    return;
  }
  if (type == "plan") {
    m_events.on_message(MessageCompleted{id, protocol::DeltaKind::Text, native::string_or_empty(item, "text"), std::nullopt});
    return;
  }
  if (type == "commandExecution") {
    if (status == "declined") return complete_tool(item, id, "declined by the user", true);
    std::string output = native::string_or_empty(item, "aggregatedOutput");
    const auto exit_code = native::integer_at(item, "exitCode");
    return complete_tool(item, id, std::move(output), status != "completed" || (exit_code && *exit_code != 0));
  }
  if (type == "fileChange") {
    if (status == "declined") return complete_tool(item, id, "declined by the user", true);
    return complete_tool(item, id, file_change_output(item), status != "completed");
  }
  if (type == "mcpToolCall" || type == "dynamicToolCall") {
    std::string output = type == "mcpToolCall" ? mcp_output(item) : native::dump(native::member(item, "contentItems") ? *native::member(item, "contentItems") : nlohmann::json());
    const bool failed = status == "failed" || native::object_at(item, "error") != nullptr ||
                        native::bool_or(item, "success", true) == false;
    return complete_tool(item, id, std::move(output), failed);
  }
  if (type == "webSearch") {
    const auto* results = native::member(item, "results");
    std::string output = results != nullptr && !results->is_null() ? native::dump(*results) : native::string_or_empty(item, "query");
    return complete_tool(item, id, std::move(output), false);
  }
  if (type == "imageView") return complete_tool(item, id, native::string_or_empty(item, "path"), false);
  if (type == "collabAgentToolCall" || type == "imageGeneration") {
    return complete_tool(item, id, status, status == "failed");
  }
  if (type == "contextCompaction") {
    AgentStatus status_event;
    status_event.status = protocol::AgentStatusKind::Compacted;
    status_event.message = "compacted the conversation";
    m_status_raised = false;  // compacted is a final word, not something that is still going on
    m_events.on_status(std::move(status_event));
    return;
  }
  if (one_of(kDroppedItems, type)) {
    m_lines.dropped();
    return;
  }
  unknown("item type " + type);
}

void CodexTranslator::on_token_usage(const nlohmann::json& params) {
  const auto* usage = native::object_at(params, "tokenUsage");
  const auto* last = usage != nullptr ? native::object_at(*usage, "last") : nullptr;
  if (last == nullptr) return malformed("thread/tokenUsage/updated without tokenUsage.last", params);
  const std::string thread = native::string_or_empty(params, "threadId");
  const bool ours = thread.empty() || thread == m_thread_id;
  if (ours) {
    // The context as the latest model request left it: what that request sent, and what it answered, which
    // the next request sends again. The thread's totals are what the session has spent.
    UsageUpdate update;
    update.usage.used_tokens = native::integer_at(*last, "totalTokens")
                                   .value_or(native::integer_at(*last, "inputTokens").value_or(0) + native::integer_at(*last, "outputTokens").value_or(0));
    update.usage.window_tokens = native::integer_at(*usage, "modelContextWindow");
    if (const auto* total = native::object_at(*usage, "total")) {
      update.usage.input_tokens = native::integer_at(*total, "inputTokens");
      update.usage.output_tokens = native::integer_at(*total, "outputTokens");
      update.usage.cache_read_tokens = native::integer_at(*total, "cachedInputTokens");
    }
    m_events.on_usage(std::move(update));
  }
  // One update per model request, `last` being that request: their sum is the turn's usage. An update for
  // another turn (a restored total after thread/resume) is not this turn's.
  const std::string turn = native::string_or_empty(params, "turnId");
  if (!m_turn_active || (!m_turn_id.empty() && !turn.empty() && turn != m_turn_id)) {
    if (!ours) m_lines.dropped();
    return;
  }
  add_usage(m_usage, request_usage(native::integer_at(*last, "inputTokens").value_or(0),
                                    native::integer_at(*last, "cachedInputTokens").value_or(0),
                                    native::integer_at(*last, "outputTokens").value_or(0)));
}

void CodexTranslator::on_plan_updated(const nlohmann::json& params) {
  // The agent's whole plan (update_plan), each time it changes; the explanation is for the model's next step, not
  // part of the plan.
  const auto* plan = native::array_at(params, "plan");
  if (plan == nullptr) return malformed("turn/plan/updated without plan", params);
  PlanUpdate update;
  for (const auto& step : *plan) {
    const auto status = plan_status(native::string_or_empty(step, "status"));
    if (!status) return malformed("turn/plan/updated with an unknown step status", params);
    update.entries.push_back(protocol::PlanEntry{native::string_or_empty(step, "step"), *status, std::nullopt});
  }
  m_events.on_plan(std::move(update));
}

void CodexTranslator::on_mcp_startup(const nlohmann::json& params) {
  const std::string name = native::string_or_empty(params, "name");
  const auto server = std::find_if(m_mcp_servers.begin(), m_mcp_servers.end(), [&](const auto& known) { return known.name == name; });
  // A server of the user's own configuration, not the session's: not ours to report.
  if (server == m_mcp_servers.end()) return m_lines.dropped();
  const std::string status = native::string_or_empty(params, "status");
  if (status == "starting") {
    server->status = protocol::McpServerStatusKind::Pending;
    server->error.reset();
  } else if (status == "ready") {
    server->status = protocol::McpServerStatusKind::Connected;
    server->error.reset();
  } else if (status == "failed" || status == "cancelled") {
    server->status = protocol::McpServerStatusKind::Failed;
    auto error = native::string_at(params, "error");
    server->error = error && !error->empty() ? *error : "the server " + status;
  } else {
    return unknown("MCP server status " + status);
  }
  m_events.on_mcp_status(McpStatusReport{m_mcp_servers});
}

void CodexTranslator::on_error_notification(const nlohmann::json& params) {
  const auto* error = native::object_at(params, "error");
  if (error == nullptr) return malformed("error notification without error", params);
  const std::string text = error_text(*error);
  if (native::bool_or(params, "willRetry", false)) {
    AgentStatus status;
    status.status = protocol::AgentStatusKind::Retrying;
    status.message = text;
    m_status_raised = true;
    m_events.on_status(std::move(status));
    return;
  }
  if (m_turn_active) {
    // turn/completed (failed) follows with the same error; it is reported once, there.
    m_last_error = text;
    m_lines.dropped();
    return;
  }
  m_events.on_error(AgentErrorReport{text, /*recoverable=*/!is_fatal_error(*error)});
}

void CodexTranslator::on_turn_completed(const nlohmann::json& params) {
  const auto* turn = native::object_at(params, "turn");
  if (turn == nullptr) return malformed("turn/completed without turn", params);
  const std::string id = native::string_or_empty(*turn, "id");
  if (!m_turn_active || (!m_turn_id.empty() && !id.empty() && id != m_turn_id)) {
    // Not the turn we run: the compaction's, a sub-agent's, or one that ended already.
    if (m_compaction_requested && !m_compaction_turn_id.empty() && id == m_compaction_turn_id) {
      m_compaction_requested = false;
      m_compaction_turn_id.clear();
      if (m_compaction_completed) m_compaction_completed();
      return;
    }
    return unknown("turn/completed for turn " + id);
  }
  const std::string status = native::string_or_empty(*turn, "status");
  TurnResult result;
  result.usage = m_usage;
  // Codex's turn id: what thread/fork (lastTurnId) and thread/revert (beforeTurnId) take.
  const std::string& turn_ref = id.empty() ? m_turn_id : id;
  if (!turn_ref.empty()) result.native_turn_ref = turn_ref;
  if (status == "completed") {
    result.stop_reason = protocol::StopReason::EndTurn;
    result.text = m_last_text;
  } else if (status == "interrupted") {
    result.stop_reason = protocol::StopReason::Cancelled;
  } else {
    result.stop_reason = protocol::StopReason::Error;
    const auto* error = native::object_at(*turn, "error");
    std::string text = error != nullptr ? error_text(*error) : m_last_error.value_or("the turn failed (" + status + ")");
    result.error = text;
    m_events.on_error(AgentErrorReport{std::move(text), /*recoverable=*/error == nullptr || !is_fatal_error(*error)});
  }
  end_turn(std::move(result));
}

void CodexTranslator::end_turn(TurnResult result) {
  // Whatever Codex asked during the turn, it no longer waits for; items still open were interrupted.
  m_approvals.clear();
  m_file_changes.clear();
  m_open_tools.clear();
  m_turn_active = false;
  m_turn_id.clear();
  m_last_text.clear();
  m_usage.reset();
  m_last_error.reset();
  m_status_raised = false;  // the turn's end clears the status for clients too
  m_events.on_turn_end(std::move(result));
}


}  // namespace switchboard::adapters::codex
