#include "opencode/OpenCodeSession.h"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/NativeJson.h"
#include "common/PercentEncoding.h"
#include "common/PermissionText.h"
#include "opencode/OpenCodeRuntime.h"

namespace switchboard::adapters::opencode {

using nlohmann::json;
using protocol::ErrorCode;
namespace http = boost::beast::http;

namespace {

AdapterError no_such_mode(std::string_view mode) {
  return AdapterError{ErrorCode::Unsupported, "OpenCode has no mode '" + std::string(mode) + "' (ask, accept-edits, full-access)"};
}

// The session's rules, whatever the user's configuration says: OpenCode asks before every shell command and
// every file edit, and the mode (ModeFilter) or the engine answers.
json session_rules() {
  return json::array({json{{"permission", "bash"}, {"pattern", "*"}, {"action", "ask"}},
                      json{{"permission", "edit"}, {"pattern", "*"}, {"action", "ask"}}});
}

// "provider/model" as OpenCode's prompt takes it.
std::optional<json> model_of(const std::optional<std::string>& model) {
  if (!model) return std::nullopt;
  const auto slash = model->find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == model->size()) return std::nullopt;
  return json{{"providerID", model->substr(0, slash)}, {"modelID", model->substr(slash + 1)}};
}

json file_part(const protocol::Attachment& attachment) {
  const auto slash = attachment.path.rfind('/');
  return json{{"type", "file"},
              {"mime", attachment.mime_type.value_or("text/plain")},
              {"filename", slash == std::string::npos ? attachment.path : attachment.path.substr(slash + 1)},
              {"url", "file://" + attachment.path}};
}

// Why OpenCode's request reaches the user: our session rules make it ask before commands and edits, which the mode
// does not let through; anything else it asks for by its own rules.
std::string reason_for(std::string_view mode, const std::string& permission) {
  if (permission == "bash") return mode_reason(mode, AskedAction::ShellCommand, permission);
  if (permission == "edit") return mode_reason(mode, AskedAction::FileChange, permission);
  return "OpenCode's own permission rules ask before " + permission;
}

// The message an event is about, if it names one: a part's (message.part.updated, message.part.delta) or the
// message's own (message.updated).
std::string message_of(const json& payload) {
  const auto* properties = native::object_at(payload, "properties");
  if (properties == nullptr) return {};
  if (auto id = native::string_or_empty(*properties, "messageID"); !id.empty()) return id;
  if (const auto* part = native::object_at(*properties, "part")) return native::string_or_empty(*part, "messageID");
  if (const auto* info = native::object_at(*properties, "info")) return native::string_or_empty(*info, "id");
  return {};
}

// OpenCode names a server's tools `<server>_<tool>`, each part with anything but letters, digits, `_` and `-`
// made `_`: a rule on `<server>_*` covers them all.
std::string mcp_tool_pattern(const std::string& server) {
  std::string name = server;
  for (auto& c : name) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!kept) c = '_';
  }
  return name + "_*";
}

std::string effort_option_id() { return "effort"; }

}  // namespace

std::vector<std::string> effort_values(std::vector<std::string> variants) {
  static const std::vector<std::string> scale{"none", "minimal", "low", "medium", "high", "xhigh", "max"};
  auto rank = [](const std::string& name) {
    const auto at = std::find(scale.begin(), scale.end(), name);
    return static_cast<std::size_t>(at - scale.begin());
  };
  std::sort(variants.begin(), variants.end(), [&](const std::string& a, const std::string& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
  });
  variants.erase(std::remove(variants.begin(), variants.end(), "default"), variants.end());
  variants.insert(variants.begin(), "default");
  return variants;
}

namespace {

// The id of each message of a GET /session/<id>/message answer, in order, and whether it is the user's.
std::vector<std::pair<std::string, bool>> message_ids(const json& messages) {
  std::vector<std::pair<std::string, bool>> ids;
  if (!messages.is_array()) return ids;
  for (const auto& message : messages) {
    const auto* info = message.is_object() ? native::object_at(message, "info") : nullptr;
    if (info == nullptr) continue;
    ids.emplace_back(native::string_or_empty(*info, "id"), native::string_or_empty(*info, "role") == "user");
  }
  return ids;
}

}  // namespace

