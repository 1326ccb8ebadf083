#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/JsonRpcEndpoint.h"
#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::codex {

// What happened to the messages fed so far (common/LineStats.h); the endpoint counts the lines that are not
// messages at all.
using TranslatorStats = LineStats;

// Turns what `codex app-server` says over its JSON-RPC (notifications, its requests, the answers to ours) into
// normalized events. docs/agents/codex.md has the table of every native message and what it becomes.
//
// One translator per app-server process, fed by the process's JsonRpcEndpoint (handlers()), which owns the ids:
// the adapter hands the answers to its thread and turn requests on (on_thread_opened, on_turn_start_answer). It
// remembers what the stream has said so far: the thread, the running turn and what it produced (last answer,
// usage), the items started and not completed, and the open approval requests with their replies. It does no
// I/O: normalized events go to `events`, and a request it cannot serve is refused through its Reply. Nothing it
// is fed makes it throw; bad messages are counted, logged and skipped.
//
// Re-entrancy: the translator finishes its bookkeeping before each callback, so a listener may call
// take_approval() or turn_requested() from inside one (the engine answers a permission at once when a
// remembered rule or the headless policy decides).
class CodexTranslator {
 public:
  explicit CodexTranslator(AdapterListener& events);

  // The endpoint's handlers: Codex's notifications and requests come here.
  JsonRpcEndpoint::Handlers handlers();

  // The adapter is sending a turn/start: whatever happens, the translator reports exactly one on_turn_end() for
  // it (a refused turn/start ends it with an error; an agent that goes away is the adapter's to report).
  void turn_requested();
  void on_turn_start_answer(const JsonRpcEndpoint::Outcome& outcome);
  // The result of thread/start, thread/resume or thread/fork: its thread is the provider session from now on.
  void on_thread_opened(const nlohmann::json& result);
  // The MCP servers the thread was opened with: reported pending now, then as Codex reports each one's startup.
  void watch_mcp_servers(const std::vector<protocol::McpServer>& servers);
  // Called when Codex says its skills changed (skills/changed), so that the adapter lists them again.
  void on_skills_changed(std::function<void()> callback) { m_skills_changed = std::move(callback); }
  // The adapter sent thread/compact/start: Codex runs the compaction as a turn of its own, the next turn it starts
  // on this thread outside the session's turns. Only that turn's end calls `on_compaction_completed`'s callback;
  // any other turn ending meanwhile (a sub-agent's, one that ended already) does not.
  void compaction_requested();
  void on_compaction_completed(std::function<void()> callback) { m_compaction_completed = std::move(callback); }

  // The reply to the open approval request with this native id, which is forgotten: each is answered once. None
  // when the id is unknown, already answered, resolved by Codex meanwhile (serverRequest/resolved), or its turn
  // has ended.
  std::optional<JsonRpcEndpoint::Reply> take_approval(const std::string& native_id);

  const TranslatorStats& stats() const { return m_lines.stats(); }
  const std::string& thread_id() const { return m_thread_id; }
  // The running turn's id (from turn/start's response or turn/started); empty between turns.
  const std::string& turn_id() const { return m_turn_id; }
  bool turn_active() const { return m_turn_active; }

 private:
  void on_notification(const std::string& method, const nlohmann::json& params);
  void on_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params, JsonRpcEndpoint::Reply reply);

  void on_item_started(const nlohmann::json& item);
  void on_item_completed(const nlohmann::json& item);
  void start_tool(const std::string& id, std::string tool, nlohmann::json input);
  void complete_tool(const nlohmann::json& item, const std::string& id, std::string output, bool is_error);
  void on_turn_completed(const nlohmann::json& params);
  void on_error_notification(const nlohmann::json& params);
  void on_plan_updated(const nlohmann::json& params);
  void on_token_usage(const nlohmann::json& params);
  void on_mcp_startup(const nlohmann::json& params);

  void clear_status();
  void end_turn(TurnResult result);
  void malformed(std::string_view why, const nlohmann::json& message) { m_lines.malformed(why, message); }
  void unknown(std::string_view what) { m_lines.unknown(what); }

  AdapterListener& m_events;
  LineLog m_lines{"codex"};

  std::string m_thread_id;
  std::map<std::string, JsonRpcEndpoint::Reply> m_approvals;  // by native id
  std::map<std::string, nlohmann::json> m_file_changes;  // fileChange item id → its changes (for the approval)
  std::set<std::string> m_open_tools;                   // tool items started and not completed
  std::vector<protocol::McpServerState> m_mcp_servers;  // the thread's MCP servers, as last reported
  std::function<void()> m_skills_changed;
  std::function<void()> m_compaction_completed;
  bool m_compaction_requested = false;
  std::string m_compaction_turn_id;  // the compaction's turn, once Codex has started it

  // The running turn.
  bool m_turn_active = false;
  std::string m_turn_id;
  std::string m_last_text;
  std::optional<protocol::Usage> m_usage;
  std::optional<std::string> m_last_error;  // the message of a non-retried `error` notification
  bool m_status_raised = false;  // a retrying status is showing and needs clearing
};

}  // namespace switchboard::adapters::codex
