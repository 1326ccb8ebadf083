#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/ErrorCodes.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters {

// The one interface every agent implements, whatever its native protocol: a duplex NDJSON CLI (Claude Code),
// a JSON-RPC app server (Codex), an HTTP+SSE server hosting many sessions (OpenCode), an ACP agent over stdio
// (Grok Build), a JSON-lines RPC CLI (Pi). The engine drives one AgentAdapter per live session and hears from it
// through AdapterListener, on the io_context thread.
//
// Contract for every adapter (the shared conformance tests check it):
// - after send(), the adapter reports the turn's activity and then exactly one on_turn_end();
// - cancel() ends the running turn with on_turn_end(Cancelled) and leaves the adapter usable;
// - a permission or question asked through the listener blocks the turn until answer_*() is called, or until
//   the adapter withdraws it (on_request_withdrawn);
// - every operation that takes a `Completion` calls it exactly once, on the io_context thread, possibly before
//   the call returns: nullopt when done, else a typed AdapterError. An operation the agent cannot do completes
//   with code Unsupported, never a silent no-op. A completion still pending when the agent becomes unavailable
//   completes with AgentUnavailable before on_unavailable(). An adapter destroyed with a completion pending may
//   drop it (the engine answers its caller itself);
// - if the agent becomes unavailable to this session for good (its process died, its server went away, the
//   connection to it was lost, or stop() finished), on_unavailable() is called once, after an on_turn_end(Error)
//   for a turn that was running. The adapter is not used again; the engine makes a new one to start over;
// - listener calls never re-enter the adapter's own state in a way it cannot take: the engine may call cancel(),
//   answer_*() or send() from inside a listener call (e.g. the next queued prompt from on_turn_end).

struct AdapterError {
  protocol::ErrorCode code;
  std::string message;
};

// How an asynchronous operation ends: nullopt when done, or why not.
using Completion = std::function<void(std::optional<AdapterError>)>;

struct StartOptions {
  std::string session_id;  // ours, stable
  std::string cwd;
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> resume_provider_session_id;  // resume the agent's own session
  // With resume_provider_session_id: continue a copy of that conversation, made with the agent's own fork, and
  // leave the conversation itself to whoever else continues it (another session of ours holds it: two sessions
  // never drive one conversation). The copy's id is reported with on_provider_session. The engine asks it only of
  // an agent whose capabilities say `fork`.
  bool fork = false;
  // Whether some client shows text as it is written (EngineConfig::stream_text). When false an adapter may ask
  // its agent for whole messages only, and report no TextDelta; MessageCompleted carries the text either way.
  bool stream_text = true;
  // With fork: the copy keeps the conversation only up to and including the turn this reference names (a
  // TurnResult::native_turn_ref this agent reported); unset: all of it.
  std::optional<std::string> fork_through_turn_ref{};
  // The MCP servers the session was created with (only for an agent whose capabilities say `mcp`). The adapter
  // hands them to its agent in the agent's own form; their processes must end with the session.
  std::vector<protocol::McpServer> mcp_servers{};
  // Options set (session.setOption) before the agent reported its options: id → value, applied at start.
  std::vector<std::pair<std::string, std::string>> options{};
};

// A prompt that names one of the commands the agent offers (`/name arguments`, name in the last CommandsOffered):
// the engine passes it parsed, so the adapter runs it with the agent's own mechanism instead of sending text.
struct SlashCommand {
  std::string name;       // without the slash
  std::string arguments;  // the rest of the line and any further lines, trimmed; may be empty
};

struct TurnInput {
  std::string turn_id;
  std::string text;
  std::vector<protocol::Attachment> attachments;
  std::optional<std::string> model;  // already resolved by the engine (override → configuration → pin)
  std::optional<SlashCommand> command{};  // set: `text` is `/name arguments` naming an offered command
};

// ---- What an adapter reports: one payload struct per event ------------------------------------------------------
// A new field goes into its struct (with a default), so listeners that do not use it need no change.
//
// `parent_tool_call_id`, wherever it appears, nests activity inside a tool call: a message written, or a tool
// called, by a sub-agent that a tool call of the main agent runs (Claude Code's Task, Codex's and OpenCode's
// sub-agent tools, ...). It names that outer tool call; unset for the agent's own top-level activity. It is not
// an agent's own notion: each adapter maps its native nesting onto it.

// The agent's own id for the conversation (what StartOptions::resume_provider_session_id takes later).
struct ProviderSession {
  std::string provider_session_id;
};

