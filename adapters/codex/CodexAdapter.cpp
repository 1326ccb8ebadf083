#include "codex/CodexAdapter.h"

#include <signal.h>

#include <spdlog/spdlog.h>

#include "common/EnvironmentVariable.h"
#include "common/NativeJson.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/GroupMembers.h"

namespace switchboard::adapters::codex {
namespace {

using protocol::ErrorCode;

// Codex 0.171.0's answer to thread/resume of a thread another process has open: "thread <id> already has an
// active writer" (-32600).
bool is_open_elsewhere(const std::string& error) { return error.find("active writer") != std::string::npos; }

// Codex 0.171.0's answer to thread/resume of a thread it has no rollout file for (deleted, or never written):
// "no rollout found for thread id <id>" (-32600); to thread/fork of one: "invalid paginated history lineage for
// <id>: missing source rollout". The conversation is gone; the engine continues the session in a fresh thread
// seeded with what it stored.
bool is_missing_thread(const std::string& error) {
  return error.find("no rollout found") != std::string::npos || error.find("missing source rollout") != std::string::npos;
}

}  // namespace

// Everything the translator reports goes to the engine unchanged; the end of a turn also clears the adapter's
// turn bookkeeping first, so an engine that starts the next turn from on_turn_end finds the adapter ready.
class CodexAdapter::TurnWatch : public ForwardingListener {
 public:
  TurnWatch(CodexAdapter& adapter, AdapterListener& engine) : ForwardingListener(engine), m_adapter(adapter) {}

  void on_turn_end(TurnResult result) override {
    m_adapter.turn_ended(result.stop_reason);
    ForwardingListener::on_turn_end(std::move(result));
  }

 private:
  CodexAdapter& m_adapter;
};

CodexAdapter::CodexAdapter(boost::asio::io_context& io, AdapterListener& listener, CodexConfig config)
    : m_listener(listener),
      m_config(std::move(config)),
      m_watch(std::make_unique<TurnWatch>(*this, listener)),
      m_translator(std::make_unique<CodexTranslator>(*m_watch)),
      m_rpc([this](std::string line) { return m_cli.write_encoded(std::move(line)); }, m_translator->handlers(), kRpcOptions),
      m_cli(io, CliIdentity{"Codex", "codex"}, m_config.timeouts,
            {[this](std::string_view line) { m_rpc.feed_line(line); },
             [this](AgentErrorReport error) { m_listener.on_error(std::move(error)); },
             [this](const std::string& reason, const std::string&) { on_process_exit(reason); }}) {
  m_translator->on_skills_changed([this] {
    if (m_cli.running() && !m_translator->thread_id().empty()) list_skills();
  });
  m_translator->on_compaction_completed([this] {
    if (auto done = std::exchange(m_compacting, nullptr)) done(std::nullopt);
  });
}

// The CliProcess kills the process group if it still runs: an adapter never leaves a CLI behind.
CodexAdapter::~CodexAdapter() = default;

protocol::AgentCapabilities CodexAdapter::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.questions = false;
  capabilities.resume = true;
  capabilities.history_list = true;
  capabilities.history_read = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  capabilities.images = true;
  capabilities.fork = true;
  capabilities.plans = true;
  capabilities.context_usage = true;
  capabilities.commands = true;
  capabilities.options = true;
  capabilities.mcp = true;
  capabilities.rewind = true;
  capabilities.compact = true;
  return capabilities;
}

void CodexAdapter::start(const StartOptions& options, Completion done) {
  const std::string mode = options.mode.value_or(std::string(kDefaultMode));
  const auto policy = policy_for_mode(mode);
  if (!policy) return done(AdapterError{ErrorCode::Unsupported, "Codex has no mode '" + mode + "' (read-only, auto, untrusted, full-access)"});
  if (m_config.endpoint) {
    // A few hundred bytes, once per process start: not worth a trip off the reactor.
    if (auto refused = write_private_home(*m_config.endpoint, environment_variable("HOME"), environment_variable("CODEX_HOME"))) {
      return done(AdapterError{ErrorCode::AgentUnavailable, "Codex could not be configured: " + *refused});
    }
  }
  m_thread.cwd = options.cwd;
  m_thread.policy = *policy;
  m_thread.model = options.model;
  m_thread.mcp_servers = options.mcp_servers;
  m_resume_thread_id = options.resume_provider_session_id;
  m_fork = options.fork && m_resume_thread_id.has_value();
  m_fork_through = m_fork ? options.fork_through_turn_ref : std::nullopt;
  for (const auto& [id, value] : options.options) {
    // Set before Codex said what it offers: the first turn/start carries it, as after set_option.
    if (id == kEffortOption) m_effort = value, m_pending_effort = value;
  }

  if (auto failed = m_cli.spawn(CliLaunch{command_line(m_config.executable), options.cwd, environment_with(environment_for(m_config.endpoint)),
                                          "codex[" + options.session_id + "]"})) {
    return done(*failed);
  }
  // Usable once the thread is open: initialize → initialized → thread/start or thread/resume.
  m_cli.begin_start(std::move(done));
  m_rpc.request("initialize", initialize_params("switchboard", m_config.client_version),
                [this](JsonRpcEndpoint::Outcome outcome) { on_initialized(outcome); });
}

