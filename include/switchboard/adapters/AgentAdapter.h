#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/ErrorCodes.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters {

// The one interface every agent implements, whatever its native protocol: a duplex NDJSON CLI (Claude Code),
// a JSON-RPC app server (Codex), an HTTP+SSE server (OpenCode), or a CLI run once per turn (Grok). The engine
// drives an adapter through AgentAdapter and hears from it through AdapterListener, on the io_context thread.
//
// Contract for every adapter (the shared conformance tests check it):
// - after send(), the adapter reports the turn's activity and then exactly one on_turn_end();
// - cancel() ends the running turn with on_turn_end(Cancelled) and leaves the adapter usable;
// - a permission or question asked through the listener blocks the turn until answer_*() is called;
// - if the agent becomes permanently unavailable (its process died), on_stopped() is called once, after an
//   on_turn_end(Error) for a turn that was running;
// - an operation the agent cannot do returns an AdapterError with code Unsupported, never a silent no-op.

struct AdapterError {
  protocol::ErrorCode code;
  std::string message;
};

struct StartOptions {
  std::string session_id;  // ours, stable
  std::string cwd;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> resume_provider_session_id;  // resume the agent's own session
};

struct TurnInput {
  std::string turn_id;
  std::string text;
  std::vector<protocol::Attachment> attachments;
  std::optional<std::string> model;  // already resolved by the engine (override → configuration → pin)
};

struct PermissionAsk {
  std::string tool;
  nlohmann::json input = nlohmann::json::object();
  std::string description;
  // What a rule pattern is matched against: the command line for a shell tool, the path for a file tool.
  std::string subject;
  std::optional<protocol::PermissionRule> suggested_rule;
  std::string reason;
};

struct PermissionAnswer {
  bool allow = false;
  std::optional<std::string> message;  // told to the agent with a deny
  nlohmann::json updated_input;        // null: unchanged
};

struct QuestionAsk {
  std::vector<protocol::Question> questions;
};

struct QuestionAnswer {
  bool rejected = false;
  std::vector<std::string> answers;
};

// Something the agent is busy with besides answering: a retry after a failed model request, compaction. The
// engine publishes it as agent.status; a later status or the end of the turn replaces it.
struct AgentStatus {
  protocol::AgentStatusKind status = protocol::AgentStatusKind::Working;
  std::optional<std::string> message;
  std::optional<std::int64_t> attempt;
  std::optional<std::int64_t> max_attempts;
  std::optional<std::int64_t> retry_delay_ms;
};

struct TurnResult {
  protocol::StopReason stop_reason = protocol::StopReason::EndTurn;
  std::string text;  // final assistant text
  std::optional<protocol::Usage> usage;
  std::optional<std::string> error;
};

// What an adapter reports, in the order it happens. Implemented by the engine's session.
class AdapterListener {
 public:
  virtual ~AdapterListener() = default;
  virtual void on_provider_session(std::string provider_session_id) = 0;
  // `parent_tool_call_id` is set for messages a sub-agent writes: the tool call (e.g. Claude's Task) running it.
  // It has a default so that adapters for agents without sub-agents need not mention it.
  virtual void on_delta(const std::string& message_id, protocol::DeltaKind kind, std::string text,
                        std::optional<std::string> parent_tool_call_id = std::nullopt) = 0;
  virtual void on_message(const std::string& message_id, protocol::DeltaKind kind, std::string text,
                          std::optional<std::string> parent_tool_call_id = std::nullopt) = 0;
  virtual void on_tool_started(std::string tool_call_id, std::string tool, nlohmann::json input,
                               std::optional<std::string> parent_tool_call_id) = 0;
  // A streamed piece of a running tool's output (a shell command's stdout/stderr as it comes), before the
  // tool's on_tool_completed, which carries the whole output again. Agents that report output only at the end
  // never call it, so it has a default.
  virtual void on_tool_output(const std::string& tool_call_id, std::string text) {
    static_cast<void>(tool_call_id);
    static_cast<void>(text);
  }
  virtual void on_tool_completed(std::string tool_call_id, std::string output, bool is_error) = 0;
  // `native_id` is the adapter's own handle for the request; the engine answers with it.
  virtual void on_permission_request(std::string native_id, PermissionAsk ask) = 0;
  virtual void on_question(std::string native_id, QuestionAsk ask) = 0;
  // The agent no longer waits for the answer to an open permission or question (it withdrew the request, e.g.
  // Claude Code's control_cancel_request): the engine resolves it as cancelled for every client and sends no
  // answer. Agents that never withdraw a request need not override it.
  virtual void on_request_withdrawn(const std::string& native_id) { static_cast<void>(native_id); }
  virtual void on_status(AgentStatus status) = 0;
  virtual void on_turn_end(TurnResult result) = 0;
  virtual void on_error(std::string message, bool recoverable) = 0;
  virtual void on_stopped(std::string reason) = 0;
};

