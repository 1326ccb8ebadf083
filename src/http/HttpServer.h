#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "http/HttpContext.h"

namespace switchboard::http {

struct HttpServerOptions {
  std::string host = "127.0.0.1";   // loopback unless allow_remote
  unsigned short port = 7337;       // 0: ephemeral
  unsigned port_attempts = 20;      // when the port is taken, try the next ones up to this many
  bool allow_remote = false;        // bind a non-loopback address (never without the token)
  bool also_ipv6_loopback = true;   // with 127.0.0.1, also listen on [::1] at the same port
};

// Accepts connections on the configured addresses and starts an HttpConnection for each. Binding is done up
// front by listen(), so the caller knows the port (or the reason it failed) before anything is announced.
class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, HttpContext& context);
  ~HttpServer();

  // Returns an error message, or nullopt with port() set.
  std::optional<std::string> listen(const HttpServerOptions& options);
  void start();
  // Closes the acceptors; connections finish on their own or are closed by the hub at shutdown.
  void stop();

  unsigned short port() const { return m_port; }
  const std::vector<std::string>& bound_addresses() const { return m_bound; }

 private:
  struct Listener;
  bool try_bind(const boost::asio::ip::address& address, unsigned short port, std::string& why);
  void accept(Listener& listener);
  void retry_accept_later(Listener& listener);

  boost::asio::io_context& m_io;
  HttpContext& m_context;
  std::vector<std::unique_ptr<Listener>> m_listeners;
  std::vector<std::string> m_bound;
  unsigned short m_port = 0;
};

}  // namespace switchboard::http
