#include "codex/CodexAdapter.h"

#include <signal.h>

#include "process/GroupMembers.h"

#include <cstdlib>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "process/ChildProcess.h"

namespace switchboard::adapters::codex {
namespace {

using protocol::ErrorCode;

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto newline = text.rfind('\n');
  return newline == std::string::npos ? text : text.substr(newline + 1);
}

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

process::Environment child_environment(const CodexConfig& config) {
  auto environment = process::Environment::from_daemon();
  const auto changes = environment_for(config.endpoint);
  for (const auto& name : changes.unset) environment.unset(name);
  for (const auto& [name, value] : changes.set) environment.set(name, value);
  return environment;
}

// Codex 0.171.0's answer to thread/resume of a thread another process has open: "thread <id> already has an
// active writer" (-32600).
bool is_open_elsewhere(const std::string& error) { return error.find("active writer") != std::string::npos; }

// Codex 0.171.0's answer to thread/resume of a thread it has no rollout file for (deleted, or never written):
// "no rollout found for thread id <id>" (-32600). The conversation is gone; the engine continues the session in
// a fresh thread seeded with what it stored.
bool is_missing_thread(const std::string& error) { return error.find("no rollout found") != std::string::npos; }

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
    : m_io(io),
      m_listener(listener),
      m_config(std::move(config)),
      m_watch(std::make_unique<TurnWatch>(*this, listener)),
      m_translator(std::make_unique<CodexTranslator>(*m_watch, *this)),
      m_start_timer(io),
      m_cancel_timer(io),
      m_self(std::make_shared<CodexAdapter*>(this)) {}

// The ChildProcess kills the process group if it still runs: an adapter never leaves a CLI behind.
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
  return capabilities;
}

void CodexAdapter::start(const StartOptions& options, Completion done) {
  const std::string mode = options.mode.value_or(std::string(kDefaultMode));
  const auto policy = policy_for_mode(mode);
  if (!policy) return done(AdapterError{ErrorCode::Unsupported, "Codex has no mode '" + mode + "' (read-only, auto, untrusted, full-access)"});
  if (m_config.endpoint) {
    // A few hundred bytes, once per process start: not worth a trip off the reactor.
    if (auto refused = write_private_home(*m_config.endpoint, variable("HOME"), variable("CODEX_HOME"))) {
      return done(AdapterError{ErrorCode::AgentUnavailable, "Codex could not be configured: " + *refused});
    }
  }
  m_thread.cwd = options.cwd;
  m_thread.policy = *policy;
  m_thread.model = options.model;
  m_resume_thread_id = options.resume_provider_session_id;

  const auto argv = command_line(m_config.executable);
  process::SpawnSpec spec;
  spec.program = argv.front();
  spec.args.assign(argv.begin() + 1, argv.end());
  spec.working_directory = options.cwd;
  spec.environment = child_environment(m_config);
  spec.exec_shim = m_config.exec_shim;
  spec.stderr_options.log_name = "codex[" + options.session_id + "]";

  process::ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [this](std::string_view line) { m_translator->feed_line(line); };
  handlers.on_stdout_overlong = [this](std::size_t limit) {
    m_listener.on_error(AgentErrorReport{"Codex wrote a line longer than " + std::to_string(limit) + " bytes; it was skipped", true});
  };
  handlers.on_exit = [this](const process::ExitStatus& status) { on_process_exit(process::to_string(status)); };
  auto spawned = process::ChildProcess::spawn(m_io, std::move(spec), std::move(handlers));
  if (!spawned) {
    const bool missing = spawned.error().code == process::ProcessError::Code::ExecutableNotFound;
    return done(AdapterError{ErrorCode::AgentUnavailable,
                             missing ? "Codex is not installed (no '" + m_config.executable + "' found)"
                                     : "Codex could not be started: " + spawned.error().message});
  }
  m_process = std::move(*spawned);
  m_start_done = std::move(done);

  // Usable once the thread is open: initialize → initialized → thread/start or thread/resume (on_response).
  send_request(m_requests.initialize("switchboard", m_config.client_version));
  m_start_timer.expires_after(m_config.start_timeout);
  m_start_timer.async_wait([this, self = std::weak_ptr<CodexAdapter*>(m_self)](const boost::system::error_code& error) {
    if (error || self.expired() || !m_start_done) return;
    fail_start("Codex did not start within " + std::to_string(m_config.start_timeout.count()) + " ms");
  });
}

