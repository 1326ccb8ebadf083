#include "pi/PiAdapter.h"

#include <algorithm>
#include <array>

#include <spdlog/spdlog.h>

#include "common/NativeJson.h"
#include "common/OfferedModels.h"
#include "pi/PiControls.h"
#include "pi/PiExtension.h"
#include "pi/PiPermissions.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::adapters::pi {
namespace {

using nlohmann::json;
using protocol::ErrorCode;

constexpr std::array kThinkingLevels = {
    std::string_view("off"),    std::string_view("minimal"), std::string_view("low"),
    std::string_view("medium"), std::string_view("high"),    std::string_view("xhigh"),
    std::string_view("max"),
};

AdapterError no_such_mode(const std::string& mode) {
  return AdapterError{ErrorCode::Unsupported, "Pi has no mode '" + mode + "' (ask, accept-edits, full-access)"};
}

std::string response_error(const json& response) {
  return native::string_at(response, "error").value_or("no reason given").substr(0, 500);
}

// The prompt's text, with the paths of its attachments: Pi's prompt takes images as data only, and its read tool
// reads a file the model is pointed at. A command is sent as `/name arguments`: Pi expands a prompt template or a
// skill, or runs an extension's command, from that form.
std::string prompt_text(const TurnInput& input) {
  std::string text = input.text;
  if (input.command) {
    text = "/" + input.command->name;
    if (!input.command->arguments.empty()) text += " " + input.command->arguments;
  }
  for (const auto& attachment : input.attachments) text += "\n\n[attached file: " + attachment.path + "]";
  return text;
}

}  // namespace

ModelChoice parse_model_choice(const std::string& text) {
  ModelChoice choice;
  std::string rest = text;
  if (const auto colon = rest.rfind(':'); colon != std::string::npos && one_of(kThinkingLevels, std::string_view(rest).substr(colon + 1))) {
    choice.thinking = rest.substr(colon + 1);
    rest.resize(colon);
  }
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    choice.provider = rest.substr(0, slash);
    rest.erase(0, slash + 1);
  }
  choice.model = rest;
  return choice;
}

std::vector<protocol::ModelInfo> offered_models(const json& response, const std::string& pi_default) {
  const auto* data = native::object_at(response, "data");
  const auto* list = data != nullptr ? native::array_at(*data, "models") : nullptr;
  if (list == nullptr) return {};
  json named = json::array();
  for (const auto& model : *list) {
    const auto provider = native::string_at(model, "provider");
    const auto id = native::string_at(model, "id");
    if (!provider || !id || provider->empty() || id->empty()) continue;
    json entry = model;
    entry["id"] = *provider + "/" + *id;
    named.push_back(std::move(entry));
  }
  auto models = native::offered_models(named, {.id = "id", .name = "name"});
  for (auto& model : models) {
    if (!pi_default.empty() && model.id == pi_default) model.is_default = true;
  }
  return models;
}

// Everything the translator reports goes to the engine, but for two things seen on the way: the end of a turn
// clears the adapter's turn bookkeeping first (the engine may send the next prompt from on_turn_end), and a
// permission the session's mode lets through is answered here, without asking the engine.
class PiAdapter::Watch : public ForwardingListener {
 public:
  Watch(PiAdapter& adapter, AdapterListener& engine) : ForwardingListener(engine), m_adapter(adapter) {}

  void on_permission_request(PermissionAsk ask) override {
    if (!mode_allows(m_adapter.m_mode, ask.tool)) {
      ask.reason = mode_reason(m_adapter.m_mode, asked_action(ask.tool), ask.tool);
      return ForwardingListener::on_permission_request(std::move(ask));
    }
    if (m_adapter.m_translator->take_dialog(ask.native_id)) m_adapter.answer_dialog(ask.native_id, PermissionAnswer{true, std::nullopt});
  }

  void on_turn_end(TurnResult result) override {
    m_adapter.turn_ended();
    m_adapter.finish_turn(std::move(result));
  }

 private:
  PiAdapter& m_adapter;
};

PiAdapter::PiAdapter(boost::asio::io_context& io, AdapterListener& listener, PiRuntime& runtime)
    : m_listener(listener),
      m_runtime(runtime),
      m_watch(std::make_unique<Watch>(*this, listener)),
      m_translator(std::make_unique<PiTranslator>(*m_watch, [this](const json& message) { m_cli.write_line(message); })),
      m_cli(io, CliIdentity{"Pi", "pi"}, runtime.config().timeouts,
            {[this](std::string_view line) { on_line(line); },
             [this](AgentErrorReport error) { m_listener.on_error(std::move(error)); },
             [this](const std::string& reason, const std::string&) { on_process_exit(reason); }}) {}

