#include "acp/AcpAdapter.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "acp/AcpContent.h"
#include "acp/AcpControls.h"
#include "acp/XaiSessionControls.h"
#include "common/CliRuntime.h"
#include "common/NativeJson.h"
#include "common/PermissionText.h"

namespace switchboard::adapters::acp {

using nlohmann::json;
using protocol::ErrorCode;

namespace {

constexpr std::int64_t kProtocolVersion = 1;

AdapterError no_such_mode(std::string_view mode) {
  return AdapterError{ErrorCode::Unsupported, "no mode '" + std::string(mode) + "' (ask, accept-edits, full-access)"};
}

// Kinds whose tools change files: what accept-edits lets through.
bool is_edit(std::string_view tool) { return tool == "edit" || tool == "delete" || tool == "move"; }

// What a tool of an ACP kind does, for the reason a request gives.
AskedAction asked_action(std::string_view tool) {
  if (tool == "execute") return AskedAction::ShellCommand;
  if (is_edit(tool)) return AskedAction::FileChange;
  if (tool == "read") return AskedAction::FileRead;
  if (tool == "fetch") return AskedAction::WebFetch;
  return AskedAction::Other;
}

std::string error_text(const JsonRpcEndpoint::Error& error) {
  std::string text = error.message;
  if (error.data.is_string()) text += ": " + error.data.get<std::string>();
  if (error.data.is_object()) {
    if (auto message = native::string_at(error.data, "message")) text += ": " + *message;
  }
  return text;
}

AgentStatus status_of(protocol::AgentStatusKind kind) {
  AgentStatus status;
  status.status = kind;
  return status;
}

json prompt_blocks(const TurnInput& input) {
  json blocks = json::array({json{{"type", "text"}, {"text", input.text}}});
  // Files as resource links, which every ACP agent takes (images and embedded resources need capabilities).
  for (const auto& attachment : input.attachments) {
    const auto slash = attachment.path.rfind('/');
    json link{{"type", "resource_link"},
              {"uri", "file://" + attachment.path},
              {"name", slash == std::string::npos ? attachment.path : attachment.path.substr(slash + 1)}};
    if (attachment.mime_type) link["mimeType"] = *attachment.mime_type;
    blocks.push_back(std::move(link));
  }
  return blocks;
}

}  // namespace

bool is_mode(std::string_view mode) { return mode == kAskMode || mode == kAcceptEditsMode || mode == kFullAccessMode; }

class AcpAdapter::ModeFilter final : public ForwardingListener {
 public:
  ModeFilter(AcpAdapter& adapter, AdapterListener& engine) : ForwardingListener(engine), m_adapter(adapter) {}

  void on_permission_request(PermissionAsk ask) override {
    const bool let_through = m_adapter.m_mode == kFullAccessMode || (m_adapter.m_mode == kAcceptEditsMode && is_edit(ask.tool));
    if (!let_through) {
      ask.reason = mode_reason(m_adapter.m_mode, asked_action(ask.tool), ask.tool);
      return ForwardingListener::on_permission_request(std::move(ask));
    }
    m_adapter.m_translator.answer_permission(ask.native_id, true);
  }

  void on_status(AgentStatus status) override {
    // During our compact(): each of compacting and compacted once, whether the agent or the adapter says it.
    if (m_adapter.m_compacting && status.status == protocol::AgentStatusKind::Compacting &&
        std::exchange(m_adapter.m_compacting_reported, true)) {
      return;
    }
    if (m_adapter.m_compacting && status.status == protocol::AgentStatusKind::Compacted &&
        std::exchange(m_adapter.m_compacted_reported, true)) {
      return;
    }
    ForwardingListener::on_status(std::move(status));
  }

  void on_turn_end(TurnResult result) override {
    m_adapter.turn_ended();
    if (!m_adapter.m_config.xai_session_controls) return ForwardingListener::on_turn_end(std::move(result));
    m_adapter.name_turn(std::move(result), [this](TurnResult named) { ForwardingListener::on_turn_end(std::move(named)); });
  }