void CodexAdapter::on_initialized(const JsonRpcEndpoint::Outcome& outcome) {
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) return fail_start("Codex refused to initialize: " + error->message);
  m_rpc.notify("initialized", nlohmann::json::object());
  // The model list does not hold up the start: it reaches the engine when Codex answers, or never.
  m_rpc.request("model/list", model_list_params(), [this](JsonRpcEndpoint::Outcome listed) {
    m_model_list_done = true;
    if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&listed)) return spdlog::debug("codex: model/list refused: {}", error->message);
    m_model_list = std::get<nlohmann::json>(listed);
    if (auto models = offered_models(*m_model_list); !models.empty()) m_watch->on_models(ModelsOffered{std::move(models)});
    report_options();
  });
  // Codex reports each server's startup as the thread opens, possibly before it answers.
  m_translator->watch_mcp_servers(m_thread.mcp_servers);
  if (m_fork) return open_thread("thread/fork", fork_thread_params(*m_resume_thread_id, m_thread, m_fork_through), "fork the thread");
  if (m_resume_thread_id) return open_thread("thread/resume", reopen_thread_params(*m_resume_thread_id, m_thread), "resume the thread");
  open_thread("thread/start", thread_params(m_thread), "start a thread");
}

void CodexAdapter::open_thread(const std::string& method, nlohmann::json params, std::string what) {
  m_rpc.request(method, std::move(params), [this, method, what = std::move(what)](JsonRpcEndpoint::Outcome outcome) {
    on_thread_answer(outcome, method, what);
  });
}

void CodexAdapter::on_thread_answer(const JsonRpcEndpoint::Outcome& outcome, const std::string& method, const std::string& what) {
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) {
    const bool resume = method == "thread/resume";
    // Not once the process is gone (close()): its exit reason may quote the same words, and a fork would fail too.
    if (resume && !m_rpc.closed() && is_open_elsewhere(error->message)) {
      // Codex lets one process write a thread: another session of ours, or the user's own Codex, has it
      // open. A fork carries the whole conversation and is ours alone; the engine hears its id as the
      // session's provider session from now on.
      spdlog::info("codex: thread {} is open in another process ({}); continuing in a fork of it", *m_resume_thread_id, error->message);
      return open_thread("thread/fork", reopen_thread_params(*m_resume_thread_id, m_thread), "fork the thread");
    }
    const bool lost = (resume || method == "thread/fork") && is_missing_thread(error->message);
    return fail_start("Codex could not " + what + ": " + error->message, lost ? ErrorCode::ConversationLost : ErrorCode::AgentUnavailable);
  }
  const auto& opened = std::get<nlohmann::json>(outcome);
  m_translator->on_thread_opened(opened);
  if (m_effort.empty()) {
    if (auto effort = native::string_at(opened, "reasoningEffort"); effort && !effort->empty()) m_effort = *effort;
  }
  m_cli.finish_start(std::nullopt);
  list_skills();
  report_options();
}

void CodexAdapter::list_skills() {
  m_rpc.request("skills/list", skills_list_params(m_thread.cwd), [this](JsonRpcEndpoint::Outcome outcome) {
    if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) return spdlog::debug("codex: skills/list refused: {}", error->message);
    CommandsOffered offered;
    m_skill_paths.clear();
    for (auto& skill : offered_skills(std::get<nlohmann::json>(outcome))) {
      m_skill_paths[skill.command.name] = skill.path;
      offered.commands.push_back(std::move(skill.command));
    }
    m_watch->on_commands(std::move(offered));
  });
}

void CodexAdapter::report_options() {
  // Both halves are needed: the efforts come with the model list, the thread's model with the thread.
  if (!m_model_list_done || m_translator->thread_id().empty()) return;
  std::optional<ReasoningEfforts> efforts;
  if (m_model_list) efforts = reasoning_efforts(*m_model_list, m_thread.model);
  if (!efforts) return spdlog::debug("codex: no reasoning efforts listed for the model; no options to offer");
  m_watch->on_options(OptionsOffered{{effort_option(*efforts, m_effort)}});
}

