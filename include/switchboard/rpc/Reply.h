#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "switchboard/json/JsonWriter.h"
#include "switchboard/rpc/RpcError.h"

namespace switchboard::rpc {

// Receives the rendered response of one call, or nullopt for a notification (which gets none). Called
// exactly once per call.
using Completion = std::function<void(std::optional<std::string>)>;

// The untyped half of a reply: a move-only token that must be used exactly once.
//
// A handler that forgets to answer would leave the client waiting forever, so a ReplyOnce destroyed without
// having replied reports a bug (abort in debug builds) and answers InternalError. A second reply is a bug too
// and is dropped. While an exception unwinds through a handler the token stays silent: the dispatcher catches
// the exception and answers for it with a reference id.
class ReplyOnce {
 public:
  ReplyOnce(nlohmann::json id, bool is_notification, std::string method, Completion completion);
  ReplyOnce(ReplyOnce&&) noexcept = default;
  ReplyOnce& operator=(ReplyOnce&&) noexcept;
  ReplyOnce(const ReplyOnce&) = delete;
  ReplyOnce& operator=(const ReplyOnce&) = delete;
  ~ReplyOnce();

  // `result_json` is the serialized result value.
  void succeed(std::string_view result_json);
  void fail(const RpcError& error);

  bool replied() const;
  const std::string& method() const;

  // Shared with the dispatcher so it can answer for a handler that threw.
  struct State;
  std::shared_ptr<State> state() const { return m_state; }
  static void fail(State& state, const RpcError& error);

 private:
  void abandon();
  std::shared_ptr<State> m_state;
};

struct ReplyOnce::State {
  nlohmann::json id;
  bool is_notification = false;
  std::string method;
  Completion completion;
  bool replied = false;
};

// Renders `{"jsonrpc":"2.0","id":…,"result":…}` / `"error":…`. Exposed for transports that must answer
// without a call (parse errors, over-long lines).
std::string render_result(const nlohmann::json& id, std::string_view result_json);
std::string render_error(const nlohmann::json& id, const RpcError& error);

// The typed half: handlers receive Reply<Result> and call it with a Result or an RpcError.
template <class Result>
class Reply {
 public:
  explicit Reply(ReplyOnce once) : m_once(std::move(once)) {}

  void operator()(const Result& result) {
    std::string text;
    json::JsonWriter writer(text);
    encode(writer, result);
    writer.finish();
    m_once.succeed(text);
  }
  void operator()(const RpcError& error) { m_once.fail(error); }
  // For results that are already serialized (a cached document, say).
  void raw(std::string_view result_json) { m_once.succeed(result_json); }

  bool replied() const { return m_once.replied(); }

 private:
  ReplyOnce m_once;
};

}  // namespace switchboard::rpc