 private:
  AcpAdapter& m_adapter;
};

AcpAdapter::AcpAdapter(boost::asio::io_context& io, AdapterListener& listener, AcpConfig config)
    : m_listener(listener),
      m_config(std::move(config)),
      m_filter(std::make_unique<ModeFilter>(*this, listener)),
      m_translator(*m_filter, m_config.agent),
      m_rpc([this](std::string line) { return m_cli.write_encoded(std::move(line)); }, rpc_handlers(),
            JsonRpcEndpoint::Options{m_config.agent, true}),
      m_cli(io, CliIdentity{m_config.display_name, m_config.agent}, m_config.timeouts,
            {[this](std::string_view line) { m_rpc.feed_line(line); },
             [this](AgentErrorReport error) { m_listener.on_error(std::move(error)); },
             [this](const std::string& reason, const std::string&) { on_process_exit(reason); }}),
      m_self(std::make_shared<AcpAdapter*>(this)) {}

// The CliProcess kills the process group if it still runs: an adapter never leaves an agent behind.
AcpAdapter::~AcpAdapter() = default;

protocol::AgentCapabilities AcpAdapter::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.questions = false;
  capabilities.resume = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  capabilities.images = false;
  // What ACP carries, passed on when the agent sends it (docs/agents/acp.md, "Controls").
  capabilities.plans = true;
  capabilities.context_usage = true;
  capabilities.commands = true;
  capabilities.options = true;
  capabilities.mcp = true;
  // ACP v1 has no rewind, and a fork (session/fork) is unstable: only Grok Build's own extensions do either.
  capabilities.fork = false;
  capabilities.rewind = false;
  capabilities.compact = false;
  return capabilities;
}

protocol::AgentCapabilities AcpAdapter::capabilities() const {
  auto capabilities = static_capabilities();
  capabilities.compact = m_config.compact_command;
  capabilities.fork = m_config.xai_session_controls;
  capabilities.rewind = m_config.xai_session_controls;
  return capabilities;
}

JsonRpcEndpoint::Handlers AcpAdapter::rpc_handlers() {
  JsonRpcEndpoint::Handlers handlers;
  handlers.on_notification = [this](const std::string& method, const json& params) {
    if (method == "session/update") return m_translator.on_update(params);
    m_translator.on_extension(method, params);
  };
  handlers.on_request = [this](const json& id, const std::string& method, const json& params, JsonRpcEndpoint::Reply reply) {
    if (method == "session/request_permission") return m_translator.on_permission_request(id, params, std::move(reply));
    // We advertise no file system or terminal capability, so an agent has no reason to ask for them.
    reply(JsonRpcEndpoint::method_not_found(method));
  };
  return handlers;
}

void AcpAdapter::start(const StartOptions& options, Completion done) {
  const std::string mode = options.mode.value_or(std::string(kAskMode));
  if (!is_mode(mode)) return done(no_such_mode(mode));
  m_mode = mode;
  m_cwd = options.cwd;
  m_model = options.model;
  m_resume_session_id = options.resume_provider_session_id;
  m_fork = options.fork;
  m_fork_through_ref = options.fork_through_turn_ref;
  m_mcp_servers = options.mcp_servers;
  m_start_options = options.options;
  m_translator.set_hidden_commands(m_config.hidden_commands);
  EnvironmentChanges changes = m_config.environment;
  if (m_config.prepare) {
    auto prepared = m_config.prepare();
    if (auto* refused = std::get_if<std::string>(&prepared)) {
      return done(AdapterError{ErrorCode::AgentUnavailable, m_config.display_name + " could not be configured: " + *refused});
    }
    auto& own = std::get<EnvironmentChanges>(prepared);
    changes.set.insert(changes.set.end(), own.set.begin(), own.set.end());
    changes.unset.insert(changes.unset.end(), own.unset.begin(), own.unset.end());
  }
  std::vector<std::string> argv{m_config.executable};
  argv.insert(argv.end(), m_config.arguments.begin(), m_config.arguments.end());
  if (auto failed = m_cli.spawn(CliLaunch{std::move(argv), options.cwd, environment_with(changes),
                                          m_config.agent + "[" + options.session_id + "]"})) {
    return done(*failed);
  }
  // Usable once the session is open: initialize → session/new or session/load (→ session/set_model → the options
  // set before start).
  m_cli.begin_start(std::move(done));
  const json params{{"protocolVersion", kProtocolVersion},
                    {"clientCapabilities", {{"fs", {{"readTextFile", false}, {"writeTextFile", false}}}, {"terminal", false}}},
                    {"clientInfo", {{"name", "switchboard"}, {"version", m_config.client_version}}}};
  m_rpc.request("initialize", params, [this](JsonRpcEndpoint::Outcome outcome) { on_initialized(outcome); });
}

