#include "http/HttpServer.h"

#include <fcntl.h>

#include <algorithm>

#include <boost/asio/ip/v6_only.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "http/HttpConnection.h"

namespace switchboard::http {
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Asio does not create sockets close-on-exec; agent processes we spawn must not inherit them.
void set_cloexec(int fd) { ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC); }

}  // namespace

// After a failed accept (EMFILE/ENFILE when out of descriptors, ENOBUFS, ...) the pending connection is still
// there, so accepting again at once fails again at once: a busy loop on the only thread. Wait instead, longer
// each time, and start over after the next success.
constexpr std::chrono::milliseconds kFirstAcceptBackoff{100};
constexpr std::chrono::milliseconds kMaxAcceptBackoff{1000};

struct HttpServer::Listener {
  explicit Listener(asio::io_context& io) : acceptor(io), retry(io) {}
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  std::chrono::milliseconds backoff{0};  // zero while accepting works
};

HttpServer::HttpServer(asio::io_context& io, HttpContext& context) : m_io(io), m_context(context) {}

HttpServer::~HttpServer() { stop(); }

bool HttpServer::try_bind(const asio::ip::address& address, unsigned short port, std::string& why) {
  auto listener = std::make_unique<Listener>(m_io);
  boost::system::error_code error;
  const tcp::endpoint endpoint(address, port);
  listener->acceptor.open(endpoint.protocol(), error);
  if (!error) {
    set_cloexec(listener->acceptor.native_handle());
    listener->acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (address.is_v6()) listener->acceptor.set_option(asio::ip::v6_only(true), error);
    listener->acceptor.bind(endpoint, error);
  }
  if (!error) listener->acceptor.listen(asio::socket_base::max_listen_connections, error);
  if (error) {
    why = error.message();
    return false;
  }
  const auto bound = listener->acceptor.local_endpoint(error);
  m_port = bound.port();
  // fmt rather than a chain of operator+: GCC 12 at -O2 reports a false -Wstringop-overflow for `"[" + string`.
  m_bound.push_back(address.is_v6() ? fmt::format("[{}]:{}", address.to_string(), m_port)
                                    : fmt::format("{}:{}", address.to_string(), m_port));
  m_listeners.push_back(std::move(listener));
  return true;
}

std::optional<std::string> HttpServer::listen(const HttpServerOptions& options) {
  boost::system::error_code error;
  const auto address = asio::ip::make_address(options.host, error);
  if (error) return "not an IP address: " + options.host;
  if (!address.is_loopback() && !options.allow_remote) {
    return "refusing to listen on non-loopback address " + options.host + " (pass --allow-remote to mean it)";
  }
  std::string why;
  bool bound = false;
  const unsigned attempts = options.port == 0 ? 1 : options.port_attempts;
  for (unsigned i = 0; i < attempts && !bound; ++i) {
    const unsigned candidate = options.port == 0 ? 0u : options.port + i;
    if (candidate > 65535) break;
    bound = try_bind(address, static_cast<unsigned short>(candidate), why);
    if (!bound) spdlog::debug("http: cannot bind {}:{}: {}", options.host, candidate, why);
  }
  if (!bound) return "cannot listen on " + options.host + " ports " + std::to_string(options.port) + "+: " + why;
  if (address == asio::ip::make_address("127.0.0.1") && options.also_ipv6_loopback) {
    std::string v6_why;
    if (!try_bind(asio::ip::make_address("::1"), m_port, v6_why)) {
      spdlog::info("http: not listening on [::1]:{} ({})", m_port, v6_why);
    }
  }
  return std::nullopt;
}

void HttpServer::start() {
  for (auto& listener : m_listeners) accept(*listener);
}

void HttpServer::stop() {
  for (auto& listener : m_listeners) {
    boost::system::error_code ignored;
    listener->acceptor.close(ignored);
    listener->retry.cancel();
  }
  const std::vector<HttpConnection*> open(m_context.connections.begin(), m_context.connections.end());
  for (auto* connection : open) connection->close();
}

void HttpServer::accept(Listener& listener) {
  listener.acceptor.async_accept([this, &listener](const boost::system::error_code& error, tcp::socket socket) {
    if (error == asio::error::operation_aborted || !listener.acceptor.is_open()) return;
    if (!error) {
      listener.backoff = std::chrono::milliseconds(0);
      set_cloexec(socket.native_handle());
      // Small request/response exchanges: never let Nagle hold back the tail of a response.
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      if (m_context.connections.size() + m_context.hub.client_count() >= m_context.max_connections) {
        spdlog::warn("http: {} connections open, refusing another", m_context.max_connections);
        socket.close(ignored);
      } else {
        std::make_shared<HttpConnection>(std::move(socket), m_context)->start();
      }
    } else {
      listener.backoff = listener.backoff.count() == 0 ? kFirstAcceptBackoff : std::min(listener.backoff * 2, kMaxAcceptBackoff);
      spdlog::warn("http: accept failed: {}; retrying in {} ms", error.message(), listener.backoff.count());
      return retry_accept_later(listener);
    }
    accept(listener);
  });
}

void HttpServer::retry_accept_later(Listener& listener) {
  listener.retry.expires_after(listener.backoff);
  listener.retry.async_wait([this, &listener](const boost::system::error_code& error) {
    if (error || !listener.acceptor.is_open()) return;  // stopped meanwhile
    accept(listener);
  });
}

}  // namespace switchboard::http
