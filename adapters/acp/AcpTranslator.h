#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "acp/AcpControls.h"
#include "common/JsonRpcEndpoint.h"
#include "common/LineStats.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::acp {

// One ACP session's stream in, AdapterListener events out: `session/update` notifications, the agent's
// `session/request_permission` requests, vendor extension notifications (`_x.ai/*` from Grok Build) and the
// answer to our `session/prompt`. Pure: no I/O, no clock. The adapter feeds it what the JSON-RPC endpoint
// delivers and says when a prompt went out; updates naming another ACP session are dropped here, so one
// translator only ever reports its own session. The mapping, and what is dropped on purpose, is in
// docs/agents/acp.md.
//
// A turn is one `session/prompt`: its text messages are opened and closed around tool calls (ACP has no message
// ids, so they are numbered per turn), and the prompt's answer (or its failure) ends it with one on_turn_end.
// The models an ACP agent offers a session, from a session/new or session/load answer or a config_option_update:
// `models.availableModels` where the agent sends it (unstable in ACP v1; Grok Build does), else the choices of
// its config option of category `model`, groups flattened. None: it offers none. With `current_is_default` (a
// session/new answer, before we set any model: what the agent picks for a session that names none) the current
// model is marked default; a loaded session's or an update's current model is that session's, not the default.
std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& session_state, bool current_is_default);

class AcpTranslator {
 public:
  AcpTranslator(AdapterListener& events, std::string log_prefix);

  // The ACP session this translator reports (from session/new or session/load).
  void set_session(std::string acp_session_id) { m_session = std::move(acp_session_id); }
  const std::string& session() const { return m_session; }

  // While a session/load is answered the agent replays the conversation as updates: the engine has its own
  // transcript, so the replay is dropped (counted).
  void set_replaying(bool replaying) { m_replaying = replaying; }

  // The answer to session/new or session/load: the models and the other config options it offers.
  void on_session_opened(const nlohmann::json& result, bool loaded);
  // A list of config options the agent sent (the answer to session/set_config_option, a config_option_update):
  // the models among them, and the others as our options.
  void on_config_options(const nlohmann::json& holder);
  // The options last reported, with the ACP configId behind each of our ids.
  const OfferedOptions& options() const { return m_options; }
  // The model the session runs now (after session/set_model), for the context window usage reports give.
  void set_current_model(std::string model_id) { m_current_model = std::move(model_id); }

  // Commands left out of what on_commands reports (docs/agents/<agent>.md says which, and why).
  void set_hidden_commands(std::vector<std::string> names) { m_hidden_commands = std::move(names); }
  // Whether the agent's last command list (hidden ones included) has a command of that name; nullopt before the
  // agent sent any.
  std::optional<bool> offers_command(std::string_view name) const;
  // The MCP servers the session was opened with, in the state known so far: reported at once, then updated as the
  // agent says (Grok Build's `_x.ai/mcp/server_status`).
  void set_mcp_servers(std::vector<protocol::McpServerState> servers);
  void on_update(const nlohmann::json& params);
  // A notification whose method is not session/update (vendor extensions).
  void on_extension(const std::string& method, const nlohmann::json& params);
  // session/request_permission: reported as a PermissionAsk whose native id is the JSON-RPC id; `reply` is kept
  // until answer_permission() or cancel_turn().
  void on_permission_request(const nlohmann::json& id, const nlohmann::json& params, JsonRpcEndpoint::Reply reply);

  // Our answer to an open permission request: false when none is open under that id (already answered,
  // or withdrawn by a cancel). After a deny, a turn the agent ends `cancelled` ends `end_turn`: nobody cancelled
  // it, and a deny ends a turn the same way for every agent (docs/protocol.md, StopReason).
  bool answer_permission(const std::string& native_id, bool allow);
  // A cancel (after session/cancel went out): every open permission request is answered `cancelled` (what ACP
  // asks of a client that cancels) and withdrawn from the engine, and the turn's answer, whatever stopReason it
  // names, ends it cancelled.
  void cancel_turn();

  void turn_started(std::string turn_id);
  bool turn_running() const { return m_turn_running; }
  // The answer to the turn's session/prompt: its stopReason (and usage), or the error it failed with.
  void on_prompt_answer(const JsonRpcEndpoint::Outcome& outcome);
  // The turn could not be sent or the agent went away: it ends now, as an error.
  void turn_failed(const std::string& why);

  const LineStats& stats() const { return m_lines.stats(); }

 private:
  struct ToolCall {
    bool started = false;
    bool done = false;
    std::string tool;
    std::size_t output_sent = 0;  // bytes of the running output already reported
  };
  struct OpenPermission {
    nlohmann::json options;
    JsonRpcEndpoint::Reply reply;
  };

  bool is_ours(const nlohmann::json& params);
  void on_text_chunk(const nlohmann::json& update, protocol::DeltaKind kind);
  void on_tool_call(const nlohmann::json& update);
  void on_plan(const nlohmann::json& update);
  void on_usage_update(const nlohmann::json& update);
  void on_commands_update(const nlohmann::json& update);
  void on_model_usage(const nlohmann::json& usage);
  void on_mcp_server_status(const nlohmann::json& params);
  void report_usage();
  void on_vendor_update(const nlohmann::json& update);
  void close_message();
  void end_turn(protocol::StopReason reason, std::optional<std::string> error);

  AdapterListener& m_events;
  LineLog m_lines;
  std::string m_session;
  bool m_replaying = false;
  bool m_turn_running = false;
  bool m_cancel_sent = false;  // this turn was cancelled: its answer ends it cancelled
  bool m_denied = false;       // a permission of this turn was denied
  std::string m_turn_id;
  // The message being streamed: its id, kind and text so far (reported whole when it closes).
  std::optional<std::string> m_message_id;
  protocol::DeltaKind m_message_kind = protocol::DeltaKind::Text;
  std::string m_message_text;
  std::uint64_t m_messages = 0;  // of this turn, for ids
  std::string m_last_text;  // the turn's last text message: its answer
  std::map<std::string, ToolCall> m_tools;  // by toolCallId
  std::map<std::string, OpenPermission> m_permissions;  // by native id (the JSON-RPC id, dumped)
  std::optional<std::string> m_turn_error;  // a vendor notification said why the turn failed
  std::optional<double> m_cost_usd;
  // What was reported last, so that the agent's repeats (Grok Build re-sends its commands and plan after every
  // model response) are not news.
  std::optional<std::string> m_last_plan;
  std::optional<std::string> m_last_commands;
  std::vector<std::string> m_hidden_commands;
  std::optional<std::vector<std::string>> m_offered_command_names;  // the agent's last list, hidden ones included
  OfferedOptions m_options;
  std::vector<protocol::McpServerState> m_mcp;
  // Context usage: from ACP's usage_update where the agent sends it; else from each model response's usage in
  // Grok Build's `response_completed`, with the window of the session's model (its models' totalContextTokens).
  bool m_standard_usage = false;
  protocol::ContextUsage m_usage;
  std::string m_current_model;
  std::map<std::string, std::int64_t> m_model_windows;
};

}  // namespace switchboard::adapters::acp