void AcpAdapter::on_initialized(const JsonRpcEndpoint::Outcome& outcome) {
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) {
    return fail_start(m_config.display_name + " refused to initialize: " + error_text(*error));
  }
  const auto& result = std::get<json>(outcome);
  const auto version = native::integer_at(result, "protocolVersion");
  if (version != kProtocolVersion) {
    return fail_start(m_config.display_name + " speaks ACP version " + (version ? std::to_string(*version) : "?") +
                      ", not " + std::to_string(kProtocolVersion));
  }
  if (const auto* capabilities = native::object_at(result, "agentCapabilities")) {
    m_can_load = native::bool_or(*capabilities, "loadSession", false);
    if (const auto* mcp = native::object_at(*capabilities, "mcpCapabilities")) m_http_mcp = native::bool_or(*mcp, "http", false);
  }
  // Every ACP agent takes stdio servers; HTTP ones only where its mcpCapabilities say so.
  std::vector<protocol::McpServerState> refused;
  json params{{"cwd", m_cwd}, {"mcpServers", mcp_servers_param(m_mcp_servers, m_http_mcp, m_config.hidden_variables, refused)}};
  std::vector<protocol::McpServerState> states = refused;
  for (const auto& server : m_mcp_servers) {
    const bool was_refused = std::any_of(refused.begin(), refused.end(), [&](const auto& state) { return state.name == server.name; });
    if (was_refused) continue;
    states.push_back(protocol::McpServerState{server.name, server.transport,
                                              m_config.reports_mcp_status ? protocol::McpServerStatusKind::Pending
                                                                          : protocol::McpServerStatusKind::Connected,
                                              std::nullopt, std::nullopt});
  }
  m_translator.set_mcp_servers(std::move(states));
  if (!m_config.session_meta.is_null()) params["_meta"] = m_config.session_meta;
  if (m_resume_session_id) {
    if (!m_can_load) return fail_start(m_config.display_name + " cannot load a session (no loadSession capability)", ErrorCode::ConversationLost);
    if (m_fork && m_config.xai_session_controls) {
      // The copy is made first (through the fork point's prompt), then loaded like any session of the agent's.
      std::optional<std::int64_t> through;
      if (m_fork_through_ref) {
        const auto point = parse_prompt_point_ref(*m_fork_through_ref);
        if (!point || point->session_id != *m_resume_session_id) {
          return fail_start(m_config.display_name + " has no turn " + m_fork_through_ref->substr(0, 100) + " in session " +
                                *m_resume_session_id + " to fork from",
                            ErrorCode::UnknownTurn);
        }
        through = point->index;
      }
      m_rpc.request(std::string(kForkMethod), fork_params(*m_resume_session_id, m_cwd, through),
                    [this, params = std::move(params)](JsonRpcEndpoint::Outcome answer) mutable { on_forked(answer, std::move(params)); });
      return;
    }
    return open_session(std::move(params));
  }
  m_rpc.request("session/new", std::move(params), [this](JsonRpcEndpoint::Outcome answer) { on_session_opened(answer, false); });
}

void AcpAdapter::open_session(json params) {
  params["sessionId"] = *m_resume_session_id;
  // The replay of the conversation that comes before the answer is not news to the engine.
  m_translator.set_session(*m_resume_session_id);
  m_translator.set_replaying(true);
  m_rpc.request("session/load", std::move(params), [this](JsonRpcEndpoint::Outcome answer) { on_session_opened(answer, true); });
}

void AcpAdapter::on_forked(const JsonRpcEndpoint::Outcome& outcome, json params) {
  const std::string source = m_resume_session_id.value_or("");
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) {
    // Grok's words for a source whose directory is gone (deleted, or never saved): "Internal error: No such file
    // or directory (os error 2)". The engine then starts the fork in a new conversation seeded with what the
    // source held through the fork point; any other refusal fails the start.
    const bool lost = !m_rpc.closed() && error_text(*error).find("os error 2") != std::string::npos;
    return fail_start(m_config.display_name + " could not fork session " + source + ": " + error_text(*error),
                      lost ? ErrorCode::ConversationLost : ErrorCode::AgentUnavailable);
  }
  const auto copy = forked_session_id(std::get<json>(outcome));
  if (!copy) return fail_start(m_config.display_name + " answered the fork of session " + source + " without the new session's id");
  // From here on the session is the copy: loaded now, and resumed by its own id later (on_provider_session).
  m_resume_session_id = *copy;
  m_fork = false;
  open_session(std::move(params));
}

