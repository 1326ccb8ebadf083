#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "acp/AcpTranslator.h"
#include "common/ChildEnvironment.h"
#include "common/CliProcess.h"
#include "common/JsonRpcEndpoint.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/adapters/ForwardingListener.h"

namespace switchboard::adapters::acp {

// The modes a session of ours runs an ACP agent in. The agent is configured to ask before every shell command
// and file edit (each agent's own way: docs/agents/acp.md); the mode decides which of those asks the adapter
// answers by itself and which go to the engine.
inline constexpr std::string_view kAskMode = "ask";                   // every command and edit asks (the default)
inline constexpr std::string_view kAcceptEditsMode = "accept-edits";  // edits go through; commands ask
inline constexpr std::string_view kFullAccessMode = "full-access";    // nothing asks

bool is_mode(std::string_view mode);

// What an agent's own launch adds at each start: environment changes, or why it cannot start (a private home
// that could not be written). Runs on the reactor just before the spawn.
using AcpPrepare = std::function<std::variant<EnvironmentChanges, std::string>()>;

// How the daemon runs one ACP agent (Grok Build, or one from the configuration). Shared by its sessions.
struct AcpConfig {
  std::string agent = "acp";                 // the agent's name in agents.list; prefixes logs
  std::string display_name = "ACP agent";    // how messages name it
  std::string executable;                    // a path, or a name looked up on PATH
  std::vector<std::string> arguments;        // after the executable: `agent --no-leader stdio`, `acp`
  EnvironmentChanges environment;            // fixed changes to the daemon's environment
  AcpPrepare prepare;                        // optional: changes made at each start
  nlohmann::json session_meta;               // `_meta` of session/new and session/load; null: none
  std::string client_version = "0";
  CliTimeouts timeouts;
  std::string install_hint;                  // why it may be missing and what to set; empty: the built-ins' hint
  // Commands the agent offers that our clients are not offered (TUI-only ones, or ones that would go around the
  // session's permissions); its doc names them.
  std::vector<std::string> hidden_commands;
  // Variables the agent is given for itself (its provider key) that the MCP servers it starts must not inherit:
  // each stdio server gets them blanked.
  std::vector<std::string> hidden_variables;
  // The agent reports each MCP server's state (Grok Build's `_x.ai/mcp/server_status`): the session's servers
  // are pending until it does. Otherwise ACP says nothing more, and a server the agent took at session/new is
  // reported connected.
  bool reports_mcp_status = false;
  // The agent has a `compact` slash command that summarizes its conversation (Grok Build): capability compact,
  // and compact() sends `/compact` as a prompt between turns. Fixed per agent, since capabilities are known before
  // any agent runs; a generic ACP agent's commands are only known once it runs, so it has none.
  bool compact_command = false;
  // The agent has Grok Build's fork and rewind extensions (`_x.ai/session/fork`, `_x.ai/rewind/*`,
  // XaiSessionControls.h): capabilities fork and rewind, each turn named by its prompt index.
  bool xai_session_controls = false;
};

// One session of ours on an ACP agent: one agent process per session (docs/agents/acp.md says why), driven
// through the kit's CliProcess, JSON-RPC over its stdio through the kit's JsonRpcEndpoint, every message the
// agent sends handed to the pure AcpTranslator. This class runs the handshake (initialize, then session/new or
// session/load), the turn (session/prompt, session/cancel with the cancel deadline), model switching and the
// mode's own answers to permission requests, and turns the process's life into start and stop results.
class AcpAdapter final : public AgentAdapter {
 public:
  AcpAdapter(boost::asio::io_context& io, AdapterListener& listener, AcpConfig config);
  ~AcpAdapter() override;

  static protocol::AgentCapabilities static_capabilities();