void CodexAdapter::fail_start(const std::string& why, ErrorCode code) {
  // Not running: the process is gone, and on_process_exit() reports why.
  if (!m_cli.running()) return;
  m_cli.finish_start(AdapterError{code, why});
  m_cli.kill();
}

void CodexAdapter::send(TurnInput input) {
  if (m_translator->thread_id().empty()) {
    // start() succeeded, so a thread is open; a caller that sends before that is a bug, answered as an error.
    m_listener.on_error(AgentErrorReport{"Codex has no open thread", true});
    TurnResult result;
    result.stop_reason = protocol::StopReason::Error;
    result.error = "Codex has no open thread";
    return m_listener.on_turn_end(std::move(result));
  }
  m_turn_running = true;
  m_interrupt_wanted = false;
  m_cancel_requested = false;
  std::optional<std::string> model;
  if (input.model && input.model != m_thread.model) model = input.model;
  if (m_pending_model) model = std::exchange(m_pending_model, std::nullopt);
  const bool model_changed = model && model != m_thread.model;
  if (model) m_thread.model = model;
  TurnChanges changes{std::exchange(m_pending_policy, std::nullopt), model, std::exchange(m_pending_effort, std::nullopt)};
  std::optional<SkillRef> skill;
  std::string text = input.text;
  if (input.command) {
    if (const auto path = m_skill_paths.find(input.command->name); path != m_skill_paths.end()) {
      skill = SkillRef{input.command->name, path->second};
      text = "$" + input.command->name + (input.command->arguments.empty() ? "" : " " + input.command->arguments);
    }
  }
  // Announced first: a turn is open from here, whatever the answer.
  m_translator->turn_requested();
  m_rpc.request("turn/start", turn_start_params(m_translator->thread_id(), text, input.attachments, changes, skill),
                [this](JsonRpcEndpoint::Outcome outcome) {
                  m_translator->on_turn_start_answer(outcome);
                  // cancel() came before the turn had an id: it has one now.
                  if (std::holds_alternative<nlohmann::json>(outcome) && m_interrupt_wanted && m_turn_running) send_interrupt();
                });
  // Another model may take other efforts.
  if (model_changed) report_options();
}

void CodexAdapter::cancel() {
  if (!m_turn_running) return;
  m_cancel_requested = true;
  send_interrupt();
  // Codex ends an interrupted turn within milliseconds; one that does not is stuck and is replaced: killing it
  // ends the turn (stopped), and the next send starts a fresh process that resumes the thread.
  m_cli.arm_cancel_deadline([this] { return m_turn_running; }, "turn/completed", "app-server");
}

void CodexAdapter::send_interrupt() {
  const std::string& turn = m_translator->turn_id();
  if (turn.empty()) {
    // turn/start is not answered yet: interrupt as soon as the turn has an id.
    m_interrupt_wanted = true;
    return;
  }
  m_interrupt_wanted = false;
  m_rpc.request("turn/interrupt", turn_interrupt_params(m_translator->thread_id(), turn), [](JsonRpcEndpoint::Outcome outcome) {
    if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) spdlog::debug("codex: turn/interrupt refused: {}", error->message);
  });
}

std::size_t CodexAdapter::kill_thread_commands() {
  auto* process = m_cli.child();
  if (process == nullptr) return 0;
  // What left the app-server's group, found by parentage; then what Codex's sandbox hid from that (a PID
  // namespace whose setup process exits leaves the command a child of init), found by the thread id Codex puts
  // in every command's environment. Commands start after the app-server, so older processes are not read.
  std::size_t killed = process->kill_detached_descendants();
  const std::string& thread = m_translator->thread_id();
  if (!thread.empty()) {
    for (const pid_t pid : process::processes_with_environment("CODEX_THREAD_ID", thread, process->pid())) {
      if (pid != process->pid() && ::kill(pid, SIGKILL) == 0) ++killed;
    }
  }
  return killed;
}

void CodexAdapter::turn_ended(protocol::StopReason reason) {
  m_turn_running = false;
  m_interrupt_wanted = false;
  m_cli.disarm_cancel_deadline();
  if (std::exchange(m_cancel_requested, false) && reason == protocol::StopReason::Cancelled && m_cli.running()) {
    // Codex usually kills the interrupted command's sandbox, but not always: a command that had just started
    // outlived the interrupt in the e2e test (its sandbox runs in a session of its own, so the group kill at
    // exit misses it too). Cancel means the work stops: what left the app-server's group goes.
    if (const auto killed = kill_thread_commands(); killed > 0) {
      spdlog::info("codex: killed {} process(es) an interrupted command left behind", killed);
    }
  }
}