// A streamed piece of a message still being written.
struct TextDelta {
  std::string message_id;
  protocol::DeltaKind kind = protocol::DeltaKind::Text;
  std::string text;
  std::optional<std::string> parent_tool_call_id;
};

// A whole message, once written (after its deltas, if it had any).
struct MessageCompleted {
  std::string message_id;
  protocol::DeltaKind kind = protocol::DeltaKind::Text;
  std::string text;
  std::optional<std::string> parent_tool_call_id;
};

struct ToolStarted {
  std::string tool_call_id;
  std::string tool;
  nlohmann::json input = nlohmann::json::object();
  std::optional<std::string> parent_tool_call_id;
  // The files the call changes, as the adapter reads them from the agent's tool input (common/FileDiffs.h):
  // clients show a diff from these, knowing no agent's tool names or input shapes. Empty for other tools.
  std::vector<protocol::FileDiff> diffs{};
};

// A streamed piece of a running tool's output (a shell command's stdout/stderr as it comes), before the tool's
// ToolCompleted, which carries the whole output again. Agents that report output only at the end never send it.
struct ToolOutput {
  std::string tool_call_id;
  std::string text;
};

struct ToolCompleted {
  std::string tool_call_id;
  std::string output;
  bool is_error = false;
};

// The agent asks whether it may use a tool. `native_id` is the adapter's own handle for the request; the engine
// answers with it.
struct PermissionAsk {
  std::string native_id;
  std::string tool;
  nlohmann::json input = nlohmann::json::object();
  std::string description;
  // What a rule pattern is matched against: the command line for a shell tool, the path for a file tool.
  std::string subject;
  std::optional<protocol::PermissionRule> suggested_rule;
  std::string reason;
};

struct QuestionAsk {
  std::string native_id;
  std::vector<protocol::Question> questions;
};

// The agent no longer waits for the answer to an open permission or question (it withdrew the request, e.g.
// Claude Code's control_cancel_request): the engine resolves it as cancelled for every client and sends no answer.
struct RequestWithdrawn {
  std::string native_id;
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
  // The agent's own handle on this turn in its conversation (Claude Code's prompt uuid, Codex's turn id,
  // OpenCode's user message id, Pi's entry id, ...): the engine stores it with the turn and hands it back to
  // rewind() and StartOptions::fork_through_turn_ref. Opaque above the adapter. Unset: the agent named none, and
  // the turn cannot be a fork or rewind point.
  std::optional<std::string> native_turn_ref{};
};

// The agent's plan or todo list, whole, each time it changes (an empty list: cleared).
struct PlanUpdate {
  std::vector<protocol::PlanEntry> entries;
};

// How full the context is now (and the cost so far), as the agent reports it during a turn.
struct UsageUpdate {
  protocol::ContextUsage usage;
};

// The slash commands and skills the agent offers this session, whole; the latest list replaces the earlier one.
// Commands that only make sense in the agent's own terminal UI are left out by the adapter.
struct CommandsOffered {
  std::vector<protocol::AgentCommand> commands;
};

// The session's options beyond model and mode, whole, with their current values: after start, and after every
// change (set_option, or the agent's own).
struct OptionsOffered {
  std::vector<protocol::SessionOption> options;
};

// The status of every MCP server the session was started with.
struct McpStatusReport {
  std::vector<protocol::McpServerState> servers;
};

// Something went wrong that is not the answer to an operation of ours (those complete their Completion): the
// agent reported an error, wrote something unreadable, or could not be written to. Published as agent.error.
struct AgentErrorReport {
  std::string message;
  bool recoverable = true;
};

// The models the agent offers this session, as it lists them (Claude Code's initialize answer, Codex's
// model/list, an ACP agent's session/new, Pi's get_available_models). Reported whenever the agent tells us; the
// latest list replaces the earlier one. An agent that lists none never reports it.
struct ModelsOffered {
  std::vector<protocol::ModelInfo> models;
};

// The agent is gone for this session (see the contract above). `reason` is for people ("stopped" after stop()).
struct Unavailable {
  std::string reason;
};

