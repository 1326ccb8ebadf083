#include "switchboard/rpc/Reply.h"

#include <charconv>
#include <cstdint>
#include <exception>

#include <spdlog/spdlog.h>

#include "switchboard/support/Bug.h"

namespace switchboard::rpc {
namespace {

void append_id(std::string& out, const nlohmann::json& id) {
  // Echo the id exactly as the client sent it (string or number; null for undecodable requests). Integers and
  // null, the usual ids, are written here as dump() writes them: dump() sets up a serializer and an output
  // adapter on the heap for every response.
  char digits[24];
  switch (id.type()) {
    case nlohmann::json::value_t::number_unsigned:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, id.get<std::uint64_t>()).ptr);
      return;
    case nlohmann::json::value_t::number_integer:
      out.append(digits, std::to_chars(digits, digits + sizeof digits, id.get<std::int64_t>()).ptr);
      return;
    case nlohmann::json::value_t::null: out.append("null"); return;
    default: out.append(id.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
}

}  // namespace

std::string render_result(const nlohmann::json& id, std::string_view result_json) {
  std::string out;
  out.reserve(40 + result_json.size());
  out.append(R"({"jsonrpc":"2.0","id":)");
  append_id(out, id);
  out.append(R"(,"result":)");
  out.append(result_json);
  out.push_back('}');
  return out;
}

std::string render_error(const nlohmann::json& id, const RpcError& error) {
  std::string out;
  out.append(R"({"jsonrpc":"2.0","id":)");
  append_id(out, id);
  json::JsonWriter writer(out);
  writer.key_raw(R"("error":)");
  writer.begin_object();
  writer.key_raw(R"("code":)");
  writer.integer(static_cast<std::int64_t>(error.code));
  writer.key_raw(R"("message":)");
  writer.string(error.message);
  if (!error.data.is_null()) {
    writer.key_raw(R"("data":)");
    writer.value(error.data);
  }
  writer.end_object();
  writer.finish();
  out.push_back('}');
  return out;
}

ReplyOnce::ReplyOnce(nlohmann::json id, bool is_notification, std::string method, Completion completion)
    : m_state(std::make_shared<State>()) {
  m_state->id = std::move(id);
  m_state->is_notification = is_notification;
  m_state->method = std::move(method);
  m_state->completion = std::move(completion);
}

ReplyOnce& ReplyOnce::operator=(ReplyOnce&& other) noexcept {
  if (this != &other) {
    abandon();
    m_state = std::move(other.m_state);
  }
  return *this;
}

ReplyOnce::~ReplyOnce() { abandon(); }

void ReplyOnce::abandon() {
  if (!m_state || m_state->replied) return;
  if (std::uncaught_exceptions() > 0) return;  // the dispatcher's catch answers for us
  report_bug("handler for " + m_state->method + " dropped its reply", __FILE__, __LINE__);
  fail(RpcError::internal_error("handler for " + m_state->method + " dropped its reply"));
}

bool ReplyOnce::replied() const { return m_state && m_state->replied; }

const std::string& ReplyOnce::method() const { return m_state->method; }

void ReplyOnce::succeed(std::string_view result_json) {
  if (!m_state || m_state->replied) {
    report_bug("second reply to one call", __FILE__, __LINE__);
    return;
  }
  m_state->replied = true;
  auto completion = std::move(m_state->completion);
  if (m_state->is_notification) completion(std::nullopt);
  else completion(render_result(m_state->id, result_json));
}

void ReplyOnce::fail(const RpcError& error) {
  if (!m_state) {
    report_bug("reply through a moved-from token", __FILE__, __LINE__);
    return;
  }
  fail(*m_state, error);
}

void ReplyOnce::fail(State& state, const RpcError& error) {
  if (state.replied) {
    report_bug("second reply to one call", __FILE__, __LINE__);
    return;
  }
  state.replied = true;
  auto completion = std::move(state.completion);
  if (state.is_notification) completion(std::nullopt);
  else completion(render_error(state.id, error));
}

}  // namespace switchboard::rpc
