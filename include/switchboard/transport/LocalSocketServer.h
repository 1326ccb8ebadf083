#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "switchboard/bus/Egress.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/transport/StdioTransport.h"

namespace switchboard::transport {

// The daemon's Unix-domain socket. Every connection speaks exactly the stdio protocol (NDJSON JSON-RPC 2.0,
// `initialize` first, events as notifications) through a StdioTransport of its own, so a client attached here
// is a full client: its own client id, its own event stream, permissions it may answer.
//
// Authentication is the socket's: it is created 0600 in a directory only its user can enter, and the kernel's
// record of each peer (SO_PEERCRED) must name the daemon's own effective uid before a byte is read; any other
// peer is logged and disconnected. Listening and accepted descriptors are close-on-exec from the start
// (SOCK_CLOEXEC, accept4), so agents never inherit them.
//
// A connection ends when the client closes its side: queued output is written first, then it is closed. Calls
// still running then go on; their answers have nowhere to go and are dropped. Lives on the io_context thread.
//
// A connection whose first bytes are the handoff marker (transport/StdioHandoff.h) brings the attaching
// process's own stdin and stdout: the client is then served on those, through the same kind of StdioTransport
// (one dispatcher, the same semantics), and the connection is only its lifeline. Which kind a connection is
// can only be known from its first byte, so nothing is read from it until that byte is there to peek at.
class LocalSocketServer {
 public:
  struct Options {
    std::size_t max_line_bytes = 8 * 1024 * 1024;
    uid_t allowed_uid = ::geteuid();
  };
  // A client that initialized has gone (its connection closed): the daemon announces client.detached.
  using OnClientGone = std::function<void(const rpc::RpcPeer& peer)>;

  LocalSocketServer(boost::asio::io_context& io, rpc::Dispatcher& dispatcher, bus::Egress& egress, Options options,
                    OnClientGone on_client_gone);
  ~LocalSocketServer();
  LocalSocketServer(const LocalSocketServer&) = delete;
  LocalSocketServer& operator=(const LocalSocketServer&) = delete;

  // Binds and listens at `path` (a stale socket file left by a dead daemon is replaced: the caller holds the
  // data directory's lock) with mode 0600. Returns why not, on failure.
  std::optional<std::string> listen(const std::filesystem::path& path);
  void start();
  // Stops accepting and removes the socket file; existing connections stay.
  void stop_accepting();
  // Stops reading every connection, lets each write what is queued (at most `grace`), then closes them all and
  // calls `done` (at once when there are none).
  void close_all(std::chrono::milliseconds grace, std::function<void()> done);

  // Clients served, and connections that have not said yet what they are (they too must be closed at shutdown).
  std::size_t connection_count() const { return m_connections.size() + m_undecided.size(); }
  const std::filesystem::path& path() const { return m_path; }

 private:
  struct Connection;

  void wait_for_connection();
  void accept_pending();
  void add_connection(int fd);
  // Waits for the connection's first byte and serves it as a plain client or as a handoff.
  void wait_for_first_byte(std::uint64_t id);
  void classify(std::uint64_t id);
  void serve_plain(std::uint64_t id, int fd);
  void serve_handed(std::uint64_t id, int fd);
  void watch_lifeline(std::uint64_t id);
  // Posted: a connection is never destroyed from inside its own reader's callback. A client that closed its side
  // still gets the answers to its calls in flight (`answers_wanted`); one whose output broke cannot.
  void remove_later(std::uint64_t id, bool answers_wanted = true);
  void remove(std::uint64_t id);
  void maybe_closed_all();

  boost::asio::io_context& m_io;
  rpc::Dispatcher& m_dispatcher;
  bus::Egress& m_egress;
  Options m_options;
  OnClientGone m_on_client_gone;
  boost::asio::posix::stream_descriptor m_listener;
  boost::asio::steady_timer m_retry;
  std::chrono::milliseconds m_backoff{0};
  std::filesystem::path m_path;
  std::uint64_t m_next_id = 1;
  std::map<std::uint64_t, std::unique_ptr<Connection>> m_connections;
  // Accepted and let in, their first byte not yet seen.
  std::map<std::uint64_t, std::unique_ptr<boost::asio::posix::stream_descriptor>> m_undecided;
  std::function<void()> m_closed_all;
  bool m_closing = false;  // close_all() began: a connection accepted or classified from now on is closed at once
  boost::asio::steady_timer m_grace;
  std::shared_ptr<LocalSocketServer*> m_self = std::make_shared<LocalSocketServer*>(this);
};

}  // namespace switchboard::transport