void AcpAdapter::on_session_opened(const JsonRpcEndpoint::Outcome& outcome, bool loaded) {
  m_translator.set_replaying(false);
  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&outcome)) {
    // A load the agent refuses while it runs: the conversation is not there (deleted, or never saved). The engine
    // then continues in a new session seeded with its own transcript.
    const bool lost = loaded && !m_rpc.closed();
    return fail_start(m_config.display_name + " could not " + (loaded ? "load the session: " : "open a session: ") + error_text(*error),
                      lost ? ErrorCode::ConversationLost : ErrorCode::AgentUnavailable);
  }
  if (!loaded) {
    const auto id = native::string_at(std::get<json>(outcome), "sessionId");
    if (!id || id->empty()) return fail_start(m_config.display_name + " opened a session without a sessionId");
    m_translator.set_session(*id);
  }
  m_translator.on_session_opened(std::get<json>(outcome), loaded);
  m_listener.on_provider_session(ProviderSession{m_translator.session()});
  if (m_config.xai_session_controls) {
    // A loaded conversation has prompts already: the next turn's index follows the last of them.
    if (loaded) return sync_prompt_points([this] { continue_start(); });
    m_last_prompt_index = -1;
  }
  continue_start();
}

void AcpAdapter::continue_start() {
  if (!m_model) return apply_start_options(0);
  json params{{"sessionId", m_translator.session()}, {"modelId", *m_model}};
  m_rpc.request("session/set_model", std::move(params), [this](JsonRpcEndpoint::Outcome answer) {
    if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
      return fail_start(m_config.display_name + " refused the model '" + m_model.value_or("") + "': " + error_text(*error),
                        ErrorCode::InvalidParams);
    }
    m_translator.set_current_model(*m_model);
    apply_start_options(0);
  });
}

void AcpAdapter::sync_prompt_points(std::function<void()> then) {
  m_rpc.request(std::string(kRewindPointsMethod), json{{"sessionId", m_translator.session()}},
                [weak = std::weak_ptr<AcpAdapter*>(m_self), then = std::move(then)](JsonRpcEndpoint::Outcome answer) {
                  auto self = weak.lock();
                  if (!self) return;
                  const auto* points = std::get_if<json>(&answer);
                  (*self)->m_last_prompt_index = points != nullptr ? last_prompt_index(*points) : std::nullopt;
                  if (!(*self)->m_last_prompt_index) {
                    spdlog::warn("{}: no rewind points for session {}: its turns cannot be fork or rewind points", (*self)->m_config.agent,
                                 (*self)->m_translator.session());
                  }
                  then();
                });
}

void AcpAdapter::name_turn(TurnResult result, std::function<void(TurnResult)> forward) {
  // Grok's promptId is not what its fork and rewind take: the prompt index is, and Grok does not say it in the
  // prompt's answer. The turn's prompt is the one its rewind points gained (a command such as `/compact` adds
  // none, and names no turn).
  result.native_turn_ref.reset();
  if (m_rpc.closed() || !m_cli.running()) {
    m_last_prompt_index.reset();  // the next start reads them again
    return forward(std::move(result));
  }
  const auto before = m_last_prompt_index;
  const std::string session = m_translator.session();
  m_rpc.request(std::string(kRewindPointsMethod), json{{"sessionId", session}},
                [weak = std::weak_ptr<AcpAdapter*>(m_self), before, session, result = std::move(result),
                 forward = std::move(forward)](JsonRpcEndpoint::Outcome answer) mutable {
                  auto self = weak.lock();
                  if (!self) return;
                  const auto* points = std::get_if<json>(&answer);
                  const auto last = points != nullptr ? last_prompt_index(*points) : std::nullopt;
                  (*self)->m_last_prompt_index = last;
                  if (before && last && *last > *before) result.native_turn_ref = prompt_point_ref(PromptPoint{session, *last});
                  forward(std::move(result));
                });
}