std::optional<std::vector<std::string>> messages_from(const json& messages, const std::string& turn_ref) {
  const auto ids = message_ids(messages);
  const auto at = std::find_if(ids.begin(), ids.end(), [&](const auto& id) { return id.second && id.first == turn_ref; });
  if (at == ids.end()) return std::nullopt;
  std::vector<std::string> from;
  for (auto it = ids.rbegin(); it != std::make_reverse_iterator(at); ++it) from.push_back(it->first);
  return from;
}

std::optional<std::string> fork_boundary(const json& messages, const std::string& turn_ref) {
  const auto ids = message_ids(messages);
  const auto at = std::find_if(ids.begin(), ids.end(), [&](const auto& id) { return id.second && id.first == turn_ref; });
  if (at == ids.end()) return std::nullopt;
  const auto next = std::find_if(std::next(at), ids.end(), [](const auto& id) { return id.second; });
  return next == ids.end() ? std::string() : next->first;
}

bool is_mode(std::string_view mode) { return mode == kAskMode || mode == kAcceptEditsMode || mode == kFullAccessMode; }

struct OpenCodeSession::Answer {
  std::optional<std::string> failure;  // no answer at all
  unsigned status = 0;
  json body;
  std::string error() const {
    if (failure) return *failure;
    return "HTTP " + std::to_string(status) + ": " + native::dump(body).substr(0, 300);
  }
  bool ok() const { return !failure && status >= 200 && status < 300; }
};

class OpenCodeSession::ModeFilter final : public ForwardingListener {
 public:
  ModeFilter(OpenCodeSession& session, AdapterListener& engine) : ForwardingListener(engine), m_session(session) {}

  void on_permission_request(PermissionAsk ask) override {
    const bool let_through = m_session.m_mode == kFullAccessMode ||
                             (m_session.m_mode == kAcceptEditsMode && ask.tool == "edit");
    if (!let_through) {
      ask.reason = reason_for(m_session.m_mode, ask.tool);
      return ForwardingListener::on_permission_request(std::move(ask));
    }
    m_session.reply_to_permission(ask.native_id, "once", std::nullopt, [](std::optional<AdapterError> error) {
      if (error) spdlog::warn("opencode: the mode's answer was not taken: {}", error->message);
    });
  }

  void on_question(QuestionAsk ask) override {
    // Which questions take several labels: their answer comes back as one string, the labels joined by ", ".
    auto& multiple = m_session.m_multiple_choice[ask.native_id];
    for (const auto& question : ask.questions) multiple.push_back(question.multi_select.value_or(false));
    ForwardingListener::on_question(std::move(ask));
  }

 private:
  OpenCodeSession& m_session;
};

OpenCodeSession::OpenCodeSession(boost::asio::io_context& io, OpenCodeRuntime& runtime, AdapterListener& listener)
    : m_io(io),
      m_runtime(runtime),
      m_listener(listener),
      m_filter(std::make_unique<ModeFilter>(*this, listener)),
      m_translator(*m_filter),
      m_self(std::make_shared<OpenCodeSession*>(this)) {}

OpenCodeSession::~OpenCodeSession() {
  if (!m_id.empty()) m_runtime.detach(m_id);
  m_runtime.release_mcp_servers(*this);
}

protocol::AgentCapabilities OpenCodeSession::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.questions = true;
  capabilities.resume = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  capabilities.images = true;
  capabilities.fork = true;
  capabilities.plans = true;          // todo.updated
  capabilities.context_usage = true;  // each step's tokens, the model's limit.context
  capabilities.commands = true;       // GET /command, POST /session/<id>/command
  capabilities.options = true;        // effort: the model's variants
  capabilities.mcp = true;            // POST /mcp
  capabilities.rewind = true;         // DELETE /session/<id>/message/<id>
  capabilities.compact = true;        // POST /session/<id>/summarize
  return capabilities;
}

std::string OpenCodeSession::target(const std::string& path) const { return path + "?directory=" + percent_encoded(m_cwd, "/"); }

