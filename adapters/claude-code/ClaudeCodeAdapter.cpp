#include "claude-code/ClaudeCodeAdapter.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "claude-code/ClaudeMessages.h"
#include "common/McpServers.h"
#include "common/NativeJson.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/support/RandomId.h"

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
    case ControlRequestKind::GetContextUsage: return "get_context_usage";
    case ControlRequestKind::McpStatus: return "mcp_status";
    case ControlRequestKind::ApplyFlagSettings: return "apply_flag_settings";
    case ControlRequestKind::RewindConversation: return "rewind_conversation";
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

// A turn's reference: "<prompt uuid>:<uuid of the turn's last message>" (the second what --resume-session-at
// keeps a fork up to, the first what rewind_conversation drops).
constexpr char kRefSeparator = ':';

std::string prompt_of(const std::string& turn_ref) { return turn_ref.substr(0, turn_ref.find(kRefSeparator)); }

std::string last_message_of(const std::string& turn_ref) {
  const auto at = turn_ref.find(kRefSeparator);
  return at == std::string::npos ? std::string() : turn_ref.substr(at + 1);
}

// The MCP servers' configuration goes to the CLI in a file only we can read, not on its command line, which
// every user of the machine can read in /proc: their env and headers may hold secrets.
std::optional<std::filesystem::path> write_private_file(const std::string& text) {
  std::error_code error;
  const auto directory = std::filesystem::temp_directory_path(error);
  if (error) return std::nullopt;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto path = directory / ("switchboard-claude-mcp-" + random_id("", 12) + ".json");
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) continue;
    std::size_t written = 0;
    while (written < text.size()) {
      const auto n = ::write(fd, text.data() + written, text.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (written == text.size()) return path;
    std::filesystem::remove(path, error);
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<protocol::McpServerStatusKind> mcp_state(std::string_view status) {
  if (status == "connected") return protocol::McpServerStatusKind::Connected;
  if (status == "pending") return protocol::McpServerStatusKind::Pending;
  if (status.empty()) return std::nullopt;
  return protocol::McpServerStatusKind::Failed;  // failed, needs-auth, disabled
}

}  // namespace

// Everything the translator reports goes to the engine unchanged; the end of a turn also clears the adapter's
// turn bookkeeping first, so an engine that starts the next turn from on_turn_end finds the adapter ready.
class ClaudeCodeAdapter::TurnWatch : public ForwardingListener {
 public:
  TurnWatch(ClaudeCodeAdapter& adapter, AdapterListener& engine) : ForwardingListener(engine), m_adapter(adapter) {}

  void on_turn_end(TurnResult result) override {
    if (m_adapter.starting()) return;  // no turn runs yet: a result now is the CLI failing to start (on_error)
    if (m_adapter.m_compact_done) {
      // The result of /compact, which is no turn of the session's.
      auto done = std::exchange(m_adapter.m_compact_done, nullptr);
      if (auto refused = std::exchange(m_adapter.m_compact_error, std::nullopt)) {
        return done(AdapterError{ErrorCode::Unsupported, "Claude Code did not compact: " + *refused});
      }
      if (result.stop_reason == protocol::StopReason::Error) {
        return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code could not compact: " + result.error.value_or("no reason given")});
      }
      return done(std::nullopt);
    }
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
ClaudeCodeAdapter::~ClaudeCodeAdapter() { remove_mcp_config_file(); }

void ClaudeCodeAdapter::remove_mcp_config_file() {
  if (!m_mcp_config_file) return;
  std::error_code error;
  std::filesystem::remove(*m_mcp_config_file, error);
  m_mcp_config_file.reset();
}

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
  capabilities.plans = true;
  capabilities.context_usage = true;
  capabilities.commands = true;
  capabilities.options = true;
  capabilities.mcp = true;
  capabilities.rewind = true;
  capabilities.compact = true;
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
  if (options.fork && options.fork_through_turn_ref) {
    const auto last = last_message_of(*options.fork_through_turn_ref);
    if (!last.empty()) launch.resume_session_at = last;
  }
  launch.partial_messages = options.stream_text;
  m_effort = std::string(kDefaultEffort);
  m_refused_option.reset();
  for (const auto& [id, value] : options.options) {
    if (id != "effort") continue;
    if (!is_effort_level(value)) {
      // A value kept from an earlier CLI (or set before the session knew its options) must not make every start
      // fail: the session starts at the default effort and is told so.
      m_refused_option = "Claude Code has no effort level '" + value.substr(0, 100) + "'; the session runs at the default effort (" +
                         std::string(kDefaultEffort) + ") until another is set";
      spdlog::warn("claude[{}]: {}", options.session_id, *m_refused_option);
      continue;
    }
    m_effort = value;
    launch.effort = value;
  }
  m_mcp_servers = options.mcp_servers;
  if (!m_mcp_servers.empty()) {
    m_mcp_config_file = write_private_file(native::dump(mcp_config(m_mcp_servers)));
    if (!m_mcp_config_file) return done(AdapterError{ErrorCode::AgentUnavailable, "cannot write Claude Code's MCP configuration file"});
    launch.mcp_config_file = m_mcp_config_file->string();
    // In -p mode the CLI connects its MCP servers in the background, and a first prompt sent at once goes to
    // the model without their tools; a session created with servers means them from its first turn.
    environment.set("MCP_CONNECTION_NONBLOCKING", "false");
  }
  if (auto failed = m_cli.spawn(CliLaunch{command_line(launch), options.cwd, std::move(environment),
                                          "claude[" + options.session_id + "]"})) {
    remove_mcp_config_file();
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
  m_prompt_uuid = random_uuid();  // the CLI takes it as the prompt's uuid in its conversation
  m_prompts.push_back(m_prompt_uuid);
  // A command goes as the user would type it: the CLI expands its own commands and skills.
  if (input.command) input.text = "/" + input.command->name + (input.command->arguments.empty() ? "" : " " + input.command->arguments);
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
  write_line(user_message(text, prepared, m_prompt_uuid));
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

void ClaudeCodeAdapter::turn_ended(TurnResult& result) {
  m_turn_running = false;
  if (!m_prompt_uuid.empty()) result.native_turn_ref = m_prompt_uuid + kRefSeparator + m_translator->last_message_uuid();
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

void ClaudeCodeAdapter::set_option(const std::string& option_id, const std::string& value, Completion done) {
  if (option_id != "effort") return done(AdapterError{ErrorCode::Unsupported, "Claude Code has no option '" + option_id + "'"});
  if (!is_effort_level(value)) return done(AdapterError{ErrorCode::Unsupported, "Claude Code has no effort level '" + value + "'"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"});
  const auto id = next_request_id("effort");
  m_pending_controls[id] = PendingControl{std::move(done), std::nullopt, [this, value](const nlohmann::json&) -> std::optional<AdapterError> {
                                            m_effort = value;
                                            m_watch->on_options(OptionsOffered{session_options(m_effort)});
                                            return std::nullopt;
                                          }};
  send_control(set_effort_request(id, value), id, ControlRequestKind::ApplyFlagSettings);
}

void ClaudeCodeAdapter::rewind(const std::string& native_turn_ref, Completion done) {
  if (m_turn_running || m_compact_done) return done(AdapterError{ErrorCode::SessionBusy, "Claude Code is busy with a turn"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"});
  const auto prompt = prompt_of(native_turn_ref);
  const auto at = std::find(m_prompts.begin(), m_prompts.end(), prompt);
  if (prompt.empty() || at == m_prompts.end()) {
    return done(AdapterError{ErrorCode::UnknownTurn, "Claude Code's process knows no such prompt (only turns sent since it started can be rewound)"});
  }
  // The CLI drops only its last prompt: the later ones go first, newest first.
  rewind_from_last(std::vector<std::string>(at, m_prompts.end()), std::move(done));
}

void ClaudeCodeAdapter::rewind_from_last(std::vector<std::string> prompts, Completion done) {
  if (prompts.empty()) return done(std::nullopt);
  const std::string prompt = prompts.back();
  prompts.pop_back();
  const auto id = next_request_id("rewind");
  auto step = [this, prompts = std::move(prompts), done = std::move(done)](std::optional<AdapterError> error) mutable {
    if (error) return done(std::move(error));
    rewind_from_last(std::move(prompts), std::move(done));
  };
  m_pending_controls[id] = PendingControl{std::move(step), std::nullopt, [this, prompt](const nlohmann::json& response) -> std::optional<AdapterError> {
                                            if (!native::bool_or(response, "rewound", false)) {
                                              const auto why = native::string_or_empty(response, "error");
                                              return AdapterError{ErrorCode::Unsupported, "Claude Code did not rewind: " +
                                                                                              (why.empty() ? std::string("no reason given") : why)};
                                            }
                                            std::erase(m_prompts, prompt);
                                            return std::nullopt;
                                          }};
  send_control(rewind_conversation_request(id, prompt), id, ControlRequestKind::RewindConversation);
}

void ClaudeCodeAdapter::compact(Completion done) {
  if (m_turn_running || m_compact_done) return done(AdapterError{ErrorCode::SessionBusy, "Claude Code is busy with a turn"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Claude Code is not running"});
  m_compact_done = std::move(done);
  m_compact_error.reset();
  write_line(user_message("/compact"));
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
  remove_mcp_config_file();
  fail_pending_controls("Claude Code stopped before it answered: " + reason);
  if (auto compacting = std::exchange(m_compact_done, nullptr)) {
    compacting(AdapterError{ErrorCode::AgentUnavailable, "Claude Code stopped before it compacted: " + reason});
  }
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
  if (m_mcp_servers.empty() || init.mcp_servers == m_mcp_seen) return;
  // A server's state changed: mcp_status says why a failed one failed, which init does not.
  m_mcp_seen = init.mcp_servers;
  const auto id = next_request_id("mcp");
  send_control(mcp_status_request(id), id, ControlRequestKind::McpStatus);
}

void ClaudeCodeAdapter::after_initialize() {
  // The CLI has read its MCP configuration by now.
  remove_mcp_config_file();
  m_watch->on_options(OptionsOffered{session_options(m_effort)});
  if (m_refused_option) m_watch->on_error(AgentErrorReport{*std::exchange(m_refused_option, std::nullopt), /*recoverable=*/true});
  if (!m_mcp_servers.empty()) {
    m_watch->on_mcp_status(McpStatusReport{pending_mcp_states(m_mcp_servers)});
    const auto mcp = next_request_id("mcp");
    send_control(mcp_status_request(mcp), mcp, ControlRequestKind::McpStatus);
  }
  // The context before the first turn and the model's window (the CLI counts it with count_tokens calls).
  const auto usage = next_request_id("context");
  send_control(get_context_usage_request(usage), usage, ControlRequestKind::GetContextUsage);
}

void ClaudeCodeAdapter::report_mcp_status(const nlohmann::json& response) {
  const auto* listed = native::array_at(response, "mcpServers");
  if (listed == nullptr) return;
  McpStatusReport report;
  for (const auto& server : m_mcp_servers) {
    protocol::McpServerState state{server.name, server.transport, protocol::McpServerStatusKind::Pending, std::nullopt, std::nullopt};
    for (const auto& entry : *listed) {
      if (native::string_or_empty(entry, "name") != server.name) continue;
      const auto status = native::string_or_empty(entry, "status");
      state.status = mcp_state(status).value_or(protocol::McpServerStatusKind::Pending);
      if (state.status == protocol::McpServerStatusKind::Failed) {
        auto error = native::string_or_empty(entry, "error");
        state.error = error.empty() ? "Claude Code reports the server " + status : error;
      }
      if (const auto* tools = native::array_at(entry, "tools")) state.tools = static_cast<std::int64_t>(tools->size());
    }
    report.servers.push_back(std::move(state));
  }
  m_watch->on_mcp_status(std::move(report));
}

void ClaudeCodeAdapter::on_permission_mode(const std::string& mode) { spdlog::debug("claude: permission mode is now {}", mode); }

void ClaudeCodeAdapter::on_control_result(const ControlResult& result) {
  if (result.kind == ControlRequestKind::Initialize && result.request_id == m_init_request_id) {
    if (result.ok) {
      if (auto models = offered_models(result.response); !models.empty()) m_watch->on_models(ModelsOffered{std::move(models)});
      if (const auto* commands = native::array_at(result.response, "commands")) m_watch->on_commands(CommandsOffered{offered_commands(*commands)});
      m_cli.finish_start(std::nullopt);
      if (m_cli.running()) after_initialize();
      return;
    }
    m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, "Claude Code refused to start: " + result.error});
    m_cli.kill();
    return;
  }
  const std::string refusal = "Claude Code refused " + std::string(request_name(result.kind)) + ": " + result.error;
  if (result.kind == ControlRequestKind::GetContextUsage || result.kind == ControlRequestKind::McpStatus) {
    // Asked by the adapter for its own reports: a refusal costs the report, and is nobody's error.
    if (!result.ok) return spdlog::debug("claude: {}", refusal);
    if (result.kind == ControlRequestKind::McpStatus) return report_mcp_status(result.response);
    const auto window = native::integer_at(result.response, "maxTokens");
    const auto used = native::integer_at(result.response, "totalTokens");
    if (window && *window > 0) m_translator->set_context_window(*window);
    if (used) m_watch->on_usage(UsageUpdate{protocol::ContextUsage{*used, m_translator->context_window(), std::nullopt, std::nullopt, std::nullopt, std::nullopt}});
    return;
  }
  if (auto pending = m_pending_controls.find(result.request_id); pending != m_pending_controls.end()) {
    // A set_model or set_permission_mode the engine waits for: its caller hears the answer, and only it.
    PendingControl control = std::move(pending->second);
    m_pending_controls.erase(pending);
    if (result.ok) return control.done(control.accept ? control.accept(result.response) : std::nullopt);
    if (result.kind == ControlRequestKind::SetModel) m_model = control.previous_model;
    return control.done(AdapterError{ErrorCode::Unsupported, refusal});
  }
  // Nobody waits for the others (an interrupt, the model a turn asked for): a refusal is the turn's news, once.
  if (!result.ok) m_watch->on_error(AgentErrorReport{refusal, /*recoverable=*/true});
}

void ClaudeCodeAdapter::on_compact_failed(const std::string& error) {
  if (m_compact_done) m_compact_error = error;
}

void ClaudeCodeAdapter::on_unanswerable_request(const std::string& request_id, const std::string& subtype) {
  write_line(control_error(request_id, "switchboard does not serve '" + subtype + "' requests"));
}

}  // namespace switchboard::adapters::claude