void AcpAdapter::apply_start_options(std::size_t next) {
  // The options set before the agent had said which it has, one session/set_config_option each. One the agent
  // does not have, or refuses, is reported and left out: the session starts with the agent's own value.
  if (next >= m_start_options.size()) return finish_start();
  const auto& [option_id, value] = m_start_options[next];
  set_option(option_id, value, [this, next, option_id = option_id](std::optional<AdapterError> error) {
    if (error) m_listener.on_error(AgentErrorReport{"the option '" + option_id + "' was not applied: " + error->message, true});
    apply_start_options(next + 1);
  });
}

void AcpAdapter::finish_start() {
  if (m_cli.starting()) m_cli.finish_start(std::nullopt);
}

void AcpAdapter::fail_start(const std::string& why, ErrorCode code) {
  // Not running: the process is gone, and on_process_exit() reports why.
  if (!m_cli.running()) return;
  m_cli.finish_start(AdapterError{code, why});
  m_cli.kill();
}

void AcpAdapter::send(TurnInput input) {
  m_translator.turn_started(input.turn_id);
  if (m_translator.session().empty() || !m_cli.running()) {
    // start() succeeded, so a session is open; a caller that sends before that is a bug, answered as an error.
    return m_translator.turn_failed(m_config.display_name + " has no open session");
  }
  if (input.model && input.model != m_model) {
    const std::string model = *input.model;
    json params{{"sessionId", m_translator.session()}, {"modelId", model}};
    m_rpc.request("session/set_model", std::move(params),
                  [weak = std::weak_ptr<AcpAdapter*>(m_self), input = std::move(input)](JsonRpcEndpoint::Outcome answer) mutable {
                    auto self = weak.lock();
                    if (!self) return;
                    if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
                      return (*self)->m_translator.turn_failed((*self)->m_config.display_name + " refused the model '" +
                                                               input.model.value_or("") + "': " + error_text(*error));
                    }
                    (*self)->m_model = input.model;
                    (*self)->m_translator.set_current_model(*input.model);
                    (*self)->send_prompt(std::move(input));
                  });
    return;
  }
  send_prompt(std::move(input));
}

void AcpAdapter::send_prompt(TurnInput input) {
  if (!m_translator.turn_running()) return;  // cancelled while the model was being set
  json params{{"sessionId", m_translator.session()}, {"prompt", prompt_blocks(input)}};
  m_rpc.request("session/prompt", std::move(params), [this](JsonRpcEndpoint::Outcome outcome) { m_translator.on_prompt_answer(outcome); });
}

void AcpAdapter::cancel() {
  if (!m_translator.turn_running()) return;
  // ACP's cancel: the notification first, so that the agent knows why its permission requests, answered
  // `cancelled` next, were refused (else it may take them for a user's reject and end the turn as done).
  m_rpc.notify("session/cancel", json{{"sessionId", m_translator.session()}});
  m_translator.cancel_turn();
  // The agent answers the prompt `cancelled` within milliseconds; one that does not is stuck and is replaced:
  // killing it ends the turn, and the next send starts a fresh process that loads the session.
  m_cli.arm_cancel_deadline([this] { return m_translator.turn_running(); }, "session/prompt answer", "agent");
}

void AcpAdapter::turn_ended() { m_cli.disarm_cancel_deadline(); }

void AcpAdapter::answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) {
  // Every allow is a one-time allow and every deny a one-time reject: the engine's rule book keeps the session,
  // project and always rules itself (docs/agents/acp.md, "Permissions"). ACP has no place for a deny message.
  if (!answer.allow && answer.message && !answer.message->empty()) {
    spdlog::debug("{}: a deny message cannot be passed on over ACP: {}", m_config.agent, *answer.message);
  }
  m_translator.answer_permission(native_id, answer.allow);
  done(std::nullopt);
}

void AcpAdapter::answer_question(const std::string& native_id, QuestionAnswer, Completion done) {
  done(AdapterError{ErrorCode::Unsupported, m_config.display_name + " asks no questions over ACP (no question " + native_id + ")"});
}

void AcpAdapter::set_model(const std::string& model, Completion done) {
  if (!m_cli.running() || m_translator.session().empty()) {
    return done(AdapterError{ErrorCode::AgentUnavailable, m_config.display_name + " is not running"});
  }
  json params{{"sessionId", m_translator.session()}, {"modelId", model}};
  m_rpc.request("session/set_model", std::move(params),
                [weak = std::weak_ptr<AcpAdapter*>(m_self), model, done = std::move(done)](JsonRpcEndpoint::Outcome answer) {
                  auto self = weak.lock();
                  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
                    const auto code = error->code == JsonRpcEndpoint::kAgentGone ? ErrorCode::AgentUnavailable : ErrorCode::InvalidParams;
                    return done(AdapterError{code, "the model '" + model + "' was refused: " + error_text(*error)});
                  }
                  if (self) {
                    (*self)->m_model = model;
                    (*self)->m_translator.set_current_model(model);
                  }
                  done(std::nullopt);
                });
}