void OpenCodeSession::request(http::verb method, const std::string& path, const json& body, std::function<void(Answer)> then) {
  HttpRequest request;
  request.method = method;
  request.target = target(path);
  if (!body.is_null()) {
    request.body = native::dump(body);
    request.content_type = "application/json";
  }
  m_runtime.server().send(std::move(request), [self = std::weak_ptr<OpenCodeSession*>(m_self), then = std::move(then)](HttpOutcome outcome) {
    if (self.expired()) return;
    if (auto* failure = std::get_if<HttpFailure>(&outcome)) return then(Answer{failure->message, 0, nullptr});
    auto& response = std::get<HttpResponse>(outcome);
    then(Answer{std::nullopt, response.status, native::parse_line(response.body)});
  });
}

void OpenCodeSession::start(const StartOptions& options, Completion done) {
  if (options.mode && !is_mode(*options.mode)) return done(no_such_mode(*options.mode));
  if (options.mode) m_mode = *options.mode;
  m_model = options.model;
  m_cwd = options.cwd;
  m_mcp_servers = options.mcp_servers;
  for (const auto& [id, value] : options.options) {
    // Checked against the model's variants once they are known (report_options).
    if (id == effort_option_id()) m_variant = value == "default" ? std::nullopt : std::optional<std::string>(value);
  }
  m_runtime.when_running(options.cwd, [this, self = std::weak_ptr<OpenCodeSession*>(m_self), resume = options.resume_provider_session_id,
                                       fork = options.fork, through = options.fork_through_turn_ref,
                                       done = std::move(done)](std::optional<AdapterError> error) mutable {
    if (self.expired()) return;
    if (error) return done(std::move(error));
    auto opened = [this, resume, fork, done = std::move(done)](Answer answer) {
      if (resume && answer.status == 404) {
        return done(AdapterError{ErrorCode::ConversationLost, "OpenCode has no session " + *resume});
      }
      if (!answer.ok() || !answer.body.is_object() || native::string_or_empty(answer.body, "id").empty()) {
        return done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not open the session: " + answer.error()});
      }
      const std::string id = native::string_or_empty(answer.body, "id");
      // What the conversation used and cost before: usage reports go on from there.
      if (const auto* tokens = native::object_at(answer.body, "tokens")) {
        const auto* cache = native::object_at(*tokens, "cache");
        m_translator.seed_totals(native::integer_at(*tokens, "input").value_or(0), native::integer_at(*tokens, "output").value_or(0),
                                 cache != nullptr ? native::integer_at(*cache, "read").value_or(0) : 0,
                                 native::number_at(answer.body, "cost").value_or(0));
      }
      auto ready = [this, id, announce = !resume || fork, done]() {
        m_id = id;
        m_translator.set_session_id(m_id);
        m_runtime.attach(m_id, *this);
        if (announce) m_listener.on_provider_session(ProviderSession{m_id});
        offer_models();  // only queues its requests: before `done`, which may end this session's life
        offer_commands();
        add_mcp_servers([this, done](std::vector<protocol::McpServerState> states) {
          if (!states.empty()) m_listener.on_mcp_status(McpStatusReport{std::move(states)});
          done(std::nullopt);
        });
      };
      if (!resume) return ready();
      // A conversation that already has messages (resumed, or a fork's copy of one): OpenCode announces some of
      // them again on the event stream (a fork's copies, the last answer touched when the next prompt starts),
      // and they are no output of a turn of ours.
      request(http::verb::get, "/session/" + id + "/message", nullptr, [this, id, ready](Answer messages) {
        if (!messages.ok() || !messages.body.is_array()) {
          spdlog::debug("opencode: the messages of {} could not be listed: {}", id, messages.error());
          return ready();
        }
        for (const auto& message : messages.body) {
          if (const auto* info = native::object_at(message, "info")) m_earlier_messages.insert(native::string_or_empty(*info, "id"));
        }
        ready();
      });
    };
    // A fork is a session of its own on the server, holding the conversation so far: its events name it, so they
    // reach this session alone, whoever else continues the original.
    if (resume && fork && through) {
      // OpenCode's fork copies the messages before the one it is given: the prompt of the turn after the last one
      // kept.
      return request(http::verb::get, "/session/" + *resume + "/message", nullptr,
                     [this, resume, through, opened = std::move(opened)](Answer messages) mutable {
                       if (messages.status == 404) return opened(std::move(messages));
                       const auto boundary = messages.ok() ? fork_boundary(messages.body, *through) : std::nullopt;
                       if (!boundary) {
                         return opened(Answer{"OpenCode's session " + *resume + " has no turn " + *through + " to fork at: " +
                                                  messages.error(),
                                              0, nullptr});
                       }
                       json body = json::object();
                       if (!boundary->empty()) body["messageID"] = *boundary;
                       request(http::verb::post, "/session/" + *resume + "/fork", body, std::move(opened));
                     });
    }
    if (resume && fork) return request(http::verb::post, "/session/" + *resume + "/fork", json::object(), std::move(opened));
    if (resume) return request(http::verb::get, "/session/" + *resume, nullptr, std::move(opened));
    // A title of our own: OpenCode would otherwise ask the model for one (a side request on every new session).
    request(http::verb::post, "/session", json{{"title", "switchboard session"}, {"permission", session_rules()}}, std::move(opened));
  });
}