// What an adapter reports, in the order it happens. Implemented by the engine's session. Every event is one
// pure virtual taking its payload: a listener says what it does with each, even if that is nothing.
class AdapterListener {
 public:
  virtual ~AdapterListener() = default;
  virtual void on_provider_session(ProviderSession event) = 0;
  virtual void on_delta(TextDelta event) = 0;
  virtual void on_message(MessageCompleted event) = 0;
  virtual void on_tool_started(ToolStarted event) = 0;
  virtual void on_tool_output(ToolOutput event) = 0;
  virtual void on_tool_completed(ToolCompleted event) = 0;
  virtual void on_permission_request(PermissionAsk event) = 0;
  virtual void on_question(QuestionAsk event) = 0;
  virtual void on_request_withdrawn(RequestWithdrawn event) = 0;
  virtual void on_status(AgentStatus event) = 0;
  virtual void on_models(ModelsOffered event) = 0;
  virtual void on_plan(PlanUpdate event) = 0;
  virtual void on_usage(UsageUpdate event) = 0;
  virtual void on_commands(CommandsOffered event) = 0;
  virtual void on_options(OptionsOffered event) = 0;
  virtual void on_mcp_status(McpStatusReport event) = 0;
  virtual void on_turn_end(TurnResult event) = 0;
  virtual void on_error(AgentErrorReport event) = 0;
  virtual void on_unavailable(Unavailable event) = 0;
};

// The engine's answer to a PermissionAsk. The agent runs the tool with the input it asked about.
struct PermissionAnswer {
  bool allow = false;
  std::optional<std::string> message;  // told to the agent with a deny
};

struct QuestionAnswer {
  bool rejected = false;
  std::vector<std::string> answers;  // one per question, in order
};

class AgentAdapter {
 public:
  virtual ~AgentAdapter() = default;

  virtual protocol::AgentCapabilities capabilities() const = 0;
  // Starts or resumes the agent; `done` once it can take a turn, or why it cannot.
  virtual void start(const StartOptions& options, Completion done) = 0;
  virtual void send(TurnInput input) = 0;
  virtual void cancel() = 0;
  // `done` once the agent has the answer (or why it cannot take it: Unsupported for an agent that does not take
  // answers of that kind). An answer for a request the agent no longer waits for completes with nullopt and
  // is not passed on.
  virtual void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) = 0;
  virtual void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) = 0;
  // `done` once the agent has accepted the change (it applies from the next turn at the latest), or why not.
  virtual void set_model(const std::string& model, Completion done) = 0;
  virtual void set_mode(const std::string& mode, Completion done) = 0;
  // One of the options the adapter reported (OptionsOffered); the engine has checked the id and value against
  // that list. `done` once the agent has accepted it (it applies from the next turn); the adapter then reports
  // OptionsOffered with the new current value. Default: Unsupported.
  virtual void set_option(const std::string& option_id, const std::string& value, Completion done);
  // Drops the turn `native_turn_ref` names, and every later one, from the agent's conversation, with the agent's
  // own mechanism: its next model request no longer holds them. Called between turns only. Default: Unsupported.
  virtual void rewind(const std::string& native_turn_ref, Completion done);
  // Asks the agent to summarize its conversation now, between turns; reported through on_status (compacting,
  // then compacted) as when the agent compacts on its own. Default: Unsupported.
  virtual void compact(Completion done);
  // Graceful stop; the adapter calls on_unavailable() when the agent is gone for this session.
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
// through the AdapterListener calls, closed by on_turn_end() (at the next prompt, or at the end). Histories hold
// no deltas, streamed output, requests, statuses, errors or unavailability: those calls do nothing unless a
// sink overrides them.
class HistorySink : public AdapterListener {
 public:
  struct UserPrompt {
    std::string prompt_id;
    std::string text;
    std::string timestamp;  // ISO 8601 as the history recorded it (e.g. "2026-01-02T03:04:05.000Z"), or empty
  };
  virtual void on_user_prompt(UserPrompt event) = 0;

  void on_delta(TextDelta) override {}
  void on_tool_output(ToolOutput) override {}
  void on_permission_request(PermissionAsk) override {}
  void on_question(QuestionAsk) override {}
  void on_request_withdrawn(RequestWithdrawn) override {}
  void on_status(AgentStatus) override {}
  void on_models(ModelsOffered) override {}
  void on_plan(PlanUpdate) override {}
  void on_usage(UsageUpdate) override {}
  void on_commands(CommandsOffered) override {}
  void on_options(OptionsOffered) override {}
  void on_mcp_status(McpStatusReport) override {}
  void on_error(AgentErrorReport) override {}
  void on_unavailable(Unavailable) override {}
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

inline void AgentAdapter::set_option(const std::string&, const std::string&, Completion done) {
  done(AdapterError{protocol::ErrorCode::Unsupported, "this agent has no options"});
}

inline void AgentAdapter::rewind(const std::string&, Completion done) {
  done(AdapterError{protocol::ErrorCode::Unsupported, "this agent cannot rewind its conversation"});
}

inline void AgentAdapter::compact(Completion done) {
  done(AdapterError{protocol::ErrorCode::Unsupported, "this agent cannot compact its conversation on request"});
}

}  // namespace switchboard::adapters