  // The static ones, with compact when the configuration says the agent has a `compact` command.
  protocol::AgentCapabilities capabilities() const override;
  void start(const StartOptions& options, Completion done) override;
  void send(TurnInput input) override;
  void cancel() override;
  void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) override;
  // Unsupported: ACP v1 has no questions from the agent.
  void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) override;
  // session/set_model; an agent without it refuses (the error is the agent's).
  void set_model(const std::string& model, Completion done) override;
  // One of the modes above; takes effect for the next permission request.
  void set_mode(const std::string& mode, Completion done) override;
  // session/set_config_option with the ACP configId behind our option id; the answer's options are reported.
  void set_option(const std::string& option_id, const std::string& value, Completion done) override;
  // `/compact` as a session/prompt of its own, between turns, when the agent offers a `compact` command; done
  // once the agent answers it. Unsupported when the agent offers none.
  void compact(Completion done) override;
  // `_x.ai/rewind/execute` (conversation only) for an agent with xai_session_controls; else Unsupported.
  void rewind(const std::string& native_turn_ref, Completion done) override;
  void stop() override;

 private:
  // Between the translator and the engine: asks the mode lets through are answered here, and the end of a turn
  // clears the adapter's bookkeeping before the engine hears it.
  class ModeFilter;

  JsonRpcEndpoint::Handlers rpc_handlers();
  void on_initialized(const JsonRpcEndpoint::Outcome& outcome);
  void open_session(nlohmann::json params);
  void on_forked(const JsonRpcEndpoint::Outcome& outcome, nlohmann::json params);
  void on_session_opened(const JsonRpcEndpoint::Outcome& outcome, bool loaded);
  void continue_start();
  // xai_session_controls: asks the agent for its rewind points and keeps the last index (unknown when it cannot
  // say), then `then`.
  void sync_prompt_points(std::function<void()> then);
  // xai_session_controls: the turn that just ended is named by the prompt point it added, if it added one.
  void name_turn(TurnResult result, std::function<void(TurnResult)> forward);
  void apply_start_options(std::size_t next);
  void finish_start();
  void send_prompt(TurnInput input);
  void fail_start(const std::string& why, protocol::ErrorCode code = protocol::ErrorCode::AgentUnavailable);
  void on_process_exit(const std::string& reason);
  void turn_ended();

  AdapterListener& m_listener;
  AcpConfig m_config;
  std::unique_ptr<ModeFilter> m_filter;
  AcpTranslator m_translator;
  JsonRpcEndpoint m_rpc;  // over m_cli's stdio; declared first, so the process goes before it
  CliProcess m_cli;
  std::string m_cwd;
  std::string m_mode{kAskMode};
  std::optional<std::string> m_model;             // the model the agent's session runs, as we set it
  std::optional<std::string> m_resume_session_id;
  bool m_fork = false;                            // start: continue a copy of m_resume_session_id (xai fork)
  std::optional<std::string> m_fork_through_ref;  // ... through this turn
  // xai_session_controls: the highest prompt index of the open session's conversation (-1: none yet), as far as
  // the adapter knows; unknown after the agent could not say, and then turns are named by none.
  std::optional<std::int64_t> m_last_prompt_index;
  std::vector<protocol::McpServer> m_mcp_servers;  // the session's, handed over at session/new or session/load
  std::vector<std::pair<std::string, std::string>> m_start_options;  // set before start: applied once it is open
  bool m_can_load = false;                        // agentCapabilities.loadSession
  bool m_http_mcp = false;                        // agentCapabilities.mcpCapabilities.http
  bool m_stopped_reported = false;
  // A compact() is under way: the agent's own compaction statuses are passed on once each, and what it did not
  // report is reported when the answer comes.
  bool m_compacting = false;
  bool m_compacting_reported = false;
  bool m_compacted_reported = false;
  std::shared_ptr<AcpAdapter*> m_self;            // answers in flight hold a weak_ptr to it
};

// The first version number ("1.2.3", "1.0.41") in a `--version` output, whatever words surround it.
std::optional<std::string> first_version_in(std::string_view output);

// The descriptor of an ACP agent: its runtime probes `<executable> --version`, and each session gets an
// AcpAdapter running what discovery found.
AgentDescriptor acp_agent(boost::asio::io_context& io, AcpConfig config);

}  // namespace switchboard::adapters::acp