void OpenCodeSession::add_mcp_servers(std::function<void(std::vector<protocol::McpServerState>)> done) {
  if (m_mcp_servers.empty()) return done({});
  struct Gathering {
    std::vector<protocol::McpServerState> states;
    std::size_t left = 0;
    std::function<void(std::vector<protocol::McpServerState>)> done;
  };
  auto gathering = std::make_shared<Gathering>();
  gathering->states.resize(m_mcp_servers.size());
  gathering->left = m_mcp_servers.size();
  gathering->done = std::move(done);
  for (std::size_t i = 0; i < m_mcp_servers.size(); ++i) {
    const auto& server = m_mcp_servers[i];
    m_runtime.add_mcp_server(m_cwd, server, *this, [self = std::weak_ptr<OpenCodeSession*>(m_self), gathering, i,
                                                    transport = server.transport](protocol::McpServerState state) {
      state.transport = transport;
      gathering->states[i] = std::move(state);
      if (--gathering->left != 0 || self.expired()) return;
      gathering->done(std::move(gathering->states));
    });
  }
}

void OpenCodeSession::update_rules(std::function<void()> then) {
  json rules = session_rules();
  for (const auto& server : m_runtime.foreign_mcp_servers(m_cwd, *this)) {
    rules.push_back(json{{"permission", mcp_tool_pattern(server)}, {"pattern", "*"}, {"action", "deny"}});
  }
  if (m_applied_rules && *m_applied_rules == rules) return then();
  m_applied_rules = rules;
  request(http::verb::patch, "/session/" + m_id, json{{"permission", std::move(rules)}}, [then = std::move(then)](Answer answer) {
    if (!answer.ok()) spdlog::warn("opencode: the session's rules were not updated: {}", answer.error());
    then();
  });
}