// The CliProcess kills the process group if it still runs: an adapter never leaves a Pi behind.
PiAdapter::~PiAdapter() {
  *m_alive = false;
  forget_mcp_file();
}

protocol::AgentCapabilities PiAdapter::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.questions = false;
  capabilities.resume = true;
  capabilities.history_list = true;
  capabilities.history_read = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  capabilities.images = false;
  capabilities.fork = true;
  // Pi has no plan or todo tool of its own (only an example extension), so there is no plan to report.
  capabilities.plans = false;
  capabilities.context_usage = true;
  capabilities.commands = true;
  capabilities.options = true;
  capabilities.mcp = true;
  capabilities.rewind = true;
  capabilities.compact = true;
  return capabilities;
}

void PiAdapter::start(const StartOptions& options, Completion done) {
  if (options.mode && !is_mode(*options.mode)) return done(no_such_mode(*options.mode));
  if (options.mode) m_mode = *options.mode;
  m_start_done = std::move(done);
  // Discovery picks the Node; it has usually finished long before the first session starts.
  m_runtime.when_ready([this, alive = std::weak_ptr<bool>(m_alive), options](const std::optional<PiLauncher>& launcher,
                                                                            const std::string& problem) {
    if (alive.expired()) return;
    if (!launcher) return std::exchange(m_start_done, nullptr)(AdapterError{ErrorCode::AgentUnavailable, problem});
    launch(*launcher, options);
  });
}

void PiAdapter::launch(const PiLauncher& launcher, const StartOptions& options) {
  auto done = std::exchange(m_start_done, nullptr);
  const auto extension = install_permission_extension(m_runtime.config().extension_dir);
  if (const auto* refused = std::get_if<std::string>(&extension)) {
    return done(AdapterError{ErrorCode::AgentUnavailable, "Pi could not be given its permission extension: " + *refused});
  }
  m_resume_id = options.resume_provider_session_id;
  const bool fork = options.fork && m_resume_id;
  // A fork is a new session (an id of ours, as a new one has, so the session knows it from the start) holding a
  // copy of the conversation so far.
  const std::string session = fork ? random_uuid() : m_resume_id.value_or(random_uuid());
  std::vector<std::string> argv{launcher.node, launcher.script, "--mode", "rpc", "--session-id", session,
                                "-e", std::get<std::filesystem::path>(extension).string()};
  if (fork) {
    argv.push_back("--fork");
    argv.push_back(*m_resume_id);
    m_fork_through = options.fork_through_turn_ref;
  }
  m_start_options = options.options;
  m_mcp_servers = options.mcp_servers;
  if (!m_mcp_servers.empty()) {
    const auto& dir = m_runtime.config().extension_dir;
    const auto mcp = install_mcp_extension(dir);
    if (const auto* refused = std::get_if<std::string>(&mcp)) {
      return done(AdapterError{ErrorCode::AgentUnavailable, "Pi could not be given its MCP extension: " + *refused});
    }
    const auto servers = write_mcp_servers(dir, options.session_id, native::dump(mcp_registrations(m_mcp_servers)));
    if (const auto* refused = std::get_if<std::string>(&servers)) {
      return done(AdapterError{ErrorCode::AgentUnavailable, "Pi could not be given its MCP servers: " + *refused});
    }
    m_mcp_file = std::get<std::filesystem::path>(servers);
    argv.insert(argv.end(), {"-e", std::get<std::filesystem::path>(mcp).string(), "--switchboard-mcp", m_mcp_file.string()});
  }
  if (options.model && !options.model->empty()) {
    argv.push_back("--model");
    argv.push_back(*options.model);
    m_model = *options.model;
  }
  // Pi's own configuration (~/.pi/agent, PI_CODING_AGENT_DIR) is the user's: the environment goes on unchanged.
  if (auto failed = m_cli.spawn(CliLaunch{std::move(argv), options.cwd, environment_with({}),
                                          "pi[" + options.session_id + "]"})) {
    forget_mcp_file();  // no Pi will read it
    return done(*failed);
  }
  // Usable once Pi answers get_state: it has loaded the session (new or resumed) by then.
  m_cli.begin_start(std::move(done));
  request(json{{"type", "get_state"}}, [this](bool ok, const json& response) { on_state(ok, response); });
}