void AcpAdapter::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  m_mode = mode;
  done(std::nullopt);
}

void AcpAdapter::set_option(const std::string& option_id, const std::string& value, Completion done) {
  if (!m_cli.running() || m_translator.session().empty()) {
    return done(AdapterError{ErrorCode::AgentUnavailable, m_config.display_name + " is not running"});
  }
  const auto& offered = m_translator.options();
  const auto config_id = offered.config_ids.find(option_id);
  const auto option = std::find_if(offered.options.begin(), offered.options.end(), [&](const auto& each) { return each.id == option_id; });
  if (config_id == offered.config_ids.end() || option == offered.options.end()) {
    return done(AdapterError{ErrorCode::InvalidParams, m_config.display_name + " has no option '" + option_id + "'"});
  }
  json params{{"sessionId", m_translator.session()}, {"configId", config_id->second}, {"value", config_value(*option, value)}};
  // ACP tells a boolean value by its type; a value id (select) goes without one.
  if (option->kind == protocol::SessionOptionKind::Boolean) params["type"] = "boolean";
  m_rpc.request("session/set_config_option", std::move(params),
                [weak = std::weak_ptr<AcpAdapter*>(m_self), option_id, done = std::move(done)](JsonRpcEndpoint::Outcome answer) {
                  auto self = weak.lock();
                  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
                    const auto code = error->code == JsonRpcEndpoint::kAgentGone ? ErrorCode::AgentUnavailable : ErrorCode::InvalidParams;
                    return done(AdapterError{code, "the option '" + option_id + "' was refused: " + error_text(*error)});
                  }
                  // The answer is the whole list with the new value (ACP): reported as the options in force.
                  if (self) (*self)->m_translator.on_config_options(std::get<json>(answer));
                  done(std::nullopt);
                });
}

void AcpAdapter::compact(Completion done) {
  if (!m_cli.running() || m_translator.session().empty()) {
    return done(AdapterError{ErrorCode::AgentUnavailable, m_config.display_name + " is not running"});
  }
  if (m_translator.turn_running() || m_compacting) {
    return done(AdapterError{ErrorCode::SessionBusy, m_config.display_name + " is busy with a turn or a compaction"});
  }
  // The agent's command list arrives after the session opened: before it does, an agent configured with the
  // command (Grok Build) is taken at its word.
  if (!m_translator.offers_command("compact").value_or(m_config.compact_command)) {
    return done(AdapterError{ErrorCode::Unsupported, m_config.display_name + " offers no `compact` command to summarize its conversation with"});
  }
  m_compacting = true;
  m_compacting_reported = false;
  m_compacted_reported = false;
  m_filter->on_status(status_of(protocol::AgentStatusKind::Compacting));
  // Outside any turn of ours: the summary the agent streams meanwhile belongs to no turn, and the translator drops
  // it (counted in its line stats) as it does any text between turns.
  json params{{"sessionId", m_translator.session()}, {"prompt", json::array({json{{"type", "text"}, {"text", "/compact"}}})}};
  m_rpc.request("session/prompt", std::move(params),
                [weak = std::weak_ptr<AcpAdapter*>(m_self), done = std::move(done)](JsonRpcEndpoint::Outcome answer) {
                  auto self = weak.lock();
                  if (self) (*self)->m_compacting = false;
                  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
                    // The agent's refusal or its failure to summarize: the agent is what is unavailable for it.
                    return done(AdapterError{ErrorCode::AgentUnavailable, "the compaction failed: " + error_text(*error)});
                  }
                  if (self && !(*self)->m_compacted_reported) (*self)->m_filter->on_status(status_of(protocol::AgentStatusKind::Compacted));
                  // A compaction may change the conversation's prompts: the next turn's index is read again.
                  if (self && (*self)->m_config.xai_session_controls) return (*self)->sync_prompt_points([done] { done(std::nullopt); });
                  done(std::nullopt);
                });
}

