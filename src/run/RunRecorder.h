#pragma once

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/RunExitCode.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::run {

// Builds the run's result from the events of its session, as they arrive (it does no I/O). Events of the
// session that belong to other turns (a continued session another client also prompts) are ignored; events
// that arrive before the run knows its turn's id (the daemon publishes `turn.started` before it answers
// session.send) are held and replayed once it does.
class RunRecorder {
 public:
  RunRecorder(std::string agent, bool attached) : m_agent(std::move(agent)), m_attached(attached) {}

  void set_session(std::string session_id, std::string agent);
  // --worktree: where the run's session works (the session's `worktree`).
  void set_worktree(protocol::Worktree worktree) { m_worktree = std::move(worktree); }
  const std::optional<std::string>& session_id() const { return m_session_id; }
  // From the session.send reply: the turn it started, or the queue id of the prompt it queued.
  void set_turn(std::string turn_id);
  void set_queue_id(std::string queue_id);
  const std::optional<std::string>& turn_id() const { return m_turn_id; }

  // An event envelope ({seq,type,ts,sessionId?,data}); whether it belongs to the run's session.
  bool on_event(const nlohmann::json& envelope);
  // The daemon took the run's own --on-ask answer to this request (reported as resolved by `run`, whether the
  // request's resolution arrived before or after that reply).
  void answered_by_run(const std::string& request_id);
  void add_error(std::string message) { m_errors.push_back(std::move(message)); }

  bool turn_ended() const { return m_stop_reason.has_value(); }
  const std::optional<protocol::StopReason>& stop_reason() const { return m_stop_reason; }
  bool agent_unavailable() const { return m_unavailable; }
  bool any_denied() const;
  bool is_open(const std::string& request_id) const;

  // What the run ended with; `code` decides the status.
  protocol::RunResult result(RunExitCode code, std::chrono::milliseconds duration) const;

 private:
  void record(const std::string& type, const nlohmann::json& data);
  bool ours(const nlohmann::json& data) const;

  std::string m_agent;
  bool m_attached;
  std::optional<std::string> m_session_id;
  std::optional<protocol::Worktree> m_worktree;
  std::optional<std::string> m_turn_id;
  std::optional<std::string> m_queue_id;
  std::vector<nlohmann::json> m_early;  // the session's events before the turn id was known
  std::optional<protocol::StopReason> m_stop_reason;
  std::string m_text;
  std::optional<protocol::Usage> m_usage;
  std::optional<protocol::ContextUsage> m_context_usage;  // the turn's last usage.updated
  std::vector<protocol::RunToolCall> m_tools;
  std::vector<protocol::RunPermission> m_permissions;
  std::set<std::string> m_answered_by_run;
  std::vector<std::string> m_errors;
  bool m_unavailable = false;
};

}  // namespace switchboard::run