void PiAdapter::on_state(bool ok, const json& response) {
  if (!m_cli.starting()) return;
  if (!ok) return fail_start(AdapterError{ErrorCode::AgentUnavailable, "Pi refused get_state: " + response_error(response)});
  const auto* state = native::object_at(response, "data");
  // Pi makes a session it cannot find under the id it is given, and a fork of one it cannot find is as empty: a
  // session to resume or fork that comes back empty was lost (its file deleted); the engine goes on in a new one,
  // seeded with what it stored.
  if (m_resume_id && state != nullptr && native::integer_at(*state, "messageCount").value_or(0) == 0) {
    return fail_start(AdapterError{ErrorCode::ConversationLost, "Pi has no session " + *m_resume_id + " for this directory"});
  }
  if (m_fork_through) return trim_fork(*std::exchange(m_fork_through, std::nullopt));
  const auto session = state != nullptr ? native::string_at(*state, "sessionId") : std::nullopt;
  if (!session) return fail_start(AdapterError{ErrorCode::AgentUnavailable, "Pi's state names no session"});
  // Pi's own default is the model get_state names when the session chose none.
  std::string pi_default;
  if (const auto* model = native::object_at(*state, "model")) {
    m_provider = native::string_or_empty(*model, "provider");
    if (m_model.empty()) m_model = pi_default = m_provider + "/" + native::string_or_empty(*model, "id");
  }
  m_watch->on_provider_session(ProviderSession{*session});
  // The model list does not hold up the start: it reaches the engine when Pi answers.
  request(json{{"type", "get_available_models"}}, [this, pi_default](bool listed, const json& list) {
    if (!listed) return spdlog::debug("pi: get_available_models refused: {}", response_error(list));
    if (auto models = offered_models(list, pi_default); !models.empty()) m_watch->on_models(ModelsOffered{std::move(models)});
  });
  prepare_first_turn(std::exchange(m_start_options, {}));
}

void PiAdapter::trim_fork(const std::string& through) {
  request(json{{"type", "get_fork_messages"}}, [this, through](bool ok, const json& response) {
    if (!m_cli.starting()) return;
    if (!ok) return fail_start(AdapterError{ErrorCode::AgentUnavailable, "Pi refused get_fork_messages: " + response_error(response)});
    const auto after = entry_after(user_entry_ids(response), through);
    if (!after) return fail_start(AdapterError{ErrorCode::UnknownTurn, "Pi's conversation has no turn " + through.substr(0, 100) + " to fork at"});
    auto state_again = [this] {
      request(json{{"type", "get_state"}}, [this](bool state_ok, const json& state) { on_state(state_ok, state); });
    };
    // The fork point is the last turn: the copy keeps everything, as it is.
    if (after->empty()) return state_again();
    // Pi's fork before the next turn's user message: a new session (an id of Pi's) holding what came before it.
    request(json{{"type", "fork"}, {"entryId", *after}}, [this, state_again](bool forked, const json& answer) {
      if (!m_cli.starting()) return;
      if (!forked) return fail_start(AdapterError{ErrorCode::AgentUnavailable, "Pi could not fork: " + response_error(answer)});
      state_again();
    });
  });
}

void PiAdapter::prepare_first_turn(std::vector<std::pair<std::string, std::string>> options) {
  for (auto it = options.begin(); it != options.end(); ++it) {
    if (it->first != kEffortOption) {
      spdlog::warn("pi: no option '{}' to set at start", it->first);
      continue;
    }
    // One at a time, each before the start is done, so the first prompt runs with them.
    const std::string level = it->second;
    std::vector rest(std::next(it), options.end());
    return request(json{{"type", "set_thinking_level"}, {"level", level}}, [this, level, rest](bool ok, const json& response) {
      if (!ok) spdlog::warn("pi: thinking level {} refused at start: {}", level, response_error(response));
      prepare_first_turn(rest);
    });
  }
  // The latest user message before any prompt of ours: a turn that ends on the same one wrote none.
  request(json{{"type", "get_fork_messages"}}, [this](bool ok, const json& response) {
    if (!m_cli.starting()) return;
    if (ok) {
      const auto ids = user_entry_ids(response);
      m_last_user_entry = ids.empty() ? std::string() : ids.back();
    }
    m_cli.finish_start(std::nullopt);
    report_controls();
  });
}