void OpenCodeSession::send(TurnInput input) {
  m_runtime.note_activity();
  m_translator.turn_started();
  if (input.model) m_model = input.model;
  if (input.command) {
    // OpenCode's own command mechanism: it expands the command's template with the arguments and runs the
    // result (with the command's own agent and model, if it names them). It answers only when the turn is done,
    // so the request goes on a connection of its own; the turn's events come on the stream as for a prompt.
    json body{{"command", input.command->name}, {"arguments", input.command->arguments}};
    if (m_model) body["model"] = *m_model;
    if (m_variant) body["variant"] = *m_variant;
    json parts = json::array();
    for (const auto& attachment : input.attachments) parts.push_back(file_part(attachment));
    if (!parts.empty()) body["parts"] = std::move(parts);
    HttpRequest request;
    request.method = http::verb::post;
    request.target = target("/session/" + m_id + "/command");
    request.body = native::dump(body);
    request.content_type = "application/json";
    request.timeout = std::chrono::hours(24);  // a turn may wait for a permission answer that long
    // On another connection than the rules: sent once OpenCode has them.
    return update_rules([this, request = std::move(request)]() mutable {
      m_runtime.server().send_alone(std::move(request), [this, self = std::weak_ptr<OpenCodeSession*>(m_self)](HttpOutcome outcome) {
        if (self.expired()) return;
        if (const auto* failure = std::get_if<HttpFailure>(&outcome)) return fail_turn("OpenCode did not run the command: " + failure->message);
        const auto& response = std::get<HttpResponse>(outcome);
        if (response.status >= 300) {
          fail_turn("OpenCode did not run the command: HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 300));
        }
      });
    });
  }
  // The rules' request and the prompt go on one connection, in order: OpenCode has the rules first.
  update_rules([] {});
  json parts = json::array({json{{"type", "text"}, {"text", input.text}}});
  for (const auto& attachment : input.attachments) parts.push_back(file_part(attachment));
  json body{{"parts", std::move(parts)}};
  if (auto model = model_of(m_model)) body["model"] = *model;
  if (m_variant) body["variant"] = *m_variant;
  request(http::verb::post, "/session/" + m_id + "/prompt_async", body, [this](Answer answer) {
    if (!answer.ok()) fail_turn("OpenCode did not take the prompt: " + answer.error());
  });
}

void OpenCodeSession::offer_models() {
  // The configuration's answer comes first (one connection, in order): its model is what the list marks.
  request(http::verb::get, "/config", nullptr, [this](Answer config) {
    if (config.ok() && config.body.is_object()) m_default_model = native::string_at(config.body, "model");
  });
  request(http::verb::get, "/config/providers", nullptr, [this](Answer answer) {
    if (!answer.ok()) return spdlog::debug("opencode: no model list: {}", answer.error());
    // Each model's window and reasoning variants (the `effort` option), by provider/model.
    if (const auto* providers = native::array_at(answer.body, "providers")) {
      for (const auto& provider : *providers) {
        const auto provider_id = native::string_at(provider, "id");
        const auto* listed = native::object_at(provider, "models");
        if (!provider_id || listed == nullptr) continue;
        for (const auto& [key, entry] : listed->items()) {
          if (!entry.is_object()) continue;
          ModelFacts facts;
          if (const auto* limit = native::object_at(entry, "limit")) facts.window = native::integer_at(*limit, "context");
          if (facts.window && *facts.window <= 0) facts.window.reset();
          if (const auto* variants = native::object_at(entry, "variants")) {
            for (const auto& [name, variant] : variants->items()) {
              if (!variant.is_object() || !native::member(variant, "disabled") || !variant["disabled"].is_boolean() ||
                  !variant["disabled"].get<bool>()) {
                facts.variants.push_back(name);
              }
            }
          }
          m_model_facts[*provider_id + "/" + native::string_at(entry, "id").value_or(key)] = std::move(facts);
        }
      }
    }
    m_models_known = true;
    apply_model_facts();
    if (auto models = offered_models(answer.body, m_default_model); !models.empty()) m_listener.on_models(ModelsOffered{std::move(models)});
  });
}

void OpenCodeSession::offer_commands() {
  request(http::verb::get, "/command", nullptr, [this](Answer answer) {
    if (!answer.ok()) return spdlog::debug("opencode: no command list: {}", answer.error());
    m_listener.on_commands(CommandsOffered{offered_commands(answer.body)});
  });
}

std::optional<std::string> OpenCodeSession::current_model() const { return m_model ? m_model : m_default_model; }

void OpenCodeSession::apply_model_facts() {
  if (!m_models_known) return;
  const auto model = current_model();
  const auto facts = model ? m_model_facts.find(*model) : m_model_facts.end();
  m_translator.set_context_window(facts != m_model_facts.end() ? facts->second.window : std::nullopt);
  report_options();
}

void OpenCodeSession::report_options() {
  const auto model = current_model();
  const auto facts = model ? m_model_facts.find(*model) : m_model_facts.end();
  if (facts == m_model_facts.end() || facts->second.variants.empty()) {
    // A model without variants takes no effort: nothing to choose, and nothing to send.
    m_variant.reset();
    return m_listener.on_options(OptionsOffered{});
  }
  const auto values = effort_values(facts->second.variants);
  if (m_variant && std::find(values.begin(), values.end(), *m_variant) == values.end()) {
    spdlog::info("opencode: the model {} has no variant '{}': its default effort is used", *model, *m_variant);
    m_variant.reset();
  }
  protocol::SessionOption effort;
  effort.id = effort_option_id();
  effort.name = "Reasoning effort";
  effort.description = "The model's variant OpenCode runs each prompt with (default: the model's own)";
  effort.kind = protocol::SessionOptionKind::Select;
  for (const auto& value : values) effort.values.push_back(protocol::SessionOptionValue{value, std::nullopt, std::nullopt});
  effort.current_value = m_variant.value_or("default");
  m_listener.on_options(OptionsOffered{{std::move(effort)}});
}

void OpenCodeSession::fail_turn(const std::string& why) {
  if (!m_translator.turn_running()) return;
  m_listener.on_error(AgentErrorReport{why, true});
  m_translator.turn_refused(why);
}

void OpenCodeSession::cancel() {
  if (!m_translator.turn_running()) return;
  m_translator.abort_sent();
  request(http::verb::post, "/session/" + m_id + "/abort", json::object(), [](Answer answer) {
    if (!answer.ok()) spdlog::warn("opencode: abort failed: {}", answer.error());
  });
}

void OpenCodeSession::reply_to_permission(const std::string& id, const std::string& reply, const std::optional<std::string>& message,
                                          Completion done) {
  json body{{"reply", reply}};
  if (message && !message->empty()) body["message"] = *message;
  request(http::verb::post, "/permission/" + id + "/reply", body, [done = std::move(done)](Answer answer) {
    // 404: OpenCode no longer waits for it (the turn was aborted); the answer came too late and is dropped.
    if (answer.ok() || answer.status == 404) return done(std::nullopt);
    done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not take the answer: " + answer.error()});
  });
}

void OpenCodeSession::answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) {
  // The engine keeps session/project/always rules itself, so every allow is a one-time "once" here.
  reply_to_permission(native_id, answer.allow ? "once" : "reject", answer.message, std::move(done));
}

