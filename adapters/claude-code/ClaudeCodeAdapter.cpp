#include "claude-code/ClaudeCodeAdapter.h"

#include <unistd.h>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "claude-code/ClaudeMessages.h"
#include "switchboard/process/ChildProcess.h"

namespace switchboard::adapters::claude {
namespace {

using protocol::ErrorCode;

// The CLI refuses to skip permission prompts as root (it exits at once), unless it is told it runs in a sandbox.
std::optional<AdapterError> refused_as_root(const std::optional<std::string>& mode, const process::Environment& environment) {
  if (!mode || *mode != "bypassPermissions" || ::geteuid() != 0 || environment.contains("IS_SANDBOX")) return std::nullopt;
  return AdapterError{ErrorCode::Unsupported,
                      "Claude Code refuses the bypassPermissions mode when it runs as root (set IS_SANDBOX=1 in the "
                      "daemon's environment if this machine is a sandbox)"};
}

std::string_view request_name(ControlRequestKind kind) {
  switch (kind) {
    case ControlRequestKind::Initialize: return "initialize";
    case ControlRequestKind::Interrupt: return "interrupt";
    case ControlRequestKind::SetPermissionMode: return "set_permission_mode";
    case ControlRequestKind::SetModel: return "set_model";
  }
  return "control request";
}

// Started with --resume, the CLI exits at once when it has no such conversation (its history file was deleted,
// or never written): a result error and a stderr line saying "No conversation found with session ID: <id>".
// That wording is the only signal the CLI gives; the end-to-end tests hold the installed version to it.
bool conversation_lost(const std::optional<std::string>& resume_id, const std::string& start_error, const std::string& stderr_tail) {
  if (!resume_id) return false;
  constexpr std::string_view kNotFound = "No conversation found with session ID";
  return start_error.find(kNotFound) != std::string::npos || stderr_tail.find(kNotFound) != std::string::npos;
}

process::Environment child_environment(const ClaudeCodeConfig& config) { return environment_with(environment_for(config.endpoint)); }

}  // namespace

// Everything the translator reports goes to the engine unchanged; the end of a turn also clears the adapter's
// turn bookkeeping first, so an engine that starts the next turn from on_turn_end finds the adapter ready.
class ClaudeCodeAdapter::TurnWatch : public ForwardingListener {
 public:
  TurnWatch(ClaudeCodeAdapter& adapter, AdapterListener& engine) : ForwardingListener(engine), m_adapter(adapter) {}

  void on_turn_end(TurnResult result) override {
    if (m_adapter.starting()) return;  // no turn runs yet: a result now is the CLI failing to start (on_error)
    m_adapter.turn_ended(result);
    ForwardingListener::on_turn_end(std::move(result));
  }
  void on_error(AgentErrorReport error) override {
    // Before initialize is answered the CLI can only be failing to start (a --resume of a conversation it does
    // not have, say): that is the start's error, reported once by it, not an event of a turn.
    if (m_adapter.starting()) {
      m_adapter.m_start_error = std::move(error.message);
      return;
    }
    ForwardingListener::on_error(std::move(error));
  }

 private:
  ClaudeCodeAdapter& m_adapter;
};

ClaudeCodeAdapter::ClaudeCodeAdapter(boost::asio::io_context& io, AdapterListener& listener, ClaudeCodeConfig config)
    : m_io(io),
      m_listener(listener),
      m_config(std::move(config)),
      m_watch(std::make_unique<TurnWatch>(*this, listener)),
      m_translator(std::make_unique<ClaudeTranslator>(*m_watch, *this)),
      m_cli(io, CliIdentity{"Claude Code", "claude"}, m_config.timeouts,
            {[this](std::string_view line) { m_translator->feed_line(line); },
             [this](AgentErrorReport error) { m_listener.on_error(std::move(error)); },
             [this](const std::string& reason, const std::string& stderr_tail) { on_process_exit(reason, stderr_tail); }}),
      m_self(std::make_shared<ClaudeCodeAdapter*>(this)) {}

// The CliProcess kills the process group if it still runs: an adapter never leaves a CLI behind.
ClaudeCodeAdapter::~ClaudeCodeAdapter() = default;

std::vector<std::string> ClaudeCodeAdapter::static_modes() { return permission_modes(); }

protocol::AgentCapabilities ClaudeCodeAdapter::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.questions = true;
  capabilities.resume = true;
  capabilities.history_list = true;
  capabilities.history_read = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  capabilities.images = true;
  capabilities.fork = true;
  return capabilities;
}

