#include "switchboard/rpc/Dispatcher.h"

#include <exception>

#include <spdlog/spdlog.h>

#include "rpc/PlainEnvelope.h"
#include "switchboard/support/Bug.h"

namespace switchboard::rpc {
namespace {

// Collects the responses of one batch and sends them as a single array once every member has completed.
// Members that were notifications contribute nothing; a batch of notifications only sends nothing at all.
class BatchCollector {
 public:
  BatchCollector(std::size_t members, std::shared_ptr<RpcPeer> peer) : m_remaining(members), m_peer(std::move(peer)) {}

  void complete(std::optional<std::string> response) {
    if (response) m_responses.push_back(std::move(*response));
    if (--m_remaining != 0) return;
    if (m_responses.empty()) {
      m_peer->send_nothing();
      return;
    }
    std::string array = "[";
    for (std::size_t i = 0; i < m_responses.size(); ++i) {
      if (i != 0) array.push_back(',');
      array.append(m_responses[i]);
    }
    array.push_back(']');
    m_peer->send_response(std::move(array));
  }

 private:
  std::size_t m_remaining;
  std::shared_ptr<RpcPeer> m_peer;
  std::vector<std::string> m_responses;
};

// Ids are echoed exactly. nlohmann keeps strings and 64-bit integers exact, but a number outside 64 bits or
// with a fraction comes back rounded; rather than echo a different id, such ids are refused.
bool valid_id(const nlohmann::json& id) {
  return id.is_string() || id.is_number_integer() || id.is_number_unsigned() || id.is_null();
}

// Deeper nesting than this is refused before parsing: nothing in the protocol needs it, and copying or
// destroying a value nested 100,000 levels deep recurses that deep.
constexpr std::size_t kMaxNestingDepth = 128;

bool nesting_within(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

}  // namespace

void Dispatcher::add(std::string_view name, Entry entry) {
  const auto [it, inserted] = m_methods.emplace(std::string(name), std::move(entry));
  SWITCHBOARD_ASSERT(inserted, "method bound twice");
}

std::vector<std::string> Dispatcher::bound_methods() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : m_methods) names.push_back(name);
  return names;
}

// A single message's completion: its response, or for a notification, nothing.
Completion Dispatcher::answer_to(const std::shared_ptr<RpcPeer>& peer) {
  return [peer](std::optional<std::string> response) {
    if (response) peer->send_response(std::move(*response));
    else peer->send_nothing();
  };
}

void Dispatcher::handle_message(std::string_view text, const std::shared_ptr<RpcPeer>& peer) {
  if (!nesting_within(text, kMaxNestingDepth)) {
    peer->send_response(render_error(nullptr, RpcError{protocol::ErrorCode::ParseError,
                                                       "parse error: nested deeper than " + std::to_string(kMaxNestingDepth) + " levels",
                                                       nullptr}));
    return;
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, so `{…}\0garbage` would parse as `{…}`. A raw
  // NUL is never valid JSON (inside a string it must be escaped), so any NUL makes the whole text invalid.
  const bool has_nul = text.find('\0') != std::string_view::npos;
  // The usual request skips the parse of the whole message and the walk over its members; only its params,
  // if any, become a JSON value. Any other text, or params that do not parse, take the general path below,
  // which decides as it always has.
  if (auto plain = has_nul ? std::nullopt : read_plain_envelope(text)) {
    if (plain->params.empty()) {
      return handle_call(std::move(plain->id), plain->is_notification, plain->method, nullptr, peer, answer_to(peer));
    }
    const auto params = nlohmann::json::parse(plain->params, nullptr, /*allow_exceptions=*/false);
    if (!params.is_discarded()) {
      return handle_call(std::move(plain->id), plain->is_notification, plain->method, &params, peer, answer_to(peer));
    }
  }
  const auto message = has_nul ? nlohmann::json(nlohmann::json::value_t::discarded)
                               : nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    peer->send_response(render_error(nullptr, RpcError{protocol::ErrorCode::ParseError, "parse error: invalid JSON", nullptr}));
    return;
  }
  handle_value(message, peer);
}