void CodexAdapter::finish_start(std::optional<AdapterError> error) {
  if (!m_start_done) return;
  m_start_timer.cancel();
  auto done = std::exchange(m_start_done, nullptr);
  done(std::move(error));
}

void CodexAdapter::fail_start(const std::string& why, ErrorCode code) {
  finish_start(AdapterError{code, why});
  if (m_process) m_process->kill();
}

void CodexAdapter::write_line(const nlohmann::json& message) {
  if (!m_process) return;
  if (auto written = m_process->write_stdin(to_line(message)); !written) {
    spdlog::warn("codex: cannot write to the app-server: {}", written.error().message);
    m_listener.on_error(AgentErrorReport{"could not write to Codex: " + written.error().message, false});
  }
}

void CodexAdapter::send_request(const OutgoingRequest& request) {
  // Announced before writing: the answer cannot arrive first, but the translator must know the id by then.
  m_translator->expect_response(request.id, request.kind);
  write_line(request.message);
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
  if (model) m_thread.model = model;
  auto policy = std::exchange(m_pending_policy, std::nullopt);
  send_request(m_requests.turn_start(m_translator->thread_id(), input.text, input.attachments, policy, model));
}

void CodexAdapter::cancel() {
  if (!m_turn_running) return;
  m_cancel_requested = true;
  send_interrupt();
  // Codex ends an interrupted turn within milliseconds; one that does not is stuck and is replaced: killing it
  // ends the turn (stopped), and the next send starts a fresh process that resumes the thread.
  m_cancel_timer.expires_after(m_config.cancel_timeout);
  m_cancel_timer.async_wait([this, self = std::weak_ptr<CodexAdapter*>(m_self)](const boost::system::error_code& error) {
    if (error || self.expired() || !m_turn_running || !m_process) return;
    spdlog::warn("codex: no turn/completed {} ms after an interrupt; killing the app-server", m_config.cancel_timeout.count());
    m_process->kill();
  });
}

void CodexAdapter::send_interrupt() {
  const std::string& turn = m_translator->turn_id();
  if (turn.empty()) {
    // turn/start is not answered yet: interrupt as soon as the turn has an id (on_response).
    m_interrupt_wanted = true;
    return;
  }
  m_interrupt_wanted = false;
  send_request(m_requests.turn_interrupt(m_translator->thread_id(), turn));
}

std::size_t CodexAdapter::kill_thread_commands() {
  if (!m_process) return 0;
  // What left the app-server's group, found by parentage; then what Codex's sandbox hid from that (a PID
  // namespace whose setup process exits leaves the command a child of init), found by the thread id Codex puts
  // in every command's environment.
  std::size_t killed = m_process->kill_detached_descendants();
  const std::string& thread = m_translator->thread_id();
  if (!thread.empty()) {
    for (const pid_t pid : process::processes_with_environment("CODEX_THREAD_ID", thread)) {
      if (pid != m_process->pid() && ::kill(pid, SIGKILL) == 0) ++killed;
    }
  }
  return killed;
}

