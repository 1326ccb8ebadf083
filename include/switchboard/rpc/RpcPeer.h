#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::rpc {

// One client as the dispatcher sees it: where its responses go and what it negotiated. Owned by a transport
// through shared_ptr, because a reply to a long call may outlive the connection it came from (then the
// transport's send() drops it). Lives on the io_context thread.
class RpcPeer {
 public:
  virtual ~RpcPeer() = default;

  // One complete JSON-RPC response or batch array, without a trailing newline.
  virtual void send_response(std::string message) = 0;
  // The message needed no response (a notification, or a batch of them). HTTP answers 204 on it.
  virtual void send_nothing() {}

  // Stateful transports (stdio) refuse most methods until initialize succeeds; stateless HTTP calls are
  // authenticated per request and need no handshake.
  virtual bool requires_initialize() const = 0;
  virtual protocol::Transport transport() const = 0;

  bool initialized() const { return m_client_id.has_value(); }
  const std::optional<std::string>& client_id() const { return m_client_id; }
  void mark_initialized(std::string client_id, protocol::InitializeParams params) {
    m_client_id = std::move(client_id);
    m_hello = std::move(params);
  }
  const std::optional<protocol::InitializeParams>& hello() const { return m_hello; }

  // The peer's calls the dispatcher has begun and not answered yet (some answer later: a session read from the
  // store, a turn). A transport whose client closed its side answers those before it closes the connection.
  std::size_t calls_in_flight() const { return m_calls_in_flight; }
  void call_started() { ++m_calls_in_flight; }
  void call_answered() {
    if (m_calls_in_flight == 0 || --m_calls_in_flight > 0) return;
    auto waiting = std::exchange(m_when_answered, {});
    for (auto& done : waiting) done();
  }
  // Runs `done` once no call of the peer is in flight: at once if none is.
  void when_calls_answered(std::function<void()> done) {
    if (m_calls_in_flight == 0) return done();
    m_when_answered.push_back(std::move(done));
  }

 private:
  std::optional<std::string> m_client_id;
  std::optional<protocol::InitializeParams> m_hello;
  std::size_t m_calls_in_flight = 0;
  std::vector<std::function<void()>> m_when_answered;
};

}  // namespace switchboard::rpc
