#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "codex/CodexProtocol.h"
#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::codex {

// What happened to the lines fed so far (common/LineStats.h).
using TranslatorStats = LineStats;

// Turns `codex app-server`'s stdout (JSON-RPC notifications, server requests and responses, one per line) into
// normalized events. docs/agents/codex.md has the table of every native message and what it becomes.
//
// One translator per app-server process. It remembers what the stream has said so far: the thread, the running
// turn and what it produced (last answer, usage), the items started and not completed, the open approval
// requests and the requests the adapter sent. It does no I/O: normalized events go to `events`, adapter-only
// facts to `control`. Nothing it is fed makes it throw; bad lines are counted, logged and skipped.
//
// Re-entrancy: the translator finishes its bookkeeping before each callback, so a listener may call
// take_approval() or expect_response() from inside one (the engine answers a permission at once when a
// remembered rule or the headless policy decides).
class CodexTranslator {
 public:
  CodexTranslator(AdapterListener& events, CodexControlSink& control);

  // One line of the app-server's stdout, without its newline.
  void feed_line(std::string_view line);
  // One parsed message.
  void feed(const nlohmann::json& message);

  // The adapter wrote a request with this id. A turn/start also opens a turn: whatever happens, the translator
  // reports exactly one on_turn_end() for it (a refused turn/start ends it with an error).
  void expect_response(std::int64_t id, RequestKind kind);

  // The open approval request with this native id, which is forgotten: each is answered once. None when the id
  // is unknown, already answered, resolved by Codex meanwhile (serverRequest/resolved), or its turn has ended.
  std::optional<ApprovalRequest> take_approval(const std::string& native_id);

  const TranslatorStats& stats() const { return m_lines.stats(); }
  const std::string& thread_id() const { return m_thread_id; }
  // The running turn's id (from turn/start's response or turn/started); empty between turns.
  const std::string& turn_id() const { return m_turn_id; }
  bool turn_active() const { return m_turn_active; }

 private:
  void on_response(const nlohmann::json& message, std::int64_t id);
  void on_server_request(const nlohmann::json& message, const std::string& method);
  void on_notification(const nlohmann::json& message, const std::string& method);

  void on_item_started(const nlohmann::json& item);
  void on_item_completed(const nlohmann::json& item);
  void start_tool(const std::string& id, std::string tool, nlohmann::json input);
  void complete_tool(const nlohmann::json& item, const std::string& id, std::string output, bool is_error);
  void on_turn_completed(const nlohmann::json& params);
  void on_error_notification(const nlohmann::json& params);
  void on_plan_updated(const nlohmann::json& params);
  void on_token_usage(const nlohmann::json& params);
  void adopt_thread(const nlohmann::json& result);

  void clear_status();
  void end_turn(TurnResult result);
  void malformed(std::string_view why, const nlohmann::json& message) { m_lines.malformed(why, message); }
  void unknown(std::string_view what) { m_lines.unknown(what); }

  AdapterListener& m_events;
  CodexControlSink& m_control;
  LineLog m_lines{"codex"};

  std::string m_thread_id;
  std::map<std::int64_t, RequestKind> m_sent;
  std::map<std::string, ApprovalRequest> m_approvals;  // by native id
  std::map<std::string, nlohmann::json> m_file_changes;  // fileChange item id → its changes (for the approval)
  std::set<std::string> m_open_tools;                   // tool items started and not completed

  // The running turn.
  bool m_turn_active = false;
  std::string m_turn_id;
  std::string m_last_text;
  std::optional<protocol::Usage> m_usage;
  std::optional<std::string> m_last_error;  // the message of a non-retried `error` notification
  std::uint64_t m_plan_updates = 0;
  bool m_status_raised = false;  // a retrying status is showing and needs clearing
};

}  // namespace switchboard::adapters::codex
