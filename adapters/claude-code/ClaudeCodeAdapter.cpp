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
class ClaudeCodeAdapter::TurnWatch : public AdapterListener {
 public:
  TurnWatch(ClaudeCodeAdapter& adapter, AdapterListener& engine) : m_adapter(adapter), m_engine(engine) {}

  void on_provider_session(std::string id) override { m_engine.on_provider_session(std::move(id)); }
  void on_delta(const std::string& message_id, protocol::DeltaKind kind, std::string text,
                std::optional<std::string> parent) override {
    m_engine.on_delta(message_id, kind, std::move(text), std::move(parent));
  }
  void on_message(const std::string& message_id, protocol::DeltaKind kind, std::string text,
                  std::optional<std::string> parent) override {
    m_engine.on_message(message_id, kind, std::move(text), std::move(parent));
  }
  void on_tool_started(std::string id, std::string tool, nlohmann::json input, std::optional<std::string> parent) override {
    m_engine.on_tool_started(std::move(id), std::move(tool), std::move(input), std::move(parent));
  }
  void on_tool_output(const std::string& id, std::string text) override { m_engine.on_tool_output(id, std::move(text)); }
  void on_tool_completed(std::string id, std::string output, bool is_error) override {
    m_engine.on_tool_completed(std::move(id), std::move(output), is_error);
  }
  void on_permission_request(std::string native_id, PermissionAsk ask) override {
    m_engine.on_permission_request(std::move(native_id), std::move(ask));
  }
  void on_question(std::string native_id, QuestionAsk ask) override { m_engine.on_question(std::move(native_id), std::move(ask)); }
  void on_request_withdrawn(const std::string& native_id) override { m_engine.on_request_withdrawn(native_id); }
  void on_status(AgentStatus status) override { m_engine.on_status(std::move(status)); }
  void on_turn_end(TurnResult result) override {
    if (m_adapter.starting()) return;  // no turn runs yet: a result now is the CLI failing to start (on_error)
    m_adapter.turn_ended(result);
    m_engine.on_turn_end(std::move(result));
  }
  void on_error(std::string message, bool recoverable) override {
    // Before initialize is answered the CLI can only be failing to start (a --resume of a conversation it does
    // not have, say): that is the start's error, reported once by it, not an event of a turn.
    if (m_adapter.starting()) {
      m_adapter.m_start_error = std::move(message);
      return;
    }
    m_engine.on_error(std::move(message), recoverable);
  }
  void on_stopped(std::string reason) override { m_engine.on_stopped(std::move(reason)); }

 private:
  ClaudeCodeAdapter& m_adapter;
  AdapterListener& m_engine;
};

ClaudeCodeAdapter::ClaudeCodeAdapter(boost::asio::io_context& io, AdapterListener& listener, ClaudeCodeConfig config)
    : m_io(io),
      m_listener(listener),
      m_config(std::move(config)),
      m_watch(std::make_unique<TurnWatch>(*this, listener)),
      m_translator(std::make_unique<ClaudeTranslator>(*m_watch, *this)),
      m_cli(io, CliIdentity{"Claude Code", "claude"}, m_config.timeouts,
            {[this](std::string_view line) { m_translator->feed_line(line); },
             [this](std::string message, bool recoverable) { m_listener.on_error(std::move(message), recoverable); },
             [this](const std::string& reason, const std::string& stderr_tail) { on_process_exit(reason, stderr_tail); }}),
      m_self(std::make_shared<ClaudeCodeAdapter*>(this)) {}

// The CliProcess kills the process group if it still runs: an adapter never leaves a CLI behind.
ClaudeCodeAdapter::~ClaudeCodeAdapter() = default;

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
  return capabilities;
}