void OpenCodeSession::answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) {
  std::vector<bool> multiple;
  if (const auto it = m_multiple_choice.find(native_id); it != m_multiple_choice.end()) {
    multiple = std::move(it->second);
    m_multiple_choice.erase(it);
  }
  const json body = answer.rejected ? json::object() : question_reply(answer.answers, multiple);
  const std::string path = "/question/" + native_id + (answer.rejected ? "/reject" : "/reply");
  request(http::verb::post, path, body, [done = std::move(done)](Answer reply) {
    if (reply.ok() || reply.status == 404) return done(std::nullopt);  // 404: no longer waited for
    done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not take the answer: " + reply.error()});
  });
}

void OpenCodeSession::set_model(const std::string& model, Completion done) {
  if (!model_of(model)) return done(AdapterError{ErrorCode::Unsupported, "OpenCode models are named provider/model, not '" + model + "'"});
  m_model = model;  // every prompt names its model
  apply_model_facts();  // another model has its own window and variants
  done(std::nullopt);
}

void OpenCodeSession::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  m_mode = mode;
  done(std::nullopt);
}

void OpenCodeSession::set_option(const std::string& option_id, const std::string& value, Completion done) {
  const auto model = current_model();
  const auto facts = model ? m_model_facts.find(*model) : m_model_facts.end();
  if (option_id != effort_option_id() || facts == m_model_facts.end() || facts->second.variants.empty()) {
    return done(AdapterError{ErrorCode::InvalidParams, "OpenCode has no option '" + option_id + "' for this model"});
  }
  const auto values = effort_values(facts->second.variants);
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    return done(AdapterError{ErrorCode::InvalidParams, "the model has no effort '" + value + "'"});
  }
  m_variant = value == "default" ? std::nullopt : std::optional<std::string>(value);  // every prompt names it
  report_options();
  done(std::nullopt);
}

void OpenCodeSession::rewind(const std::string& native_turn_ref, Completion done) {
  if (m_id.empty() || m_unavailable) return done(AdapterError{ErrorCode::AgentUnavailable, "the OpenCode session is not open"});
  if (m_translator.turn_running()) return done(AdapterError{ErrorCode::SessionBusy, "a turn is running"});
  // OpenCode's revert would also undo the turns' file changes (from its own snapshots), and the files are not
  // ours to touch here: deleting the messages drops the turns from the conversation and leaves the files alone.
  request(http::verb::get, "/session/" + m_id + "/message", nullptr, [this, native_turn_ref, done = std::move(done)](Answer answer) mutable {
    if (!answer.ok()) return done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not list the messages: " + answer.error()});
    auto doomed = messages_from(answer.body, native_turn_ref);
    if (!doomed) return done(AdapterError{ErrorCode::UnknownTurn, "OpenCode's session has no turn " + native_turn_ref});
    delete_messages(std::move(*doomed), std::move(done));
  });
}

