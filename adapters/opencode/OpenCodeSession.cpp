#include "opencode/OpenCodeSession.h"

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

}  // namespace

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
  m_runtime.when_running(options.cwd, [this, self = std::weak_ptr<OpenCodeSession*>(m_self), resume = options.resume_provider_session_id,
                                       fork = options.fork, done = std::move(done)](std::optional<AdapterError> error) mutable {
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
      auto ready = [this, id, announce = !resume || fork, done]() {
        m_id = id;
        m_translator.set_session_id(m_id);
        m_runtime.attach(m_id, *this);
        if (announce) m_listener.on_provider_session(ProviderSession{m_id});
        offer_models();  // only queues its requests: before `done`, which may end this session's life
        done(std::nullopt);
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
    if (resume && fork) return request(http::verb::post, "/session/" + *resume + "/fork", json::object(), std::move(opened));
    if (resume) return request(http::verb::get, "/session/" + *resume, nullptr, std::move(opened));
    // A title of our own: OpenCode would otherwise ask the model for one (a side request on every new session).
    request(http::verb::post, "/session", json{{"title", "switchboard session"}, {"permission", session_rules()}}, std::move(opened));
  });
}

void OpenCodeSession::send(TurnInput input) {
  m_runtime.note_activity();
  m_translator.turn_started();
  if (input.model) m_model = input.model;
  json parts = json::array({json{{"type", "text"}, {"text", input.text}}});
  for (const auto& attachment : input.attachments) parts.push_back(file_part(attachment));
  json body{{"parts", std::move(parts)}};
  if (auto model = model_of(m_model)) body["model"] = *model;
  request(http::verb::post, "/session/" + m_id + "/prompt_async", body, [this](Answer answer) {
    if (!answer.ok()) fail_turn("OpenCode did not take the prompt: " + answer.error());
  });
}

void OpenCodeSession::offer_models() {
  // The configuration's model first: it is the default the list marks.
  request(http::verb::get, "/config", nullptr, [this](Answer config) {
    std::optional<std::string> configured;
    if (config.ok() && config.body.is_object()) configured = native::string_at(config.body, "model");
    request(http::verb::get, "/config/providers", nullptr, [this, configured](Answer answer) {
      if (!answer.ok()) return spdlog::debug("opencode: no model list: {}", answer.error());
      if (auto models = offered_models(answer.body, configured); !models.empty()) m_listener.on_models(ModelsOffered{std::move(models)});
    });
  });
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
  done(std::nullopt);
}

void OpenCodeSession::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  m_mode = mode;
  done(std::nullopt);
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
  m_listener.on_unavailable(Unavailable{reason});  // the session ends a running turn as an error when it hears this
}

void OpenCodeSession::on_server_event(const json& payload) {
  m_runtime.note_activity();
  if (!m_earlier_messages.empty() && m_earlier_messages.count(message_of(payload)) != 0) return;
  m_translator.feed(payload);
}

}  // namespace switchboard::adapters::opencode
