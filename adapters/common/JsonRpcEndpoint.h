#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

namespace switchboard::adapters {

// The client end of a JSON-RPC 2.0 conversation with an agent over its stdio (one message per line): Codex's
// app-server today, ACP agents next. It does no I/O itself: lines from the child's stdout go to feed_line(), and
// what it sends goes out through the `write` function (the child's stdin), so it is tested without a process and
// runs over any line transport.
//
// - request() sends a request with our own id (integers from 1) and calls its handler exactly once: with the
//   result, with the error the agent answered, or with a local error when the line could not be written or the
//   agent went away (close(): every pending request fails, so no caller waits for an answer that cannot come).
// - A request from the agent (it has a method and an id) goes to on_request with a Reply that must be called
//   exactly once (a result or an error); ids of the two directions are never confused, whatever their values.
// - A notification (a method, no id) goes to on_notification.
// - A line that is not JSON, or not a message, is counted and logged (the first ones as warnings, later ones
//   at debug level), and never ends the conversation. A response to an id nobody waits for is counted as unknown.
// Handlers run inside feed_line() / close(); they may send requests, but must not destroy the endpoint.
class JsonRpcEndpoint {
 public:
  struct Error {
    std::int64_t code = 0;
    std::string message;
    nlohmann::json data;  // null when absent
  };
  // The result, or the error.
  using Outcome = std::variant<nlohmann::json, Error>;
  using ResponseHandler = std::function<void(Outcome outcome)>;
  using Reply = std::function<void(Outcome outcome)>;

  // Local errors, in the JSON-RPC implementation-defined range.
  static constexpr std::int64_t kAgentGone = -32099;   // close() with the request pending
  static constexpr std::int64_t kWriteFailed = -32098;  // the request could not be written
  static constexpr std::int64_t kMethodNotFound = -32601;

  struct Handlers {
    std::function<void(const std::string& method, const nlohmann::json& params)> on_notification;
    // Absent: every request of the agent is answered "method not found".
    std::function<void(const std::string& method, const nlohmann::json& params, Reply reply)> on_request;
  };

  struct Options {
    std::string log_name = "json-rpc";  // prefixes log lines ("codex")
    bool send_jsonrpc_member = true;    // Codex's app-server neither sends nor needs "jsonrpc": "2.0"
  };

  struct Stats {
    std::uint64_t lines = 0;
    std::uint64_t malformed = 0;
    std::uint64_t unknown_responses = 0;
  };

  // `write` sends one line (without its '\n'); false when it could not.
  JsonRpcEndpoint(std::function<bool(std::string line)> write, Handlers handlers, Options options);
  JsonRpcEndpoint(std::function<bool(std::string line)> write, Handlers handlers)
      : JsonRpcEndpoint(std::move(write), std::move(handlers), Options{}) {}
  ~JsonRpcEndpoint();
  JsonRpcEndpoint(const JsonRpcEndpoint&) = delete;
  JsonRpcEndpoint& operator=(const JsonRpcEndpoint&) = delete;

  // Returns the request's id. After close() the handler is called at once with kAgentGone.
  std::int64_t request(const std::string& method, nlohmann::json params, ResponseHandler done);
  bool notify(const std::string& method, nlohmann::json params);
  void feed_line(std::string_view line);
  // The agent went away: every pending request fails with kAgentGone and `reason`; later requests fail at once.
  void close(const std::string& reason);

  std::size_t pending() const { return m_pending.size(); }
  bool closed() const { return m_closed; }
  const Stats& stats() const { return m_stats; }

 private:
  void on_response(const nlohmann::json& id, const nlohmann::json& message);
  void on_incoming_request(const nlohmann::json& id, const std::string& method, const nlohmann::json& params);
  void send_reply(const nlohmann::json& id, Outcome outcome);
  void malformed(std::string_view why, std::string_view line);
  nlohmann::json envelope() const;

  std::function<bool(std::string)> m_write;
  Handlers m_handlers;
  Options m_options;
  std::map<std::int64_t, ResponseHandler> m_pending;
  std::int64_t m_next_id = 1;
  bool m_closed = false;
  std::string m_close_reason;
  Stats m_stats;
  // Replies handed to on_request hold a weak_ptr to this: one called after the endpoint is gone does nothing.
  std::shared_ptr<JsonRpcEndpoint*> m_self;
};

}  // namespace switchboard::adapters
