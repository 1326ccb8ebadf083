#include "pi/PiAdapter.h"

#include <array>

#include <spdlog/spdlog.h>

#include "common/NativeJson.h"
#include "common/OfferedModels.h"
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
};

AdapterError no_such_mode(const std::string& mode) {
  return AdapterError{ErrorCode::Unsupported, "Pi has no mode '" + mode + "' (ask, accept-edits, full-access)"};
}

// A random UUID (version 4): the id of a new Pi session, chosen by us so the session knows it from the start.
std::string new_session_uuid() {
  std::string hex = random_id("", 16);
  hex[12] = '4';
  hex[16] = "89ab"[hex[16] % 4];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" + hex.substr(20);
}

std::string response_error(const json& response) {
  return native::string_at(response, "error").value_or("no reason given").substr(0, 500);
}

// The prompt's text, with the paths of its attachments: Pi's prompt takes images as data only, and its read tool
// reads a file the model is pointed at.
std::string prompt_text(const TurnInput& input) {
  std::string text = input.text;
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
    ForwardingListener::on_turn_end(std::move(result));
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
PiAdapter::~PiAdapter() { *m_alive = false; }

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
  // A fork is a new session (an id of ours, as a new one has) holding a copy of the conversation so far.
  const std::string session = fork ? new_session_uuid() : m_resume_id.value_or(new_session_uuid());
  std::vector<std::string> argv{launcher.node, launcher.script, "--mode", "rpc", "--session-id", session,
                                "-e", std::get<std::filesystem::path>(extension).string()};
  if (fork) {
    argv.push_back("--fork");
    argv.push_back(*m_resume_id);
  }
  if (options.model && !options.model->empty()) {
    argv.push_back("--model");
    argv.push_back(*options.model);
    m_model = *options.model;
  }
  // Pi's own configuration (~/.pi/agent, PI_CODING_AGENT_DIR) is the user's: the environment goes on unchanged.
  if (auto failed = m_cli.spawn(CliLaunch{std::move(argv), options.cwd, environment_with({}),
                                          "pi[" + options.session_id + "]"})) {
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
  const auto session = state != nullptr ? native::string_at(*state, "sessionId") : std::nullopt;
  if (!session) return fail_start(AdapterError{ErrorCode::AgentUnavailable, "Pi's state names no session"});
  // Pi's own default is the model get_state names when the session chose none.
  std::string pi_default;
  if (const auto* model = native::object_at(*state, "model")) {
    m_provider = native::string_or_empty(*model, "provider");
    if (m_model.empty()) m_model = pi_default = m_provider + "/" + native::string_or_empty(*model, "id");
  }
  // Pi creates a session it cannot find under the id it is given: one to resume that comes back empty was lost
  // (its file deleted); the engine goes on in a new one, seeded with what it stored.
  if (m_resume_id && native::integer_at(*state, "messageCount").value_or(0) == 0) {
    return fail_start(AdapterError{ErrorCode::ConversationLost, "Pi has no session " + *m_resume_id + " for this directory"});
  }
  m_watch->on_provider_session(ProviderSession{*session});
  m_cli.finish_start(std::nullopt);
  // The model list does not hold up the start: it reaches the engine when Pi answers.
  request(json{{"type", "get_available_models"}}, [this, pi_default](bool listed, const json& list) {
    if (!listed) return spdlog::debug("pi: get_available_models refused: {}", response_error(list));
    if (auto models = offered_models(list, pi_default); !models.empty()) m_watch->on_models(ModelsOffered{std::move(models)});
  });
}

void PiAdapter::fail_start(AdapterError error) {
  if (!m_cli.running()) return;
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
  if (native::string_or_empty(message, "type") != "response") return m_translator->feed(message);
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
    if (ok || !m_turn_running) return;
    m_translator->turn_refused("Pi refused the prompt: " + response_error(response));
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
    request(json{{"type", "set_thinking_level"}, {"level", level}}, [done, level](bool ok, const json& response) {
      if (!ok) return done(AdapterError{ErrorCode::Unsupported, "Pi refused the thinking level " + level + ": " + response_error(response)});
      done(std::nullopt);
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
          });
}

void PiAdapter::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  // Our extension asks about every call whatever the mode: the mode is which of them this adapter answers itself.
  m_mode = mode;
  done(std::nullopt);
}

void PiAdapter::stop() {
  // Still waiting for discovery: nothing runs yet, and nothing will.
  if (m_start_done) return std::exchange(m_start_done, nullptr)(AdapterError{ErrorCode::AgentUnavailable, "stopped"});
  if (!m_cli.running() || m_cli.stop_requested()) return;
  // EOF on stdin: Pi finishes and exits 0 (its stdout is read to the end meanwhile: a Pi whose stdout closes
  // first dies of EPIPE). Then TERM, then KILL.
  m_cli.stop();
}

void PiAdapter::on_process_exit(const std::string& reason) {
  m_turn_running = false;
  auto pending = std::exchange(m_pending, {});
  for (auto& [id, answer] : pending) answer(false, json{{"error", "Pi exited before it answered: " + reason}});
  if (m_cli.starting()) return m_cli.finish_start(AdapterError{ErrorCode::AgentUnavailable, reason});
  if (m_stopped_reported) return;
  m_stopped_reported = true;
  // The session ends a running turn as an error when it hears this.
  m_listener.on_unavailable(Unavailable{reason});
}

}  // namespace switchboard::adapters::pi