class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;

  virtual protocol::AgentCapabilities capabilities() const = 0;
  // Starts or resumes the agent; `done` gets nullopt once it can take a turn, or why it cannot.
  virtual void start(const StartOptions& options, std::function<void(std::optional<AdapterError>)> done) = 0;
  virtual void send(TurnInput input) = 0;
  virtual void cancel() = 0;
  virtual void answer_permission(const std::string& native_id, PermissionAnswer answer) = 0;
  virtual void answer_question(const std::string& native_id, QuestionAnswer answer) = 0;
  virtual std::optional<AdapterError> set_model(const std::string& model) = 0;
  virtual std::optional<AdapterError> set_mode(const std::string& mode) = 0;
  // Graceful stop; the adapter calls on_stopped() when its process is gone.
  virtual void stop() = 0;
};

// ---- The agent's own history --------------------------------------------------------------------------------
// Most agent CLIs keep their sessions in local files. An agent that does exposes them through the descriptor's
// history hooks below; the engine turns them into history.list / history.read / session.import.

// One of the agent's own sessions.
struct HistoryEntry {
  std::string provider_session_id;  // what StartOptions::resume_provider_session_id takes
  std::string title;                // may be empty
  std::string cwd;                  // as the agent recorded it
  std::optional<std::int64_t> created_at;  // Unix milliseconds, when the history records it
  std::int64_t updated_at = 0;             // Unix milliseconds
  std::optional<std::int64_t> prompts;
  std::optional<std::string> path;  // the file it lives in, if it is one
};

struct HistoryList {
  std::vector<HistoryEntry> sessions;  // newest first
  std::size_t skipped_files = 0;       // unreadable, or holding no conversation
  std::size_t skipped_lines = 0;       // malformed
};

// Hears one session replayed from the history: the user's prompts, each opening a turn, then the turn's activity
// through the AdapterListener calls, closed by on_turn_end() (at the next prompt, or at the end). Permission,
// question, status, error and stop calls may be ignored: histories do not hold them.
class HistorySink : public AdapterListener {
 public:
  // `timestamp` is ISO 8601 as the history recorded it (e.g. "2026-01-02T03:04:05.000Z"), or empty.
  virtual void on_user_prompt(std::string prompt_id, std::string text, std::string timestamp) = 0;
};

struct HistoryReadStats {
  std::size_t lines = 0;
  std::size_t skipped_lines = 0;  // malformed
};

template <class T>
using HistoryOutcome = std::variant<T, AdapterError>;

class AgentRuntime;  // switchboard/adapters/AgentRuntime.h

// How the engine finds agents: one entry per agent name. discover() must not block for long (it may run a
// `--version` probe with a deadline).
struct AgentDescriptor {
  std::string name;
  std::function<protocol::AgentInfo()> discover;
  std::function<std::unique_ptr<AgentAdapter>(AdapterListener& listener)> create;

  // Optional (empty: the agent has no history we can read). Both do blocking file I/O, so the engine calls them
  // on a helper thread, never on the reactor: they must not touch the io_context or anything living on it, and
  // may run concurrently with each other. Unknown provider session ids are UnknownHistorySession; malformed
  // history is skipped and counted, never an error.
  std::function<HistoryOutcome<HistoryList>(const std::string& cwd)> list_history;
  std::function<HistoryOutcome<HistoryReadStats>(const std::string& cwd, const std::string& provider_session_id,
                                                 HistorySink& sink)>
      read_history;

  // What the agent's sessions share, and its stop at daemon shutdown (AgentRuntime.h); none: nothing to stop.
  std::shared_ptr<AgentRuntime> runtime;
};

}  // namespace switchboard::adapters
