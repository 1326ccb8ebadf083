#include "common/JsonRpcEndpoint.h"

#include <spdlog/spdlog.h>

#include "common/NativeJson.h"

namespace switchboard::adapters {
namespace {

// A peer that keeps writing garbage must not flood the log: the first bad lines are warnings, the rest debug.
constexpr std::uint64_t kLoudMalformedRpcLines = 20;

}  // namespace

JsonRpcEndpoint::JsonRpcEndpoint(std::function<bool(std::string line)> write, Handlers handlers, Options options)
    : m_write(std::move(write)),
      m_handlers(std::move(handlers)),
      m_options(std::move(options)),
      m_self(std::make_shared<JsonRpcEndpoint*>(this)) {}

JsonRpcEndpoint::~JsonRpcEndpoint() = default;

nlohmann::json JsonRpcEndpoint::envelope() const {
  auto message = nlohmann::json::object();
  if (m_options.send_jsonrpc_member) message["jsonrpc"] = "2.0";
  return message;
}

std::int64_t JsonRpcEndpoint::request(const std::string& method, nlohmann::json params, ResponseHandler done) {
  const std::int64_t id = m_next_id++;
  if (m_closed) {
    done(Error{kAgentGone, m_close_reason, nullptr});
    return id;
  }
  auto message = envelope();
  message["id"] = id;
  message["method"] = method;
  if (!params.is_null()) message["params"] = std::move(params);
  // Registered before writing: a writer that delivers synchronously may bring the answer back at once.
  m_pending.emplace(id, std::move(done));
  if (!m_write(native::dump(message))) {
    auto handler = std::move(m_pending.at(id));
    m_pending.erase(id);
    handler(Error{kWriteFailed, "could not write the " + method + " request", nullptr});
  }
  return id;
}

bool JsonRpcEndpoint::notify(const std::string& method, nlohmann::json params) {
  if (m_closed) return false;
  auto message = envelope();
  message["method"] = method;
  if (!params.is_null()) message["params"] = std::move(params);
  return m_write(native::dump(message));
}

void JsonRpcEndpoint::feed_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.empty()) return;
  ++m_stats.lines;
  const auto message = native::parse_line(line);
  if (message.is_discarded()) return malformed("not JSON", line);
  if (!message.is_object()) return malformed("not an object", line);
  const auto* id = native::member(message, "id");
  const auto method = native::string_at(message, "method");
  static const nlohmann::json kNoParams = nlohmann::json::object();
  const auto* params = native::member(message, "params");
  if (method) {
    if (id == nullptr) {
      if (m_handlers.on_notification) m_handlers.on_notification(*method, params ? *params : kNoParams);
      return;
    }
    if (!id->is_number_integer() && !id->is_string()) return malformed("a request whose id is neither a number nor a string", line);
    return on_incoming_request(*id, *method, params ? *params : kNoParams);
  }
  if (id == nullptr) return malformed("neither a method nor an id", line);
  if (native::member(message, "result") == nullptr && native::object_at(message, "error") == nullptr) {
    return malformed("a response without result or error", line);
  }
  on_response(*id, message);
}

void JsonRpcEndpoint::on_response(const nlohmann::json& id, const nlohmann::json& message) {
  const auto it = id.is_number_integer() ? m_pending.find(id.get<std::int64_t>()) : m_pending.end();
  if (it == m_pending.end()) {
    ++m_stats.unknown_responses;
    spdlog::debug("{}: ignored a response to unknown request {}", m_options.log_name, native::dump(id));
    return;
  }
  auto handler = std::move(it->second);
  m_pending.erase(it);
  if (const auto* error = native::object_at(message, "error")) {
    Error failure;
    failure.code = native::integer_at(*error, "code").value_or(0);
    failure.message = native::string_or_empty(*error, "message");
    if (const auto* data = native::member(*error, "data")) failure.data = *data;
    return handler(std::move(failure));
  }
  handler(*native::member(message, "result"));
}

void JsonRpcEndpoint::on_incoming_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params) {
  if (!m_handlers.on_request) {
    return send_reply(id, Error{kMethodNotFound, "switchboard does not serve '" + method + "' requests", nullptr});
  }
  // Exactly one reply: a second call is a bug of the caller, logged and dropped.
  auto replied = std::make_shared<bool>(false);
  m_handlers.on_request(method, params, [weak = std::weak_ptr<JsonRpcEndpoint*>(m_self), id, replied, method](Outcome outcome) {
    auto self = weak.lock();
    if (!self) return;
    if (std::exchange(*replied, true)) {
      spdlog::error("{}: a second reply to the agent's {} request was dropped", (*self)->m_options.log_name, method);
      return;
    }
    (*self)->send_reply(id, std::move(outcome));
  });
}

void JsonRpcEndpoint::send_reply(const nlohmann::json& id, Outcome outcome) {
  if (m_closed) return;
  auto message = envelope();
  message["id"] = id;
  if (auto* error = std::get_if<Error>(&outcome)) {
    nlohmann::json body = {{"code", error->code}, {"message", error->message}};
    if (!error->data.is_null()) body["data"] = error->data;
    message["error"] = std::move(body);
  } else {
    message["result"] = std::move(std::get<nlohmann::json>(outcome));
  }
  if (!m_write(native::dump(message))) spdlog::warn("{}: could not write a reply", m_options.log_name);
}

void JsonRpcEndpoint::close(const std::string& reason) {
  if (m_closed) return;
  m_closed = true;
  m_close_reason = reason;
  // Taken out first: a handler may send a new request, which now fails at once instead of joining the list.
  auto pending = std::move(m_pending);
  m_pending.clear();
  for (auto& [id, handler] : pending) handler(Error{kAgentGone, reason, nullptr});
}

void JsonRpcEndpoint::malformed(std::string_view why, std::string_view line) {
  ++m_stats.malformed;
  spdlog::log(m_stats.malformed <= kLoudMalformedRpcLines ? spdlog::level::warn : spdlog::level::debug,
              "{}: skipped a malformed line ({}): {:.200}", m_options.log_name, why, line);
}

}  // namespace switchboard::adapters
