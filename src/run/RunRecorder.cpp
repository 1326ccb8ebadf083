#include "run/RunRecorder.h"

#include <algorithm>

#include "switchboard/json/DecodeContext.h"

namespace switchboard::run {
namespace {

namespace p = protocol;

template <class T>
std::optional<T> decoded(const nlohmann::json& text) {
  T value{};
  json::DecodeContext context;
  if (!p::decode(text, value, context)) return std::nullopt;
  return value;
}

std::string text_at(const nlohmann::json& data, const char* key) {
  const auto it = data.find(key);
  return it != data.end() && it->is_string() ? it->get<std::string>() : std::string();
}

constexpr std::int64_t kAgentUnavailableCode = static_cast<std::int64_t>(p::ErrorCode::AgentUnavailable);

}  // namespace

void RunRecorder::set_session(std::string session_id, std::string agent) {
  m_session_id = std::move(session_id);
  m_agent = std::move(agent);
}

void RunRecorder::set_turn(std::string turn_id) {
  m_turn_id = std::move(turn_id);
  auto early = std::exchange(m_early, {});
  for (const auto& envelope : early) on_event(envelope);
}

void RunRecorder::set_queue_id(std::string queue_id) {
  m_queue_id = std::move(queue_id);
  auto early = std::exchange(m_early, {});
  for (const auto& envelope : early) on_event(envelope);
}

bool RunRecorder::ours(const nlohmann::json& data) const {
  if (!m_turn_id) return false;
  if (data.contains("request") && data["request"].is_object()) return text_at(data["request"], "turnId") == *m_turn_id;
  if (data.contains("turnId")) return text_at(data, "turnId") == *m_turn_id;
  if (data.contains("requestId")) {  // a resolution names only its request
    const auto id = text_at(data, "requestId");
    return std::any_of(m_permissions.begin(), m_permissions.end(), [&](const auto& r) { return r.request_id == id; });
  }
  return false;
}

bool RunRecorder::on_event(const nlohmann::json& envelope) {
  if (!m_session_id || text_at(envelope, "sessionId") != *m_session_id) return false;
  const auto type = text_at(envelope, "type");
  const auto data_it = envelope.find("data");
  if (data_it == envelope.end() || !data_it->is_object()) return true;
  const auto& data = *data_it;
  if (!m_turn_id && m_queue_id && type == "turn.started" && text_at(data, "queueId") == *m_queue_id) {
    set_turn(text_at(data, "turnId"));
  }
  if (!m_turn_id) {
    if (!m_stop_reason) m_early.push_back(envelope);
    return true;
  }
  if (m_stop_reason) return true;  // the turn is over: later activity is not the run's
  // The worktree's set-up state changes in the run's turn (docs/worktrees.md): the result says how it ended.
  if (type == "session.updated" && m_worktree) {
    if (const auto updated = decoded<p::SessionUpdatedEvent>(data); updated && updated->session.worktree)
      m_worktree = updated->session.worktree;
    return true;
  }
  // An agent error outside any turn (its process failed to start) is still the run's: it has nothing else.
  if (type == "agent.error" && !data.contains("turnId")) {
    record(type, data);
    return true;
  }
  // A context report names its turn when the agent sends it inside one; one without a turn (after a compaction,
  // say) that comes while the run's turn runs describes the same conversation.
  if (ours(data) || (type == "usage.updated" && !data.contains("turnId"))) record(type, data);
  return true;
}

void RunRecorder::record(const std::string& type, const nlohmann::json& data) {
  if (type == "tool.started") {
    p::RunToolCall call;
    call.tool_call_id = text_at(data, "toolCallId");
    call.tool = text_at(data, "tool");
    m_tools.push_back(std::move(call));
  } else if (type == "tool.completed") {
    const auto id = text_at(data, "toolCallId");
    for (auto& call : m_tools) {
      if (call.tool_call_id == id) call.is_error = data.value("isError", false);
    }
  } else if (type == "permission.requested") {
    if (!data.contains("request") || !data["request"].is_object()) return;
    p::RunPermission permission;
    permission.request_id = text_at(data["request"], "requestId");
    permission.tool = text_at(data["request"], "tool");
    permission.outcome = p::RunPermissionOutcome::Open;
    m_permissions.push_back(std::move(permission));
  } else if (type == "permission.resolved") {
    const auto id = text_at(data, "requestId");
    const auto outcome = text_at(data, "outcome");
    for (auto& permission : m_permissions) {
      if (permission.request_id != id) continue;
      permission.outcome = outcome == "allowed"  ? p::RunPermissionOutcome::Allowed
                           : outcome == "denied" ? p::RunPermissionOutcome::Denied
                                                 : p::RunPermissionOutcome::Cancelled;
      permission.resolved_by = m_answered_by_run.count(id) ? std::string("run") : text_at(data, "resolvedBy");
    }
  } else if (type == "turn.stopped") {
    const auto stopped = decoded<p::TurnStoppedEvent>(data);
    if (!stopped) return;
    m_stop_reason = stopped->stop_reason;
    m_text = stopped->text.value_or("");
    m_usage = stopped->usage;
    if (stopped->error) m_errors.push_back(*stopped->error);
  } else if (type == "usage.updated") {
    if (const auto updated = decoded<p::UsageUpdatedEvent>(data)) m_context_usage = updated->usage;
  } else if (type == "agent.error") {
    m_errors.push_back(text_at(data, "message"));
    if (data.value("code", std::int64_t{0}) == kAgentUnavailableCode) m_unavailable = true;
  }
}

bool RunRecorder::any_denied() const {
  return std::any_of(m_permissions.begin(), m_permissions.end(),
                     [](const auto& r) { return r.outcome == p::RunPermissionOutcome::Denied; });
}

void RunRecorder::answered_by_run(const std::string& request_id) {
  m_answered_by_run.insert(request_id);
  for (auto& permission : m_permissions) {
    if (permission.request_id == request_id && permission.resolved_by == "client") permission.resolved_by = "run";
  }
}

bool RunRecorder::is_open(const std::string& request_id) const {
  return std::any_of(m_permissions.begin(), m_permissions.end(), [&](const auto& r) {
    return r.request_id == request_id && r.outcome == p::RunPermissionOutcome::Open;
  });
}

protocol::RunResult RunRecorder::result(RunExitCode code, std::chrono::milliseconds duration) const {
  p::RunResult result;
  result.status = status_of(code);
  result.exit_code = code;
  result.session_id = m_session_id;
  result.worktree = m_worktree;
  result.turn_id = m_turn_id;
  if (!m_agent.empty()) result.agent = m_agent;
  result.attached = m_attached;
  result.stop_reason = m_stop_reason;
  result.text = m_text;
  result.usage = m_usage;
  result.context_usage = m_context_usage;
  result.duration_ms = duration.count();
  result.tools = m_tools;
  result.permissions = m_permissions;
  result.errors = m_errors;
  return result;
}

}  // namespace switchboard::run
