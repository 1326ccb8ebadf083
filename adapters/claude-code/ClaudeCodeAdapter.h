#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "claude-code/ClaudeAttachments.h"
#include "claude-code/ClaudeControl.h"
#include "claude-code/ClaudeLaunch.h"
#include "claude-code/ClaudeTranslator.h"
#include "common/CliProcess.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/adapters/ForwardingListener.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::claude {

// How the daemon runs Claude Code. Shared by every session's adapter.
struct ClaudeCodeConfig {
  std::string executable = "claude";  // a path, or a name looked up on PATH
  // A stand-in for the CLI (the replay agent, adapters/replay/): its agent name and its own leading arguments.
  std::string agent_name = "claude";
  std::vector<std::string> leading_arguments;
  ProviderEndpoint endpoint;          // unset fields: the user's own configuration decides
  CliTimeouts timeouts;               // start: spawn → initialize answered
  // Reads attachments (blocking file I/O) off the reactor thread.
  std::shared_ptr<boost::asio::thread_pool> file_pool;
};

// The plumbing half of the Claude Code adapter: one long-lived `claude -p` process per live session in duplex
// stream-json mode, driven through the kit's CliProcess; every stdout line goes to the pure ClaudeTranslator, which
// reports to the engine. This class writes to the CLI's stdin (prompts, permission answers, control requests),
// keeps the turn's bookkeeping (cancel deadline), and turns the process's life into start/stop results.
class ClaudeCodeAdapter final : public AgentAdapter, public ClaudeControlSink {
 public:
  ClaudeCodeAdapter(boost::asio::io_context& io, AdapterListener& listener, ClaudeCodeConfig config);
  ~ClaudeCodeAdapter() override;

  static protocol::AgentCapabilities static_capabilities();
  static std::vector<std::string> static_modes();  // Claude Code's permission modes

  protocol::AgentCapabilities capabilities() const override { return static_capabilities(); }
  void start(const StartOptions& options, Completion done) override;
  void send(TurnInput input) override;
  void cancel() override;
  void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) override;
  void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) override;
  // Complete when the CLI answers the control request (a refusal is Unsupported with the CLI's reason).
  void set_model(const std::string& model, Completion done) override;
  void set_mode(const std::string& mode, Completion done) override;
  // `effort`: the CLI's apply_flag_settings; completes with its answer and reports the options again.
  void set_option(const std::string& option_id, const std::string& value, Completion done) override;
  // rewind_conversation for each prompt from the last one back to the one the reference names.
  void rewind(const std::string& native_turn_ref, Completion done) override;
  // `/compact`, as a user types it; completes when its (turn-less) result comes.
  void compact(Completion done) override;
  void stop() override;

  // ClaudeControlSink: what the translator tells the adapter alone.
  void on_init(const ClaudeInit& init) override;
  void on_permission_mode(const std::string& mode) override;
  void on_control_result(const ControlResult& result) override;
  void on_unanswerable_request(const std::string& request_id, const std::string& subtype) override;
  void on_compact_failed(const std::string& error) override;

 private:
  // Forwards the translator's events to the engine, noticing the end of each turn on the way.
  class TurnWatch;
  // A control request whose caller waits for the CLI's answer.
  struct PendingControl {
    Completion done;
    std::optional<std::string> previous_model;  // set_model: what m_model goes back to on a refusal
    // Reads a successful answer's payload; an error it returns is what `done` hears instead of success.
    std::function<std::optional<AdapterError>(const nlohmann::json& response)> accept{};
  };

  void write_line(const nlohmann::json& message);
  std::string next_request_id(const char* what);
  void send_control(const nlohmann::json& request, const std::string& id, ControlRequestKind kind);
  void fail_pending_controls(const std::string& reason);
  void on_process_exit(std::string reason, const std::string& stderr_tail);
  void write_prompt(const std::string& text, const std::vector<PreparedAttachment>& prepared);
  void turn_ended(TurnResult& result);
  void after_initialize();
  void report_mcp_status(const nlohmann::json& response);
  void rewind_from_last(std::vector<std::string> prompts, Completion done);
  void remove_mcp_config_file();
  bool starting() const { return m_cli.starting(); }

  boost::asio::io_context& m_io;
  AdapterListener& m_listener;
  ClaudeCodeConfig m_config;
  std::unique_ptr<TurnWatch> m_watch;
  std::unique_ptr<ClaudeTranslator> m_translator;
  std::map<std::string, PendingControl> m_pending_controls;  // by control request id
  CliProcess m_cli;
  std::optional<std::string> m_model;  // what the CLI runs now, as far as we know
  std::string m_init_request_id;
  std::optional<std::string> m_resume_id;  // the conversation this process was started to continue
  std::string m_start_error;               // what the CLI reported as it failed to start (a result line)
  std::uint64_t m_request_counter = 0;
  bool m_turn_running = false;
  bool m_interrupt_sent = false;  // the running turn was interrupted by us
  bool m_stopped_reported = false;

  std::string m_effort;  // the effort level in force (Claude Code's default until one is set)
  // An option value stored for the session that this CLI does not take: left out of the start and reported once
  // the CLI is up (agent.error, recoverable), with the option shown at its default.
  std::optional<std::string> m_refused_option;
  std::vector<protocol::McpServer> m_mcp_servers;
  std::optional<std::filesystem::path> m_mcp_config_file;  // removed once the CLI has read it
  std::vector<std::pair<std::string, std::string>> m_mcp_seen;  // the states init last listed
  std::string m_prompt_uuid;          // the running (or last) turn's prompt
  std::vector<std::string> m_prompts;  // the conversation's prompts this process knows, oldest first
  Completion m_compact_done;           // a /compact under way
  std::optional<std::string> m_compact_error;  // why it failed, as the CLI said before its result
  // Async work (attachment reads) holds a weak_ptr to this, so an adapter destroyed meanwhile is left alone.
  std::shared_ptr<ClaudeCodeAdapter*> m_self;
};

// Claude Code's keys (agents.claude.*), for the setting table (adapters/BuiltinAgents.h).
std::span<const config::AgentSettingSpec> claude_code_settings();
// The configuration those keys give; what they leave unset keeps ClaudeCodeConfig's defaults.
ClaudeCodeConfig claude_code_config(const config::AgentSettings& settings);

// The descriptor the engine registers under "claude": discovery probes `claude --version` once, in the
// background, and caches what it found.
AgentDescriptor claude_code_agent(boost::asio::io_context& io, ClaudeCodeConfig config);

}  // namespace switchboard::adapters::claude