void PiAdapter::report_controls() {
  request(json{{"type", "get_commands"}}, [this](bool ok, const json& response) {
    if (!ok) return spdlog::debug("pi: get_commands refused: {}", response_error(response));
    m_watch->on_commands(CommandsOffered{offered_commands(response)});
  });
  report_options();
  report_usage();
  if (!m_mcp_servers.empty()) report_mcp_status();
}

void PiAdapter::report_options() {
  request(json{{"type", "get_available_thinking_levels"}}, [this](bool ok, const json& response) {
    if (!ok) return spdlog::debug("pi: get_available_thinking_levels refused: {}", response_error(response));
    request(json{{"type", "get_state"}}, [this, levels = thinking_levels(response)](bool state_ok, const json& state) {
      if (!state_ok) return;
      const auto* data = native::object_at(state, "data");
      const std::string current = data != nullptr ? native::string_or_empty(*data, "thinkingLevel") : std::string();
      m_watch->on_options(OptionsOffered{{effort_option(levels, current)}});
    });
  });
}

void PiAdapter::report_usage() {
  request(json{{"type", "get_session_stats"}}, [this](bool ok, const json& response) {
    if (!ok) return spdlog::debug("pi: get_session_stats refused: {}", response_error(response));
    if (auto usage = context_usage(response)) m_watch->on_usage(UsageUpdate{std::move(*usage)});
  });
}

void PiAdapter::report_mcp_status() {
  // Pi's `/mcp` prints every server's state outside its TUI (a notification) once the servers have connected or
  // failed; it runs at once, beside a running prompt, and writes nothing into the conversation.
  m_mcp_status_text = std::string();
  request(json{{"type", "prompt"}, {"message", "/mcp"}}, [this](bool ok, const json& response) {
    const std::string text = std::exchange(m_mcp_status_text, std::nullopt).value_or("");
    auto states = mcp_states(m_mcp_servers, text);
    if (!ok) {
      for (auto& state : states) {
        state.status = protocol::McpServerStatusKind::Failed;
        state.error = "Pi refused /mcp: " + response_error(response);
      }
    }
    m_watch->on_mcp_status(McpStatusReport{std::move(states)});
  });
}

void PiAdapter::finish_turn(TurnResult result) {
  // The turn's user message is the branch's latest; one that is the same as before the turn was not written by it
  // (a prompt refused, or aborted before Pi took it).
  request(json{{"type", "get_fork_messages"}}, [this, result](bool ok, const json& response) mutable {
    if (ok) {
      const auto ids = user_entry_ids(response);
      if (!ids.empty() && ids.back() != m_last_user_entry) {
        m_last_user_entry = ids.back();
        result.native_turn_ref = ids.back();
      }
    }
    m_listener.on_turn_end(std::move(result));
  });
}

void PiAdapter::fail_start(AdapterError error) {
  if (!m_cli.running()) return;
  forget_mcp_file();  // now, not once the killed Pi's exit is seen: the secrets in it go with the failed start
  m_cli.finish_start(std::move(error));
  m_cli.kill();
}

void PiAdapter::request(json command, Answer answer) {
  const std::string id = "sb-" + std::to_string(++m_next_id);
  command["id"] = id;
  m_pending.emplace(id, std::move(answer));
  if (!m_cli.write_encoded(native::dump(command))) {
    auto failed = m_pending.extract(id);
    if (!failed.empty()) failed.mapped()(false, json{{"error", "Pi is not running"}});
  }
}

void PiAdapter::on_line(std::string_view line) {
  const json message = native::parse_line(line);
  if (message.is_discarded()) return m_translator->feed_line(line);  // counted there as not JSON
  const std::string type = native::string_or_empty(message, "type");
  if (type != "response") {
    if (m_mcp_status_text && type == "extension_ui_request" && native::string_or_empty(message, "method") == "notify" &&
        native::string_or_empty(message, "notifyType") == "info") {
      *m_mcp_status_text = native::string_or_empty(message, "message");
    }
    m_translator->feed(message);
    // Each answer of the model changes the context: Pi's own figure for it, while the turn goes on.
    if (type == "message_end" && m_turn_running) {
      const auto* inner = native::object_at(message, "message");
      if (inner != nullptr && native::string_or_empty(*inner, "role") == "assistant") report_usage();
    }
    return;
  }
  const auto id = native::string_at(message, "id");
  auto pending = id ? m_pending.extract(*id) : decltype(m_pending)::node_type();
  if (pending.empty()) {
    // Only a line Pi could not parse is answered without an id: a bug of ours, or a write cut short.
    spdlog::warn("pi: a response to no command of ours: {}", native::dump(message).substr(0, 300));
    return;
  }
  pending.mapped()(native::bool_or(message, "success", false), message);
}

