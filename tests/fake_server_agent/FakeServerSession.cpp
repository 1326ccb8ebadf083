#include "fake_server_agent/FakeServerSession.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/NativeJson.h"
#include "common/PermissionText.h"
#include "fake_server_agent/FakeServerRuntime.h"

namespace switchboard::testing::fake_server {

using adapters::AdapterError;
using adapters::Completion;
using protocol::ErrorCode;
using nlohmann::json;
namespace http = boost::beast::http;

namespace {

bool is_mode(const std::string& mode) { return mode == "ask" || mode == "auto"; }

AdapterError no_such_mode(const std::string& mode) {
  return AdapterError{ErrorCode::Unsupported, "the fake server agent has no mode '" + mode + "' (ask, auto)"};
}

protocol::StopReason stop_reason(const std::string& stop) {
  if (stop == "cancelled") return protocol::StopReason::Cancelled;
  if (stop == "error") return protocol::StopReason::Error;
  return protocol::StopReason::EndTurn;
}

// One request to the server: its status and JSON body, or why there is none.
struct Answer {
  std::optional<std::string> failure;
  unsigned status = 0;
  json body;
};

void request(adapters::SharedServer& server, http::verb method, std::string target, const json& body,
             std::function<void(Answer)> then) {
  adapters::HttpRequest request;
  request.method = method;
  request.target = std::move(target);
  if (!body.is_null()) {
    request.body = adapters::native::dump(body);
    request.content_type = "application/json";
  }
  server.send(std::move(request), [then = std::move(then)](adapters::HttpOutcome outcome) {
    if (auto* failure = std::get_if<adapters::HttpFailure>(&outcome)) return then(Answer{failure->message, 0, nullptr});
    auto& response = std::get<adapters::HttpResponse>(outcome);
    then(Answer{std::nullopt, response.status, adapters::native::parse_line(response.body)});
  });
}

std::string error_of(const Answer& answer) {
  if (answer.failure) return *answer.failure;
  return "HTTP " + std::to_string(answer.status) + ": " +
         (answer.body.is_object() ? adapters::native::string_or_empty(answer.body, "error") : std::string("(no body)"));
}

}  // namespace

FakeServerSession::FakeServerSession(boost::asio::io_context& io, FakeServerRuntime& runtime, adapters::AdapterListener& listener)
    : m_io(io), m_runtime(runtime), m_listener(listener), m_self(std::make_shared<FakeServerSession*>(this)) {}

FakeServerSession::~FakeServerSession() {
  if (!m_id.empty()) m_runtime.detach(m_id);
}

protocol::AgentCapabilities FakeServerSession::static_capabilities() {
  protocol::AgentCapabilities capabilities;
  capabilities.streaming = true;
  capabilities.permissions = true;
  capabilities.resume = true;
  capabilities.history_list = true;
  capabilities.history_read = true;
  capabilities.model_switch = true;
  capabilities.modes = true;
  return capabilities;
}

void FakeServerSession::start(const adapters::StartOptions& options, Completion done) {
  if (options.mode && !is_mode(*options.mode)) return done(no_such_mode(*options.mode));
  if (options.mode) m_mode = *options.mode;
  m_model = options.model;
  m_runtime.when_running(options.cwd, [this, self = std::weak_ptr<FakeServerSession*>(m_self), options,
                                       done = std::move(done)](std::optional<AdapterError> error) mutable {
    if (self.expired()) return;
    if (error) return done(std::move(error));
    open_session(options, std::move(done));
  });
}

void FakeServerSession::open_session(const adapters::StartOptions& options, Completion done) {
  auto opened = [this, self = std::weak_ptr<FakeServerSession*>(m_self), done = std::move(done),
                 resumed = options.resume_provider_session_id](Answer answer) {
    if (self.expired()) return;
    if (resumed && answer.status == 404) {
      return done(AdapterError{ErrorCode::ConversationLost, "the fake server agent has no session " + *resumed});
    }
    if (answer.status != 200 || !answer.body.is_object() || !answer.body.contains("id")) {
      return done(AdapterError{ErrorCode::AgentUnavailable, "the fake server agent did not open the session: " + error_of(answer)});
    }
    m_id = answer.body["id"].get<std::string>();
    m_runtime.attach(m_id, *this);
    if (!resumed) m_listener.on_provider_session(adapters::ProviderSession{m_id});
    done(std::nullopt);
  };
  if (options.resume_provider_session_id) {
    return request(m_runtime.server(), http::verb::get, "/session/" + *options.resume_provider_session_id, nullptr, std::move(opened));
  }
  request(m_runtime.server(), http::verb::post, "/session", json{{"cwd", options.cwd}}, std::move(opened));
}

void FakeServerSession::post_to_session(const std::string& action, const json& body,
                                        std::function<void(std::optional<std::string>, unsigned)> then) {
  if (m_unavailable) return then("the fake server agent is gone", 0);
  request(m_runtime.server(), http::verb::post, "/session/" + m_id + "/" + action, body,
          [self = std::weak_ptr<FakeServerSession*>(m_self), then = std::move(then)](Answer answer) {
            if (self.expired()) return;
            if (answer.failure) return then(answer.failure, 0);
            then(answer.status >= 200 && answer.status < 300 ? std::nullopt : std::optional(error_of(answer)), answer.status);
          });
}

void FakeServerSession::send(adapters::TurnInput input) {
  m_turn_running = true;
  m_turn_id = input.turn_id;
  m_message_index = 0;
  if (input.model) m_model = input.model;
  json body{{"text", input.text}, {"mode", m_mode}};
  if (m_model) body["model"] = *m_model;
  post_to_session("prompt", body, [this](std::optional<std::string> failure, unsigned) {
    if (failure) fail_turn("the fake server agent did not take the prompt: " + *failure);
  });
}

void FakeServerSession::fail_turn(const std::string& why) {
  if (!m_turn_running) return;
  m_turn_running = false;
  m_listener.on_error(adapters::AgentErrorReport{why, true});
  adapters::TurnResult result;
  result.stop_reason = protocol::StopReason::Error;
  result.error = why;
  m_listener.on_turn_end(std::move(result));
}

void FakeServerSession::cancel() {
  if (!m_turn_running) return;
  // The server ends the turn with turn.finished (cancelled) once its command and model request are gone.
  post_to_session("abort", json::object(), [](std::optional<std::string> failure, unsigned) {
    if (failure) spdlog::warn("fakeserver: abort failed: {}", *failure);
  });
}

void FakeServerSession::answer_permission(const std::string& native_id, adapters::PermissionAnswer answer, Completion done) {
  json body{{"allow", answer.allow}};
  if (answer.message) body["message"] = *answer.message;
  post_to_session("permission/" + native_id, body, [done = std::move(done)](std::optional<std::string> failure, unsigned status) {
    // 404: the server no longer waits for it (the turn ended); the answer came too late and is dropped.
    if (!failure || status == 404) return done(std::nullopt);
    done(AdapterError{ErrorCode::AgentUnavailable, "the fake server agent did not take the answer: " + *failure});
  });
}

void FakeServerSession::answer_question(const std::string& native_id, adapters::QuestionAnswer, Completion done) {
  done(AdapterError{ErrorCode::Unsupported, "the fake server agent asks no questions (no question " + native_id + ")"});
}

void FakeServerSession::set_model(const std::string& model, Completion done) {
  m_model = model;  // every prompt names its model
  done(std::nullopt);
}

void FakeServerSession::set_mode(const std::string& mode, Completion done) {
  if (!is_mode(mode)) return done(no_such_mode(mode));
  m_mode = mode;
  done(std::nullopt);
}

void FakeServerSession::stop() {
  // The server is shared: this session only stops listening. A turn still running is aborted, not left working.
  if (m_turn_running) cancel();
  boost::asio::post(m_io, [this, self = std::weak_ptr<FakeServerSession*>(m_self)] {
    if (!self.expired()) become_unavailable("stopped");
  });
}

void FakeServerSession::server_lost(const std::string& reason) { become_unavailable(reason); }

void FakeServerSession::become_unavailable(const std::string& reason) {
  if (m_unavailable) return;
  m_unavailable = true;
  if (!m_id.empty()) m_runtime.detach(m_id);
  m_turn_running = false;  // the session ends a running turn as an error when it hears this
  m_listener.on_unavailable(adapters::Unavailable{reason});
}

void FakeServerSession::on_server_event(const std::string& type, const json& data) {
  using adapters::native::string_or_empty;
  const std::string message_id = m_turn_id + ":" + std::to_string(m_message_index);
  if (type == "text.delta") {
    return m_listener.on_delta(adapters::TextDelta{message_id, protocol::DeltaKind::Text, string_or_empty(data, "text"), std::nullopt});
  }
  if (type == "text.done") {
    ++m_message_index;
    return m_listener.on_message(adapters::MessageCompleted{message_id, protocol::DeltaKind::Text, string_or_empty(data, "text"), std::nullopt});
  }
  if (type == "tool.started") {
    return m_listener.on_tool_started(adapters::ToolStarted{string_or_empty(data, "tool_id"), string_or_empty(data, "name"),
                                                            data.value("input", json::object()), std::nullopt});
  }
  if (type == "permission.asked") {
    adapters::PermissionAsk ask;
    ask.native_id = string_or_empty(data, "request_id");
    ask.tool = string_or_empty(data, "name");
    ask.input = data.value("input", json::object());
    ask.description = string_or_empty(data, "description");
    ask.subject = ask.input.is_object() ? string_or_empty(ask.input, "command") : std::string();
    // The server asks by the mode the prompt carried (`auto` asks nothing).
    ask.reason = adapters::mode_reason(m_mode, ask.tool == "shell" ? adapters::AskedAction::ShellCommand : adapters::AskedAction::Other, ask.tool);
    return m_listener.on_permission_request(std::move(ask));
  }
  if (type == "tool.output") {
    return m_listener.on_tool_output(adapters::ToolOutput{string_or_empty(data, "tool_id"), string_or_empty(data, "text")});
  }
  if (type == "tool.finished") {
    return m_listener.on_tool_completed(adapters::ToolCompleted{string_or_empty(data, "tool_id"), string_or_empty(data, "output"),
                                                                adapters::native::bool_or(data, "is_error", false)});
  }
  if (type == "turn.finished") {
    if (!m_turn_running) return;
    m_turn_running = false;
    adapters::TurnResult result;
    result.stop_reason = stop_reason(string_or_empty(data, "stop"));
    result.text = string_or_empty(data, "text");
    if (auto error = adapters::native::string_at(data, "error")) result.error = *error;
    if (const auto* usage = adapters::native::object_at(data, "usage")) {
      protocol::Usage counted;
      counted.output_tokens = adapters::native::integer_at(*usage, "output_tokens");
      result.usage = counted;
    }
    return m_listener.on_turn_end(std::move(result));
  }
  spdlog::debug("fakeserver: an event of no known type: {}", type);
}

}  // namespace switchboard::testing::fake_server