void ClaudeCodeAdapter::start(const StartOptions& options, Completion done) {
  auto environment = child_environment(m_config);
  std::optional<std::string> mode = options.mode;
  if (mode && !is_permission_mode(*mode)) {
    return done(AdapterError{ErrorCode::Unsupported, "Claude Code has no permission mode '" + *mode + "'"});
  }
  if (auto refused = refused_as_root(mode, environment)) return done(*refused);

  LaunchOptions launch;
  launch.executable = m_config.executable;
  launch.leading_arguments = m_config.leading_arguments;
  launch.model = options.model;
  launch.permission_mode = mode;
  launch.resume_session_id = options.resume_provider_session_id;
  launch.fork_session = options.fork;
  launch.partial_messages = options.stream_text;
  if (auto failed = m_cli.spawn(CliLaunch{command_line(launch), options.cwd, std::move(environment),
                                          "claude[" + options.session_id + "]"})) {
    return done(*failed);
  }
  m_resume_id = options.resume_provider_session_id;
  m_model = options.model;
  // The CLI is usable once it answers initialize (its startup takes a second or two).
  m_cli.begin_start(std::move(done));
  m_init_request_id = next_request_id("init");
  send_control(initialize_request(m_init_request_id), m_init_request_id, ControlRequestKind::Initialize);
}

std::string ClaudeCodeAdapter::next_request_id(const char* what) {
  return std::string("sb-") + what + "-" + std::to_string(++m_request_counter);
}

void ClaudeCodeAdapter::write_line(const nlohmann::json& message) { m_cli.write_line(message); }

void ClaudeCodeAdapter::send_control(const nlohmann::json& request, const std::string& id, ControlRequestKind kind) {
  // Registered before writing: the answer cannot arrive first, but the translator must know the id by then.
  m_translator->expect_control_response(id, kind);
  write_line(request);
}

void ClaudeCodeAdapter::send(TurnInput input) {
  m_turn_running = true;
  if (input.model && input.model != m_model) {
    m_model = input.model;
    const auto id = next_request_id("model");
    send_control(set_model_request(id, *input.model), id, ControlRequestKind::SetModel);
  }
  if (input.attachments.empty() || !m_config.file_pool) {
    return write_prompt(input.text, input.attachments.empty() ? std::vector<PreparedAttachment>{} : prepare_attachments(input.attachments));
  }
  // Images are read and encoded off the reactor; the prompt is written when they are ready.
  boost::asio::post(*m_config.file_pool, [this, self = std::weak_ptr<ClaudeCodeAdapter*>(m_self), text = std::move(input.text),
                                          attachments = std::move(input.attachments)]() mutable {
    auto prepared = prepare_attachments(attachments);
    boost::asio::post(m_io, [this, self, text = std::move(text), prepared = std::move(prepared)] {
      if (self.expired() || !m_turn_running) return;  // gone, or cancelled before the files were read
      write_prompt(text, prepared);
    });
  });
}

void ClaudeCodeAdapter::write_prompt(const std::string& text, const std::vector<PreparedAttachment>& prepared) {
  write_line(user_message(text, prepared));
}

void ClaudeCodeAdapter::cancel() {
  if (!m_turn_running) return;
  const auto id = next_request_id("interrupt");
  m_interrupt_sent = true;
  send_control(interrupt_request(id), id, ControlRequestKind::Interrupt);
  // The CLI answers an interrupt with the turn's result at once; one that does not is stuck and is replaced:
  // killing it ends the turn (stopped), and the next send starts a fresh process that resumes the session.
  m_cli.arm_cancel_deadline([this] { return m_turn_running; }, "result", "CLI");
}

void ClaudeCodeAdapter::turn_ended(const TurnResult& result) {
  m_turn_running = false;
  m_cli.disarm_cancel_deadline();
  if (std::exchange(m_interrupt_sent, false) && result.stop_reason == protocol::StopReason::Cancelled && m_cli.running()) {
    // Claude Code abandons a running tool on interrupt without killing it (the Bash command runs on, in a
    // session of its own). Cancel means the work stops: everything the CLI started goes, the CLI stays.
    if (const auto killed = m_cli.child()->kill_started_processes(); killed > 0) {
      spdlog::info("claude: killed {} process(es) a cancelled tool left behind", killed);
    }
  }
}

