#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeContent.h"
#include "claude-code/ClaudeControl.h"
#include "claude-code/ClaudePlan.h"
#include "claude-code/ClaudeStreamDelta.h"
#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::claude {

// What happened to the lines fed so far (common/LineStats.h).
using TranslatorStats = LineStats;

// Turns Claude Code's stdout (`-p --output-format stream-json --verbose --include-partial-messages
// --permission-prompt-tool stdio`) into normalized events, one line at a time. docs/agents/claude-code.md has the
// table of every native type and what it becomes.
//
// One translator per CLI process: it remembers what the stream has said so far (the message being streamed and
// its blocks, the open can_use_tool requests, the control requests the adapter sent, the process's cumulative
// cost). It does no I/O: normalized events go to `events`, adapter-only facts to `control`, and the adapter writes
// whatever answers are needed. Nothing it is fed makes it throw; bad lines are counted, logged and skipped.
//
// Re-entrancy: the translator finishes its bookkeeping before each callback, so a listener may call
// take_tool_request() or expect_control_response() from inside one. The engine does exactly that when a
// remembered rule or the headless policy answers a permission request at once.
class ClaudeTranslator {
 public:
  ClaudeTranslator(AdapterListener& events, ClaudeControlSink& control);

  // One line of the CLI's stdout, without its newline. Streamed text and thinking deltas take a fast path
  // (StreamDeltaReader) that gives the same events as the general one; set_fast_deltas(false) turns it off, so
  // tests can show that.
  void feed_line(std::string_view line);
  void set_fast_deltas(bool enabled) { m_fast_deltas = enabled; }
  // One parsed line.
  void feed(const nlohmann::json& message);

  // The adapter wrote a control request with this id; its control_response is matched to it. An interrupt also
  // tells the translator that the turn's error_during_execution result means "cancelled", not "failed".
  void expect_control_response(std::string request_id, ControlRequestKind kind);

  // The open can_use_tool request with this id, which is forgotten: each is answered once. None when the id is
  // unknown, already answered, withdrawn by the CLI, or its turn has ended.
  std::optional<ToolRequest> take_tool_request(const std::string& request_id);

  const TranslatorStats& stats() const { return m_lines.stats(); }
  // The last system/init, if any.
  const std::optional<ClaudeInit>& init() const { return m_init; }
  const std::string& permission_mode() const { return m_permission_mode; }
  // The uuid of the last message of the main conversation (an assistant or user line outside sub-agents): what
  // --resume-session-at takes to keep the conversation up to here. Empty before the first.
  const std::string& last_message_uuid() const { return m_last_message_uuid; }
  // The model's context window, when the adapter learnt it another way (get_context_usage); later usage
  // updates carry it. A turn's result (modelUsage.contextWindow) replaces it.
  void set_context_window(std::int64_t tokens) { m_context_window = tokens; }
  const std::optional<std::int64_t>& context_window() const { return m_context_window; }

 private:
  // The message a stream_event sequence is building. Sub-agents stream under their own parent tool call, so
  // there is one per parent ("" for the main agent).
  struct StreamedMessage {
    std::string native_id;
    std::map<std::int64_t, protocol::DeltaKind> text_blocks;  // index → kind, for text and thinking blocks only
  };

  void on_system(const nlohmann::json& message);
  void on_stream_event(const nlohmann::json& message);
  // A delta the fast path read; false when the general path must read the line (it then reports what is wrong).
  bool on_fast_delta(StreamDelta& delta);
  void on_assistant(const nlohmann::json& message);
  void on_user(const nlohmann::json& message);
  void on_result(const nlohmann::json& message);
  void on_control_request(const nlohmann::json& message);
  void on_control_response(const nlohmann::json& message);
  void on_control_cancel(const nlohmann::json& message);
  // Context usage as of the model request an assistant line answers (once per API message).
  void report_context(const nlohmann::json& body);
  // Context usage at the end of a turn: the window and the process's cost and token totals (modelUsage).
  void report_turn_usage(const nlohmann::json& result);
  void remember_uuid(const nlohmann::json& message);

  void report_status(AgentStatus status);
  void clear_status();
  void end_of_turn();
  void malformed(std::string_view why, const nlohmann::json& message) { m_lines.malformed(why, message); }
  void unknown(std::string_view what) { m_lines.unknown(what); }

  AdapterListener& m_events;
  ClaudeControlSink& m_control;
  LineLog m_lines{"claude"};
  StreamDeltaReader m_delta_reader;
  bool m_fast_deltas = true;

  std::optional<ClaudeInit> m_init;
  std::string m_provider_session_id;
  std::string m_permission_mode;

  std::map<std::string, StreamedMessage> m_streams;
  BlockNumbering m_numbering;
  std::map<std::string, ToolRequest> m_tool_requests;
  std::map<std::string, ControlRequestKind> m_sent_requests;

  bool m_turn_active = false;          // something of a turn was seen since the last result
  bool m_interrupt_requested = false;  // since the last result
  bool m_status_raised = false;        // a retrying/compacting status is showing and needs clearing
  double m_cost_reported_usd = 0;      // total_cost_usd of the last result (the CLI reports a process total)

  ClaudePlan m_plan;
  std::optional<std::int64_t> m_context_window;
  std::optional<protocol::ContextUsage> m_context;  // the last usage reported
  std::string m_context_message_id;                 // the API message it was read from
  std::string m_last_message_uuid;
};

}  // namespace switchboard::adapters::claude