void Dispatcher::handle_value(const nlohmann::json& message, const std::shared_ptr<RpcPeer>& peer) {
  if (!message.is_array()) {
    handle_single(message, peer, answer_to(peer));
    return;
  }
  if (message.empty()) {
    peer->send_response(render_error(nullptr, RpcError::invalid_request("empty batch")));
    return;
  }
  auto collector = std::make_shared<BatchCollector>(message.size(), peer);
  for (const auto& member : message) {
    handle_single(member, peer, [collector](std::optional<std::string> response) {
      collector->complete(std::move(response));
    });
  }
}

void Dispatcher::handle_single(const nlohmann::json& message, const std::shared_ptr<RpcPeer>& peer,
                               Completion done) {
  auto reject = [&](const nlohmann::json& id, const RpcError& error) { done(render_error(id, error)); };

  if (!message.is_object()) return reject(nullptr, RpcError::invalid_request("expected an object"));
  const auto id_it = message.find("id");
  const bool is_notification = id_it == message.end();
  // Check before copying: the id is client input of any shape.
  if (!is_notification && !valid_id(*id_it)) {
    return reject(nullptr, RpcError::invalid_request("id must be a string, a 64-bit integer or null"));
  }
  static const nlohmann::json kNullId;
  const nlohmann::json& id = is_notification ? kNullId : *id_it;
  const auto version = message.find("jsonrpc");
  if (version == message.end() || *version != "2.0") {
    return reject(id, RpcError::invalid_request("jsonrpc must be \"2.0\""));
  }
  const auto method_it = message.find("method");
  if (method_it == message.end() || !method_it->is_string()) {
    return reject(id, RpcError::invalid_request("method must be a string"));
  }
  const std::string_view method = method_it->get_ref<const std::string&>();
  const auto params_it = message.find("params");
  if (params_it != message.end() && !params_it->is_object() && !params_it->is_array()) {
    return reject(id, RpcError::invalid_request("params must be an object or an array"));
  }
  for (const auto& [key, value] : message.items()) {
    if (key != "jsonrpc" && key != "id" && key != "method" && key != "params") {
      return reject(id, RpcError::invalid_request("unexpected member \"" + key.substr(0, 64) + "\""));
    }
  }

  handle_call(id, is_notification, method,
              params_it == message.end() ? nullptr : &*params_it, peer, std::move(done));
}

void Dispatcher::handle_call(nlohmann::json id, bool is_notification, std::string_view method,
                             const nlohmann::json* params_value, const std::shared_ptr<RpcPeer>& peer, Completion done) {
  // From here on a notification gets no response, whatever happens (JSON-RPC 2.0 §4.1).
  auto answer = [&](const RpcError& error) {
    if (is_notification) done(std::nullopt);
    else done(render_error(id, error));
  };

  const auto entry = m_methods.find(method);
  if (entry == m_methods.end()) return answer(RpcError::method_not_found(method));
  if (m_draining) return answer(RpcError{protocol::ErrorCode::ShuttingDown, "the daemon is shutting down", nullptr});
  if (peer->requires_initialize() && !peer->initialized() && !entry->second.allowed_before_initialize) {
    return answer(RpcError{protocol::ErrorCode::NotInitialized, "call initialize first", nullptr});
  }
  if (params_value != nullptr && params_value->is_array()) {
    return answer(RpcError{protocol::ErrorCode::InvalidParams,
                           "invalid params for " + std::string(method) + ": params: expected object (by-name params), got array",
                           nlohmann::json{{"pointer", ""}, {"expected", "object"}, {"actual", "array"}}});
  }
  static const nlohmann::json kNoParams = nlohmann::json::object();
  const nlohmann::json& params = params_value == nullptr ? kNoParams : *params_value;

  ++*m_in_flight;
  peer->call_started();
  ReplyOnce reply(std::move(id), is_notification, std::string(method),
                  [in_flight = m_in_flight, asker = std::weak_ptr<RpcPeer>(peer), done = std::move(done)](std::optional<std::string> response) {
                    --*in_flight;
                    done(std::move(response));
                    if (auto asking = asker.lock()) asking->call_answered();  // after its answer went to the peer
                  });
  const auto state = reply.state();
  try {
    entry->second.invoke(params, std::move(reply), CallContext{peer, is_notification});
  } catch (const std::exception& error) {
    if (!state->replied) ReplyOnce::fail(*state, RpcError::internal_error(std::string(method) + " threw: " + error.what()));
  }
}

}  // namespace switchboard::rpc