void ClaudeCodeAdapter::start(const StartOptions& options, std::function<void(std::optional<AdapterError>)> done) {
  auto environment = child_environment(m_config);
  std::optional<std::string> mode = options.mode;
  if (mode && !is_permission_mode(*mode)) {
    return done(AdapterError{ErrorCode::Unsupported, "Claude Code has no permission mode '" + *mode + "'"});
  }
  if (auto refused = refused_as_root(mode, environment)) return done(*refused);

  LaunchOptions launch;
  launch.executable = m_config.executable;
  launch.model = options.model;
  launch.permission_mode = mode;
  launch.resume_session_id = options.resume_provider_session_id;
  if (auto failed = m_cli.spawn(CliLaunch{command_line(launch), options.cwd, std::move(environment), m_config.exec_shim,
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

void ClaudeCodeAdapter::answer_permission(const std::string& native_id, PermissionAnswer answer) {
  // Nothing to answer when the CLI withdrew the request or its turn ended: the engine's answer came too late.
  if (auto request = m_translator->take_tool_request(native_id)) write_line(permission_response(*request, answer));
}

void ClaudeCodeAdapter::answer_question(const std::string& native_id, QuestionAnswer answer) {
  if (auto request = m_translator->take_tool_request(native_id)) write_line(question_response(*request, answer));
}

std::optional<AdapterError> ClaudeCodeAdapter::set_model(const std::string& model) {
  if (!m_cli.running()) return AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"};
  m_model = model;
  const auto id = next_request_id("model");
  send_control(set_model_request(id, model), id, ControlRequestKind::SetModel);
  return std::nullopt;
}

std::optional<AdapterError> ClaudeCodeAdapter::set_mode(const std::string& mode) {
  if (!is_permission_mode(mode)) return AdapterError{ErrorCode::Unsupported, "Claude Code has no permission mode '" + mode + "'"};
  if (auto refused = refused_as_root(mode, child_environment(m_config))) return refused;
  if (!m_cli.running()) return AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"};
  const auto id = next_request_id("mode");
  send_control(set_permission_mode_request(id, mode), id, ControlRequestKind::SetPermissionMode);
  return std::nullopt;
}

void ClaudeCodeAdapter::stop() {
  // EOF on stdin is the CLI's own way to finish: it ends the current turn and exits. Then TERM, then KILL.
  m_cli.stop();
}

void ClaudeCodeAdapter::on_process_exit(std::string reason, const std::string& stderr_tail) {
  m_turn_running = false;
  if (m_cli.starting()) {
    if (!m_start_error.empty()) reason = "Claude Code could not start: " + m_start_error.substr(0, 500);
    m_cli.finish_start(AdapterError{conversation_lost(m_resume_id, m_start_error, stderr_tail) ? ErrorCode::ConversationLost
                                                                                                : ErrorCode::AgentUnavailable,
                                    reason});
    return;
  }
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  m_listener.on_stopped(reason);
}

// ---- ClaudeControlSink --------------------------------------------------------------------------------------

void ClaudeCodeAdapter::on_init(const ClaudeInit& init) {
  if (!init.model.empty()) m_model = init.model;
}

void ClaudeCodeAdapter::on_permission_mode(const std::string& mode) { spdlog::debug("claude: permission mode is now {}", mode); }

void ClaudeCodeAdapter::on_control_result(const ControlResult& result) {
  if (result.kind == ControlRequestKind::Initialize && result.request_id == m_init_request_id) {
    if (result.ok) return m_cli.finish_start(std::nullopt);
    m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, "Claude Code refused to start: " + result.error});
    m_cli.kill();
    return;
  }
  // A refused set_model, set_permission_mode or interrupt reached the engine already: the translator reports
  // every refusal as an agent error, so saying it again here would publish it twice.
  if (!result.ok) spdlog::debug("claude: control request {} refused: {}", result.request_id, result.error);
}

void ClaudeCodeAdapter::on_unanswerable_request(const std::string& request_id, const std::string& subtype) {
  write_line(control_error(request_id, "switchboard does not serve '" + subtype + "' requests"));
}

}  // namespace switchboard::adapters::claude