void ClaudeCodeAdapter::answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) {
  // Nothing to answer when the CLI withdrew the request or its turn ended: the engine's answer came too late.
  if (auto request = m_translator->take_tool_request(native_id)) write_line(permission_response(*request, answer));
  done(std::nullopt);
}

void ClaudeCodeAdapter::answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) {
  if (auto request = m_translator->take_tool_request(native_id)) write_line(question_response(*request, answer));
  done(std::nullopt);
}

void ClaudeCodeAdapter::set_model(const std::string& model, Completion done) {
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"});
  // Taken as the CLI's model at once, so a turn sent before the answer does not ask for it again; a refusal puts
  // the previous one back.
  const auto id = next_request_id("model");
  m_pending_controls[id] = PendingControl{std::move(done), m_model};
  m_model = model;
  send_control(set_model_request(id, model), id, ControlRequestKind::SetModel);
}

void ClaudeCodeAdapter::set_mode(const std::string& mode, Completion done) {
  if (!is_permission_mode(mode)) return done(AdapterError{ErrorCode::Unsupported, "Claude Code has no permission mode '" + mode + "'"});
  if (auto refused = refused_as_root(mode, child_environment(m_config))) return done(std::move(refused));
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"});
  const auto id = next_request_id("mode");
  m_pending_controls[id] = PendingControl{std::move(done), std::nullopt};
  send_control(set_permission_mode_request(id, mode), id, ControlRequestKind::SetPermissionMode);
}

void ClaudeCodeAdapter::fail_pending_controls(const std::string& reason) {
  auto pending = std::exchange(m_pending_controls, {});
  for (auto& [id, control] : pending) control.done(AdapterError{ErrorCode::AgentUnavailable, reason});
}

void ClaudeCodeAdapter::stop() {
  // EOF on stdin is the CLI's own way to finish: it ends the current turn and exits. Then TERM, then KILL.
  m_cli.stop();
}

void ClaudeCodeAdapter::on_process_exit(std::string reason, const std::string& stderr_tail) {
  m_turn_running = false;
  fail_pending_controls("Claude Code stopped before it answered: " + reason);
  if (m_cli.starting()) {
    if (!m_start_error.empty()) reason = "Claude Code could not start: " + m_start_error.substr(0, 500);
    m_cli.finish_start(AdapterError{conversation_lost(m_resume_id, m_start_error, stderr_tail) ? ErrorCode::ConversationLost
                                                                                                : ErrorCode::AgentUnavailable,
                                    reason});
    return;
  }
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  m_listener.on_unavailable(Unavailable{reason});
}

// ---- ClaudeControlSink --------------------------------------------------------------------------------------

void ClaudeCodeAdapter::on_init(const ClaudeInit& init) {
  if (!init.model.empty()) m_model = init.model;
}

void ClaudeCodeAdapter::on_permission_mode(const std::string& mode) { spdlog::debug("claude: permission mode is now {}", mode); }

void ClaudeCodeAdapter::on_control_result(const ControlResult& result) {
  if (result.kind == ControlRequestKind::Initialize && result.request_id == m_init_request_id) {
    if (result.ok) {
      if (auto models = offered_models(result.response); !models.empty()) m_watch->on_models(ModelsOffered{std::move(models)});
      return m_cli.finish_start(std::nullopt);
    }
    m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, "Claude Code refused to start: " + result.error});
    m_cli.kill();
    return;
  }
  const std::string refusal = "Claude Code refused " + std::string(request_name(result.kind)) + ": " + result.error;
  if (auto pending = m_pending_controls.find(result.request_id); pending != m_pending_controls.end()) {
    // A set_model or set_permission_mode the engine waits for: its caller hears the answer, and only it.
    PendingControl control = std::move(pending->second);
    m_pending_controls.erase(pending);
    if (result.ok) return control.done(std::nullopt);
    if (result.kind == ControlRequestKind::SetModel) m_model = control.previous_model;
    return control.done(AdapterError{ErrorCode::Unsupported, refusal});
  }
  // Nobody waits for the others (an interrupt, the model a turn asked for): a refusal is the turn's news, once.
  if (!result.ok) m_watch->on_error(AgentErrorReport{refusal, /*recoverable=*/true});
}

void ClaudeCodeAdapter::on_unanswerable_request(const std::string& request_id, const std::string& subtype) {
  write_line(control_error(request_id, "switchboard does not serve '" + subtype + "' requests"));
}

}  // namespace switchboard::adapters::claude