void AcpAdapter::rewind(const std::string& native_turn_ref, Completion done) {
  if (!m_config.xai_session_controls) return AgentAdapter::rewind(native_turn_ref, std::move(done));
  if (!m_cli.running() || m_translator.session().empty()) {
    return done(AdapterError{ErrorCode::AgentUnavailable, m_config.display_name + " is not running"});
  }
  if (m_translator.turn_running() || m_compacting) {
    return done(AdapterError{ErrorCode::SessionBusy, m_config.display_name + " is busy with a turn or a compaction"});
  }
  // A turn of another conversation (the one a fork copied, or one that was lost) has no index in this one.
  const auto point = parse_prompt_point_ref(native_turn_ref);
  if (!point || point->session_id != m_translator.session() || (m_last_prompt_index && point->index > *m_last_prompt_index)) {
    return done(AdapterError{ErrorCode::UnknownTurn, m_config.display_name + "'s session " + m_translator.session() + " has no turn " +
                                                         native_turn_ref.substr(0, 100)});
  }
  m_rpc.request(std::string(kRewindMethod), rewind_params(point->session_id, point->index),
                [weak = std::weak_ptr<AcpAdapter*>(m_self), index = point->index, done = std::move(done)](JsonRpcEndpoint::Outcome answer) {
                  if (const auto* error = std::get_if<JsonRpcEndpoint::Error>(&answer)) {
                    return done(AdapterError{ErrorCode::AgentUnavailable, "the rewind failed: " + error_text(*error)});
                  }
                  if (auto refused = rewind_refusal(std::get<json>(answer))) {
                    return done(AdapterError{ErrorCode::AgentUnavailable, "the rewind was refused: " + *refused});
                  }
                  // The prompts from `index` on are gone: the next one takes its place.
                  if (auto self = weak.lock()) (*self)->m_last_prompt_index = index - 1;
                  done(std::nullopt);
                });
}

void AcpAdapter::stop() {
  if (!m_cli.running() || m_cli.stop_requested()) return;
  // EOF on stdin ends an ACP agent; then TERM, then KILL, each after the configured grace.
  m_cli.stop();
}

void AcpAdapter::on_process_exit(const std::string& reason) {
  // What is still unanswered fails (a running prompt ends the turn as an error); then the start or the session.
  m_rpc.close(reason);
  if (m_translator.turn_running()) m_translator.turn_failed(reason);
  if (m_cli.starting()) return m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, reason});
  if (std::exchange(m_stopped_reported, true)) return;
  m_listener.on_unavailable(Unavailable{reason});
}

std::optional<std::string> first_version_in(std::string_view output) {
  for (std::size_t i = 0; i < output.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(output[i])) || (i > 0 && std::isalnum(static_cast<unsigned char>(output[i - 1])))) continue;
    std::size_t end = i;
    int dots = 0;
    while (end < output.size() && (std::isdigit(static_cast<unsigned char>(output[end])) || output[end] == '.')) {
      if (output[end] == '.') ++dots;
      ++end;
    }
    while (end > i && output[end - 1] == '.') {
      --end;
      --dots;
    }
    if (dots >= 1) return std::string(output.substr(i, end - i));
    i = end;
  }
  return std::nullopt;
}

AgentDescriptor acp_agent(boost::asio::io_context& io, AcpConfig config) {
  VersionProbeSpec probe;
  probe.agent = config.agent;
  probe.executable = config.executable;
  probe.install_hint = config.install_hint.empty() ? install_hint(config.agent) : config.install_hint;
  probe.parse_version = [](std::string_view output) { return first_version_in(output); };
  probe.capabilities = AcpAdapter::static_capabilities();
  probe.capabilities.compact = config.compact_command;
  probe.capabilities.fork = config.xai_session_controls;
  probe.capabilities.rewind = config.xai_session_controls;
  probe.modes = {std::string(kAskMode), std::string(kAcceptEditsMode), std::string(kFullAccessMode)};
  std::string name = config.agent;
  auto runtime = std::make_shared<CliRuntime>(io, std::move(probe),
                                              [&io, config = std::move(config)](AdapterListener& listener, const std::string& executable) {
                                                auto own = config;
                                                own.executable = executable;
                                                return std::make_unique<AcpAdapter>(io, listener, std::move(own));
                                              });
  return describe_runtime(std::move(name), std::move(runtime));
}

}  // namespace switchboard::adapters::acp
