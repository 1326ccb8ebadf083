#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "codex/CodexLaunch.h"
#include "codex/CodexMessages.h"
#include "codex/CodexTranslator.h"
#include "common/CliProcess.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/adapters/ForwardingListener.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::codex {

// How the daemon runs Codex. Shared by every session's adapter.
struct CodexConfig {
  std::string executable = "codex";               // a path, or a name looked up on PATH
  std::optional<ProviderEndpoint> endpoint;       // none: the user's own Codex configuration decides
  std::string client_version = "0";               // sent as clientInfo.version
  CliTimeouts timeouts;                            // start: spawn → thread started or resumed
};

// The plumbing half of the Codex adapter: one `codex app-server` process per live session, driven through the
// kit's CliProcess; every stdout line goes to the pure CodexTranslator, which reports to the engine. This class
// talks JSON-RPC over the process's stdio through the kit's JsonRpcEndpoint (our requests and their answers,
// Codex's approval requests and our replies), runs the start-up handshake (initialize, initialized, thread/start
// or thread/resume), keeps the turn's bookkeeping (the turn id for interrupts, the cancel deadline) and turns the
// process's life into start/stop results.
class CodexAdapter final : public AgentAdapter {
 public:
  CodexAdapter(boost::asio::io_context& io, AdapterListener& listener, CodexConfig config);
  ~CodexAdapter() override;

  static protocol::AgentCapabilities static_capabilities();
  static std::vector<std::string> static_modes() { return codex_modes(); }

  protocol::AgentCapabilities capabilities() const override { return static_capabilities(); }
  void start(const StartOptions& options, Completion done) override;
  void send(TurnInput input) override;
  void cancel() override;
  void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) override;
  // Unsupported: Codex asks no questions through this adapter.
  void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) override;
  // Both complete at once: Codex takes the model and the policy with the next turn/start.
  void set_model(const std::string& model, Completion done) override;
  void set_mode(const std::string& mode, Completion done) override;
  // `effort` (Codex's reasoning effort): sent with the next turn/start, and kept by the thread from then on.
  void set_option(const std::string& option_id, const std::string& value, Completion done) override;
  // thread/revert: Codex drops the turn and every later one from the thread's history (not the files they changed).
  void rewind(const std::string& native_turn_ref, Completion done) override;
  // thread/compact/start: Codex summarizes the thread in a turn of its own; done once that turn has ended, so that
  // the next prompt is not taken as input to it.
  void compact(Completion done) override;
  void stop() override;

 private:
  // Forwards the translator's events to the engine, noticing the end of each turn on the way.
  class TurnWatch;

  void on_initialized(const JsonRpcEndpoint::Outcome& outcome);
  // `what` names the request in a refusal: "start a thread", "resume the thread", "fork the thread".
  void open_thread(const std::string& method, nlohmann::json params, std::string what);
  void on_thread_answer(const JsonRpcEndpoint::Outcome& outcome, const std::string& method, const std::string& what);
  void send_interrupt();
  // skills/list for the thread's directory, reported as the session's commands.
  void list_skills();
  // The `effort` option, once both the model list and the thread are known (and again after every change).
  void report_options();
  // Asks Codex something about the open thread; `done` completes with Codex's refusal, if any, as `refused`.
  void thread_request(const std::string& method, nlohmann::json params, const std::string& what, protocol::ErrorCode refused,
                      Completion done);
  void fail_start(const std::string& why, protocol::ErrorCode code = protocol::ErrorCode::AgentUnavailable);
  void on_process_exit(const std::string& reason);
  void turn_ended(protocol::StopReason reason);
  // SIGKILLs the commands Codex is running for this thread (cancel and stop); returns how many.
  std::size_t kill_thread_commands();

  AdapterListener& m_listener;
  CodexConfig m_config;
  std::unique_ptr<TurnWatch> m_watch;
  std::unique_ptr<CodexTranslator> m_translator;
  JsonRpcEndpoint m_rpc;  // over m_cli's stdio; declared first, so the process goes before it
  CliProcess m_cli;
  ThreadOptions m_thread;                          // cwd, policy and model the thread was opened with
  std::optional<std::string> m_resume_thread_id;
  bool m_fork = false;  // StartOptions::fork: open a fork of m_resume_thread_id rather than the thread itself
  std::optional<std::string> m_fork_through;       // StartOptions::fork_through_turn_ref: the fork's last turn
  std::optional<ThreadPolicy> m_pending_policy;    // a mode change, sent with the next turn/start
  std::optional<std::string> m_pending_model;      // a model change, sent with the next turn/start
  std::optional<std::string> m_pending_effort;     // an effort change, sent with the next turn/start
  std::string m_effort;                            // the effort in force (empty: the model's default)
  std::optional<nlohmann::json> m_model_list;      // model/list's answer, for the efforts each model takes
  bool m_model_list_done = false;                  // model/list answered (or refused)
  std::map<std::string, std::string> m_skill_paths;  // offered skill name → its SKILL.md
  Completion m_compacting;                         // compact()'s, until Codex's compaction turn ends
  bool m_turn_running = false;
  bool m_interrupt_wanted = false;  // cancel() before the turn's id was known
  bool m_cancel_requested = false;  // cancel() during the running turn
  bool m_stopped_reported = false;
};

// Codex's keys (agents.codex.*), for the setting table (adapters/BuiltinAgents.h).
std::span<const config::AgentSettingSpec> codex_settings();
// The configuration those keys give: a provider endpoint only when agents.codex.provider.base_url is set; what
// they leave unset keeps CodexConfig's and ProviderEndpoint's defaults.
CodexConfig codex_config(const config::AgentSettings& settings);

// The descriptor the engine registers under "codex": discovery probes `codex --version` once, in the
// background, and caches what it found.
AgentDescriptor codex_agent(boost::asio::io_context& io, CodexConfig config);

}  // namespace switchboard::adapters::codex