void PiAdapter::send(TurnInput input) {
  if (!m_cli.running() || m_cli.starting()) {
    TurnResult result;
    result.stop_reason = protocol::StopReason::Error;
    result.error = "Pi is not running";
    return m_listener.on_turn_end(std::move(result));
  }
  m_turn_running = true;
  m_translator->turn_started();
  if (input.model && !input.model->empty() && *input.model != m_model) {
    // The turn's model first: Pi takes it for this prompt and the ones after it.
    const std::string model = *input.model;
    return change_model(model, [this, input = std::move(input)](std::optional<AdapterError> error) {
      if (!m_turn_running) return;  // cancelled, or Pi went away, meanwhile
      if (error) return m_translator->turn_refused(error->message);
      write_prompt(input);
    });
  }
  write_prompt(input);
}

void PiAdapter::write_prompt(const TurnInput& input) {
  // Our queue is the only one: a prompt is sent only when none runs, so Pi never queues it (steer/follow-up unused).
  request(json{{"type", "prompt"}, {"message", prompt_text(input)}}, [this](bool ok, const json& response) {
    if (!m_turn_running) return;
    if (!ok) return m_translator->turn_refused("Pi refused the prompt: " + response_error(response));
    // An extension's command runs without the model: no run follows, unless the command started one.
    const auto* data = native::object_at(response, "data");
    if (data != nullptr && native::string_or_empty(*data, "disposition") == "handled") m_translator->turn_handled();
  });
}

void PiAdapter::cancel() {
  if (!m_turn_running) return;
  request(json{{"type", "abort"}}, [](bool ok, const json& response) {
    if (!ok) spdlog::debug("pi: abort refused: {}", response_error(response));
  });
  // Pi settles an aborted prompt within milliseconds; one that does not is stuck and is replaced: killing it ends
  // the turn, and the next send starts a fresh Pi that resumes the session.
  m_cli.arm_cancel_deadline([this] { return m_turn_running; }, "agent_settled", "Pi process");
}

void PiAdapter::turn_ended() {
  m_turn_running = false;
  m_cli.disarm_cancel_deadline();
}

void PiAdapter::answer_dialog(const std::string& id, const PermissionAnswer& answer) { m_cli.write_line(permission_answer(id, answer)); }

void PiAdapter::answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) {
  // Nothing is written for a dialog Pi no longer waits for (its turn ended, or it was answered).
  if (m_translator->take_dialog(native_id)) answer_dialog(native_id, answer);
  done(std::nullopt);
}

void PiAdapter::answer_question(const std::string& native_id, QuestionAnswer, Completion done) {
  done(AdapterError{ErrorCode::Unsupported, "Pi asks no questions the daemon can answer (no question " + native_id + ")"});
}

void PiAdapter::set_model(const std::string& model, Completion done) {
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi is not running"});
  change_model(model, std::move(done));
}

void PiAdapter::change_model(const std::string& model, Completion done) {
  const ModelChoice choice = parse_model_choice(model);
  auto set_thinking = [this, level = choice.thinking, done](bool) {
    if (level.empty()) return done(std::nullopt);
    request(json{{"type", "set_thinking_level"}, {"level", level}}, [this, done, level](bool ok, const json& response) {
      if (!ok) return done(AdapterError{ErrorCode::Unsupported, "Pi refused the thinking level " + level + ": " + response_error(response)});
      done(std::nullopt);
      report_options();
    });
  };
  if (choice.model.empty()) return set_thinking(true);
  const std::string provider = choice.provider.empty() ? m_provider : choice.provider;
  request(json{{"type", "set_model"}, {"provider", provider}, {"modelId", choice.model}},
          [this, done, set_thinking, provider, id = choice.model](bool ok, const json& response) {
            if (!ok) return done(AdapterError{ErrorCode::Unsupported, "Pi refused the model " + provider + "/" + id + ": " + response_error(response)});
            m_provider = provider;
            m_model = provider + "/" + id;
            set_thinking(true);
            // Another model may think at other levels, and Pi keeps the level within them.
            report_options();
          });
}

void PiAdapter::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  // Our extension asks about every call whatever the mode: the mode is which of them this adapter answers itself.
  m_mode = mode;
  done(std::nullopt);
}