void CodexAdapter::answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) {
  // The engine's rule book keeps session/project/always rules itself, so every allow is a one-time accept
  // (docs/agents/codex.md, "Approvals and rules"). Nothing is written for a request Codex no longer waits for.
  const auto reply = m_translator->take_approval(native_id);
  if (!reply) return done(std::nullopt);
  if (!answer.allow && answer.message && !answer.message->empty()) {
    spdlog::debug("codex: a deny message cannot be passed on: {}", *answer.message);
  }
  (*reply)(approval_result(answer.allow ? ApprovalDecision::Accept : ApprovalDecision::Decline));
  done(std::nullopt);
}

void CodexAdapter::answer_question(const std::string& native_id, QuestionAnswer, Completion done) {
  // The translator never asks questions for Codex (capabilities().questions is false): Codex's own
  // item/tool/requestUserInput needs its experimental API, which this adapter does not turn on.
  done(AdapterError{ErrorCode::Unsupported, "Codex asks no questions the daemon can answer (no question " + native_id + ")"});
}

void CodexAdapter::set_model(const std::string& model, Completion done) {
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_pending_model = model;  // turn/start takes the model; it sticks for the thread's later turns
  done(std::nullopt);
}

void CodexAdapter::set_mode(const std::string& mode, Completion done) {
  const auto policy = policy_for_mode(mode);
  if (!policy) return done(AdapterError{ErrorCode::Unsupported, "Codex has no mode '" + mode + "' (read-only, auto, untrusted, full-access)"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_pending_policy = *policy;
  m_thread.policy = *policy;
  done(std::nullopt);
}

void CodexAdapter::set_option(const std::string& option_id, const std::string& value, Completion done) {
  if (option_id != kEffortOption) return done(AdapterError{ErrorCode::Unsupported, "Codex has no option '" + option_id + "'"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_effort = value;
  m_pending_effort = value;
  done(std::nullopt);
  report_options();
}

void CodexAdapter::thread_request(const std::string& method, nlohmann::json params, const std::string& what, ErrorCode refused,
                                  Completion done) {
  if (!m_cli.running() || m_translator->thread_id().empty()) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_rpc.request(method, std::move(params), [what, refused, done = std::move(done)](JsonRpcEndpoint::Outcome outcome) {
    const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome);
    if (error == nullptr) return done(std::nullopt);
    const auto code = error->code == JsonRpcEndpoint::kAgentGone ? ErrorCode::AgentUnavailable : refused;
    done(AdapterError{code, "Codex could not " + what + ": " + error->message});
  });
}

void CodexAdapter::rewind(const std::string& native_turn_ref, Completion done) {
  thread_request("thread/revert", thread_revert_params(m_translator->thread_id(), native_turn_ref), "rewind the thread",
                 // Codex refuses a turn its thread does not hold (one of a thread seeded afresh, say).
                 ErrorCode::UnknownTurn, std::move(done));
}

void CodexAdapter::compact(Completion done) {
  if (m_compacting) return done(AdapterError{ErrorCode::SessionBusy, "Codex is compacting the thread already"});
  if (!m_cli.running() || m_translator->thread_id().empty()) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  // Codex runs the compaction as a turn of its own; that turn's end completes this (it may come before the
  // answer to the request, which names no turn: the translator tracks the turn Codex starts for it).
  m_compacting = std::move(done);
  m_translator->compaction_requested();
  thread_request("thread/compact/start", {{"threadId", m_translator->thread_id()}}, "compact the thread", ErrorCode::AgentUnavailable,
                 [this](std::optional<AdapterError> error) {
                   if (!error) return;
                   if (auto refused = std::exchange(m_compacting, nullptr)) refused(std::move(error));
                 });
}

void CodexAdapter::stop() {
  if (!m_cli.running() || m_cli.stop_requested()) return;
  // Commands still running in sandboxes of their own would outlive the app-server (nothing but its group is
  // signalled, and once it exits they are orphans nobody can trace back to it): they go first.
  if (const auto killed = kill_thread_commands(); killed > 0) {
    spdlog::info("codex: stopping: killed {} process(es) still running in a sandbox", killed);
  }
  // EOF on stdin makes the app-server exit (0); then TERM, then KILL.
  m_cli.stop();
}

void CodexAdapter::on_process_exit(const std::string& reason) {
  m_turn_running = false;
  // What is still unanswered fails; those handlers leave the start and the turn to what follows.
  m_rpc.close(reason);
  if (auto done = std::exchange(m_compacting, nullptr)) done(AdapterError{ErrorCode::AgentUnavailable, reason});
  if (m_cli.starting()) return m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, reason});
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  // The session ends a running turn as an error when it hears this.
  m_listener.on_unavailable(Unavailable{reason});
}

}  // namespace switchboard::adapters::codex