void CodexAdapter::turn_ended(protocol::StopReason reason) {
  m_turn_running = false;
  m_interrupt_wanted = false;
  m_cancel_timer.cancel();
  if (std::exchange(m_cancel_requested, false) && reason == protocol::StopReason::Cancelled && m_process) {
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
  const auto request = m_translator->take_approval(native_id);
  if (!request) return done(std::nullopt);
  if (!answer.allow && answer.message && !answer.message->empty()) {
    spdlog::debug("codex: a deny message cannot be passed on: {}", *answer.message);
  }
  write_line(approval_response(request->id, answer.allow ? ApprovalDecision::Accept : ApprovalDecision::Decline));
  done(std::nullopt);
}

void CodexAdapter::answer_question(const std::string& native_id, QuestionAnswer, Completion done) {
  // The translator never asks questions for Codex (capabilities().questions is false): Codex's own
  // item/tool/requestUserInput needs its experimental API, which this adapter does not turn on.
  done(AdapterError{ErrorCode::Unsupported, "Codex asks no questions the daemon can answer (no question " + native_id + ")"});
}

void CodexAdapter::set_model(const std::string& model, Completion done) {
  if (!m_process) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_pending_model = model;  // turn/start takes the model; it sticks for the thread's later turns
  done(std::nullopt);
}

void CodexAdapter::set_mode(const std::string& mode, Completion done) {
  const auto policy = policy_for_mode(mode);
  if (!policy) return done(AdapterError{ErrorCode::Unsupported, "Codex has no mode '" + mode + "' (read-only, auto, untrusted, full-access)"});
  if (!m_process) return done(AdapterError{ErrorCode::AgentUnavailable, "Codex is not running"});
  m_pending_policy = *policy;
  m_thread.policy = *policy;
  done(std::nullopt);
}

void CodexAdapter::stop() {
  if (!m_process || m_stop_requested) return;
  m_stop_requested = true;
  // Commands still running in sandboxes of their own would outlive the app-server (nothing but its group is
  // signalled, and once it exits they are orphans nobody can trace back to it): they go first.
  if (const auto killed = kill_thread_commands(); killed > 0) {
    spdlog::info("codex: stopping: killed {} process(es) still running in a sandbox", killed);
  }
  // EOF on stdin makes the app-server exit (0); then TERM, then KILL.
  process::StopPolicy policy;
  policy.graceful = [](process::ChildProcess& child) { child.close_stdin(); };
  policy.graceful_timeout = m_config.stop_grace;
  policy.terminate_timeout = m_config.stop_grace;
  m_process->stop(std::move(policy));
}

void CodexAdapter::on_process_exit(const std::string& status) {
  std::string reason = m_stop_requested ? "stopped" : "Codex exited (" + status + ")";
  if (!m_stop_requested && m_process) {
    if (const auto why = last_line(m_process->stderr_tail()); !why.empty()) reason += ": " + why.substr(0, 500);
  }
  // The ChildProcess may be the caller: let it finish before it is destroyed.
  boost::asio::post(m_io, [process = std::shared_ptr<process::ChildProcess>(std::move(m_process))] {});
  m_turn_running = false;
  m_cancel_timer.cancel();
  if (m_start_done) return finish_start(AdapterError{ErrorCode::AgentUnavailable, reason});
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  // The session ends a running turn as an error when it hears this.
  m_listener.on_unavailable(Unavailable{reason});
}

// ---- CodexControlSink -----------------------------------------------------------------------------------------

void CodexAdapter::on_response(const CodexResponse& response) {
  switch (response.kind) {
    case RequestKind::Initialize:
      if (!response.ok) return fail_start("Codex refused to initialize: " + response.error);
      write_line(initialized_notification());
      if (m_resume_thread_id) return send_request(m_requests.thread_resume(*m_resume_thread_id, m_thread));
      return send_request(m_requests.thread_start(m_thread));
    case RequestKind::ThreadResume:
      if (!response.ok && m_resume_thread_id && is_open_elsewhere(response.error)) {
        // Codex lets one process write a thread: another session of ours, or the user's own Codex, has it
        // open. A fork carries the whole conversation and is ours alone; the engine hears its id as the
        // session's provider session from now on.
        spdlog::info("codex: thread {} is open in another process ({}); continuing in a fork of it", *m_resume_thread_id, response.error);
        return send_request(m_requests.thread_fork(*m_resume_thread_id, m_thread));
      }
      [[fallthrough]];
    case RequestKind::ThreadStart:
    case RequestKind::ThreadFork:
      if (!response.ok) {
        const char* what = response.kind == RequestKind::ThreadStart  ? "Codex could not start a thread: "
                           : response.kind == RequestKind::ThreadFork ? "Codex could not fork the thread: "
                                                                      : "Codex could not resume the thread: ";
        const bool lost = response.kind == RequestKind::ThreadResume && is_missing_thread(response.error);
        return fail_start(what + response.error, lost ? ErrorCode::ConversationLost : ErrorCode::AgentUnavailable);
      }
      return finish_start(std::nullopt);
    case RequestKind::TurnStart:
      if (response.ok && m_interrupt_wanted && m_turn_running) send_interrupt();
      return;
    case RequestKind::TurnInterrupt:
      return;
  }
}

void CodexAdapter::on_unanswerable_request(const nlohmann::json& id, const std::string& method) {
  write_line(error_response(id, kMethodNotFound, "switchboard does not serve '" + method + "' requests"));
}

}  // namespace switchboard::adapters::codex