void PiAdapter::set_option(const std::string& option_id, const std::string& value, Completion done) {
  if (option_id != kEffortOption) return done(AdapterError{ErrorCode::InvalidParams, "Pi has no option '" + option_id + "'"});
  if (!m_cli.running()) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi is not running"});
  request(json{{"type", "set_thinking_level"}, {"level", value}}, [this, done, value](bool ok, const json& response) {
    if (!ok) return done(AdapterError{ErrorCode::InvalidParams, "Pi refused the thinking level " + value + ": " + response_error(response)});
    done(std::nullopt);
    report_options();
  });
}

void PiAdapter::rewind(const std::string& native_turn_ref, Completion done) {
  if (!m_cli.running() || m_cli.starting()) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi is not running"});
  if (m_turn_running) return done(AdapterError{ErrorCode::SessionBusy, "Pi is running a turn"});
  request(json{{"type", "get_fork_messages"}}, [this, native_turn_ref, done](bool ok, const json& response) {
    if (!ok) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi refused get_fork_messages: " + response_error(response)});
    const auto ids = user_entry_ids(response);
    const auto at = std::find(ids.begin(), ids.end(), native_turn_ref);
    if (at == ids.end()) return done(AdapterError{ErrorCode::UnknownTurn, "Pi's conversation has no turn " + native_turn_ref.substr(0, 100)});
    const std::string before = at == ids.begin() ? std::string() : *std::prev(at);
    request(json{{"type", "fork"}, {"entryId", native_turn_ref}}, [this, before, done](bool forked, const json& answer) {
      if (!forked) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi could not fork: " + response_error(answer)});
      const auto* data = native::object_at(answer, "data");
      if (data != nullptr && native::bool_or(*data, "cancelled", false)) {
        return done(AdapterError{ErrorCode::Unsupported, "a Pi extension cancelled the fork"});
      }
      request(json{{"type", "get_state"}}, [this, before, done](bool state_ok, const json& state) {
        const auto* fields = native::object_at(state, "data");
        const auto session = fields != nullptr ? native::string_at(*fields, "sessionId") : std::nullopt;
        if (!state_ok || !session) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi's state after the fork names no session"});
        m_last_user_entry = before;
        m_watch->on_provider_session(ProviderSession{*session});
        done(std::nullopt);
        report_usage();
      });
    });
  });
}

void PiAdapter::compact(Completion done) {
  if (!m_cli.running() || m_cli.starting()) return done(AdapterError{ErrorCode::AgentUnavailable, "Pi is not running"});
  if (m_turn_running) return done(AdapterError{ErrorCode::SessionBusy, "Pi is running a turn"});
  request(json{{"type", "compact"}}, [this, done](bool ok, const json& response) {
    // Pi refuses a conversation too short to summarize ("Nothing to compact").
    if (!ok) return done(AdapterError{ErrorCode::Unsupported, "Pi did not compact: " + response_error(response)});
    done(std::nullopt);
    report_usage();
  });
}

void PiAdapter::stop() {
  // Still waiting for discovery: nothing runs yet, and nothing will.
  if (m_start_done) return std::exchange(m_start_done, nullptr)(AdapterError{ErrorCode::AgentUnavailable, "stopped"});
  if (!m_cli.running() || m_cli.stop_requested()) return;
  // EOF on stdin: Pi finishes and exits 0 (its stdout is read to the end meanwhile: a Pi whose stdout closes
  // first dies of EPIPE). Then TERM, then KILL.
  m_cli.stop();
}

void PiAdapter::forget_mcp_file() {
  if (m_mcp_file.empty()) return;
  std::error_code ignored;
  std::filesystem::remove(m_mcp_file, ignored);
  m_mcp_file.clear();
}

void PiAdapter::on_process_exit(const std::string& reason) {
  m_turn_running = false;
  forget_mcp_file();
  auto pending = std::exchange(m_pending, {});
  for (auto& [id, answer] : pending) answer(false, json{{"error", "Pi exited before it answered: " + reason}});
  if (m_cli.starting()) {
    // Started with --fork, Pi exits at once when it has no session to copy (its file deleted): "No session found
    // matching '<id>'". The conversation is lost, as one to resume that comes back empty (on_state).
    const bool lost = m_resume_id && reason.find("No session found matching") != std::string::npos;
    return m_cli.finish_start(AdapterError{lost ? ErrorCode::ConversationLost : ErrorCode::AgentUnavailable, reason});
  }
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  // The session ends a running turn as an error when it hears this.
  m_listener.on_unavailable(Unavailable{reason});
}

}  // namespace switchboard::adapters::pi