void OpenCodeSession::delete_messages(std::vector<std::string> newest_first, Completion done) {
  // Newest first, one at a time: a failure half-way leaves a conversation that still reads in order.
  if (newest_first.empty()) return done(std::nullopt);
  const std::string id = newest_first.front();
  newest_first.erase(newest_first.begin());
  request(http::verb::delete_, "/session/" + m_id + "/message/" + id, nullptr,
          [this, id, rest = std::move(newest_first), done = std::move(done)](Answer answer) mutable {
            if (!answer.ok() && answer.status != 404) {
              return done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not delete the message " + id + ": " + answer.error()});
            }
            delete_messages(std::move(rest), std::move(done));
          });
}

void OpenCodeSession::compact(Completion done) {
  if (m_id.empty() || m_unavailable) return done(AdapterError{ErrorCode::AgentUnavailable, "the OpenCode session is not open"});
  if (m_translator.turn_running() || m_translator.compacting()) return done(AdapterError{ErrorCode::SessionBusy, "the session is busy"});
  const auto model = model_of(current_model());
  if (!model) return done(AdapterError{ErrorCode::AgentUnavailable, "OpenCode named no model to summarize with"});
  m_translator.set_compacting(true);
  AgentStatus compacting;
  compacting.status = protocol::AgentStatusKind::Compacting;
  m_listener.on_status(std::move(compacting));
  HttpRequest request;
  request.method = http::verb::post;
  request.target = target("/session/" + m_id + "/summarize");
  request.body = native::dump(json{{"providerID", (*model)["providerID"]}, {"modelID", (*model)["modelID"]}, {"auto", false}});
  request.content_type = "application/json";
  request.timeout = std::chrono::minutes(30);  // one model request, over the whole conversation
  // OpenCode answers once the summary is written: a connection of its own, so other requests do not wait.
  m_runtime.server().send_alone(std::move(request), [this, self = std::weak_ptr<OpenCodeSession*>(m_self), done = std::move(done)](HttpOutcome outcome) {
    if (self.expired()) return;
    m_translator.set_compacting(false);
    std::optional<AdapterError> error;
    if (const auto* failure = std::get_if<HttpFailure>(&outcome)) {
      error = AdapterError{ErrorCode::AgentUnavailable, "OpenCode did not summarize: " + failure->message};
    } else if (const auto& response = std::get<HttpResponse>(outcome); response.status >= 300) {
      error = AdapterError{ErrorCode::AgentUnavailable,
                           "OpenCode did not summarize: HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 300)};
    }
    if (!error) {
      AgentStatus compacted;
      compacted.status = protocol::AgentStatusKind::Compacted;
      m_listener.on_status(std::move(compacted));
    }
    done(std::move(error));
  });
}

void OpenCodeSession::stop() {
  // The server is shared: this session only stops listening. A turn still running is aborted, not left working.
  cancel();
  boost::asio::post(m_io, [this, self = std::weak_ptr<OpenCodeSession*>(m_self)] {
    if (!self.expired()) become_unavailable("stopped");
  });
}

void OpenCodeSession::server_lost(const std::string& reason) { become_unavailable(reason); }

void OpenCodeSession::become_unavailable(const std::string& reason) {
  if (m_unavailable) return;
  m_unavailable = true;
  if (!m_id.empty()) m_runtime.detach(m_id);
  m_runtime.release_mcp_servers(*this);  // the last session holding one ends its process
  m_listener.on_unavailable(Unavailable{reason});  // the session ends a running turn as an error when it hears this
}

void OpenCodeSession::on_server_event(const json& payload) {
  m_runtime.note_activity();
  if (!m_earlier_messages.empty() && m_earlier_messages.count(message_of(payload)) != 0) return;
  m_translator.feed(payload);
}

}  // namespace switchboard::adapters::opencode
