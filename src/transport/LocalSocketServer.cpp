#include "switchboard/transport/LocalSocketServer.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/transport/StdioHandoff.h"

namespace switchboard::transport {
namespace {

// Out of descriptors (EMFILE), the pending connection stays pending: accepting again at once would spin.
constexpr std::chrono::milliseconds kFirstAcceptBackoff{100};
constexpr std::chrono::milliseconds kMaxAcceptBackoff{1000};

}  // namespace

struct LocalSocketServer::Connection {
  std::unique_ptr<StdioTransport> transport;
  bool closing = false;
  bool input_ended = false;  // the client closed its side (rather than the daemon closing everyone at shutdown)

  // A client that handed over its stdin/stdout: the descriptors as received, kept only to give their open files
  // back with the status flags they came with (the transport makes them non-blocking, and the attacher's parent
  // may share them), and the connection, now the lifeline.
  int handed_in = -1;
  int handed_out = -1;
  int handed_in_flags = -1;
  int handed_out_flags = -1;
  std::unique_ptr<boost::asio::posix::stream_descriptor> lifeline;

  Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection() {
    transport.reset();  // first: it closes its own duplicates of the descriptors
    for (auto [fd, flags] : {std::pair{handed_in, handed_in_flags}, std::pair{handed_out, handed_out_flags}}) {
      if (fd < 0) continue;
      if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags);
      ::close(fd);
    }
    if (!lifeline || !lifeline->is_open()) return;
    // Only now, with every copy of its descriptors closed, may the attacher exit: its parent then sees the end.
    const char farewell = input_ended ? kFarewellInputEnded : kFarewellShutDown;
    (void)::send(lifeline->native_handle(), &farewell, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    boost::system::error_code ignored;
    lifeline->close(ignored);
  }
};

LocalSocketServer::LocalSocketServer(boost::asio::io_context& io, rpc::Dispatcher& dispatcher, bus::Egress& egress,
                                     Options options, OnClientGone on_client_gone)
    : m_io(io),
      m_dispatcher(dispatcher),
      m_egress(egress),
      m_options(options),
      m_on_client_gone(std::move(on_client_gone)),
      m_listener(io),
      m_retry(io),
      m_grace(io) {}

LocalSocketServer::~LocalSocketServer() {
  stop_accepting();
  m_undecided.clear();
  m_connections.clear();
}

std::optional<std::string> LocalSocketServer::listen(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string text = path.string();
  if (text.size() >= sizeof(address.sun_path)) return "socket path too long: " + text;
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);

  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return std::string("cannot create a Unix socket: ") + std::strerror(errno);
  // We hold the data directory's lock, so a socket file here is a dead daemon's: replace it.
  ::unlink(text.c_str());
  // Created 0600 from the start (umask), not chmod'ed after: no moment in which another user could connect.
  const mode_t previous = ::umask(0177);
  const int bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  const int bind_errno = errno;
  ::umask(previous);
  if (bound != 0 || ::listen(fd, SOMAXCONN) != 0) {
    const std::string why = std::strerror(bound != 0 ? bind_errno : errno);
    ::close(fd);
    return "cannot listen on " + text + ": " + why;
  }
  boost::system::error_code error;
  m_listener.assign(fd, error);
  if (error) {
    ::close(fd);
    return "cannot watch " + text + ": " + error.message();
  }
  m_path = path;
  return std::nullopt;
}

void LocalSocketServer::start() { wait_for_connection(); }

void LocalSocketServer::wait_for_connection() {
  if (!m_listener.is_open()) return;
  m_listener.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                        [self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
                          if (error || self.expired()) return;
                          (*self.lock())->accept_pending();
                        });
}

void LocalSocketServer::accept_pending() {
  for (;;) {
    const int fd = ::accept4(m_listener.native_handle(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      m_backoff = std::chrono::milliseconds(0);
      add_connection(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return wait_for_connection();
    m_backoff = m_backoff.count() == 0 ? kFirstAcceptBackoff : std::min(m_backoff * 2, kMaxAcceptBackoff);
    spdlog::warn("socket: accept failed: {}; retrying in {} ms", std::strerror(errno), m_backoff.count());
    m_retry.expires_after(m_backoff);
    m_retry.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
      if (!error && !self.expired()) (*self.lock())->wait_for_connection();
    });
    return;
  }
}

void LocalSocketServer::add_connection(int fd) {
  ucred peer{};
  socklen_t length = sizeof peer;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != m_options.allowed_uid) {
    spdlog::warn("socket: refused a connection from uid {} (pid {}): only uid {} may attach",
                 static_cast<long>(peer.uid), static_cast<long>(peer.pid), static_cast<long>(m_options.allowed_uid));
    ::close(fd);
    return;
  }
  const std::uint64_t id = m_next_id++;
  spdlog::debug("socket: client {} connected (pid {})", id, static_cast<long>(peer.pid));
  auto watched = std::make_unique<boost::asio::posix::stream_descriptor>(m_io);
  boost::system::error_code error;
  watched->assign(fd, error);
  if (error) {
    spdlog::warn("socket: cannot watch client {}: {}", id, error.message());
    ::close(fd);
    return;
  }
  if (m_closing) return;  // the daemon is shutting down: `watched` closes it
  m_undecided.emplace(id, std::move(watched));
  wait_for_first_byte(id);
}

void LocalSocketServer::wait_for_first_byte(std::uint64_t id) {
  const auto it = m_undecided.find(id);
  if (it == m_undecided.end()) return;
  it->second->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         [self = std::weak_ptr(m_self), id](const boost::system::error_code& error) {
                           if (error || self.expired()) return;
                           (*self.lock())->classify(id);
                         });
}

void LocalSocketServer::classify(std::uint64_t id) {
  const auto it = m_undecided.find(id);
  if (it == m_undecided.end()) return;
  char first = 0;
  const ssize_t n = ::recv(it->second->native_handle(), &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return wait_for_first_byte(id);
  if (n <= 0) {
    spdlog::debug("socket: client {} left without a word", id);
    m_undecided.erase(it);  // closes it
    return;
  }
  const int fd = it->second->release();
  m_undecided.erase(it);
  if (first == kHandoffMarker[0]) serve_handed(id, fd);
  else serve_plain(id, fd);
}

void LocalSocketServer::serve_plain(std::uint64_t id, int fd) {
  StdioTransport::Options options;
  options.input_fd = fd;
  options.output_fd = fd;
  options.max_line_bytes = m_options.max_line_bytes;
  options.transport = protocol::Transport::Socket;
  auto connection = std::make_unique<Connection>();
  // The transport reads and writes duplicates of fd; ours is closed once they exist.
  connection->transport = std::make_unique<StdioTransport>(m_io, m_dispatcher, m_egress, options,
                                                           [this, id] { remove_later(id); });
  ::close(fd);
  auto* transport = connection->transport.get();
  m_connections.emplace(id, std::move(connection));
  transport->start();
}

void LocalSocketServer::serve_handed(std::uint64_t id, int fd) {
  ReceivedStdio received;
  if (auto why = receive_stdio(fd, received)) {
    spdlog::warn("socket: client {}: {}; disconnected", id, *why);
    ::close(fd);
    return;
  }
  auto connection = std::make_unique<Connection>();
  connection->handed_in = received.in;
  connection->handed_out = received.out;
  // The attacher sends only pipes and sockets; anything else (a terminal, a file) would be served wrongly here.
  if (!can_hand_over(received.in) || !can_hand_over(received.out)) {
    spdlog::warn("socket: client {} handed over something other than pipes or sockets; disconnected", id);
    ::close(fd);
    return;  // the connection's destructor closes what was received
  }
  connection->handed_in_flags = ::fcntl(received.in, F_GETFL);
  connection->handed_out_flags = ::fcntl(received.out, F_GETFL);
  connection->lifeline = std::make_unique<boost::asio::posix::stream_descriptor>(m_io);
  boost::system::error_code error;
  connection->lifeline->assign(fd, error);
  if (error) {
    spdlog::warn("socket: cannot watch client {}: {}", id, error.message());
    ::close(fd);
    return;  // the connection's destructor closes what was received
  }
  // Served exactly like a plain connection, only on the attacher's own descriptors.
  StdioTransport::Options options;
  options.input_fd = received.in;
  options.output_fd = received.out;
  options.max_line_bytes = m_options.max_line_bytes;
  options.transport = protocol::Transport::Socket;
  connection->transport = std::make_unique<StdioTransport>(m_io, m_dispatcher, m_egress, options,
                                                           [this, id] { remove_later(id); });
  // The attacher waits for this before it waits on the lifeline; a failure here shows as the lifeline's end.
  (void)::send(fd, &kHandoffAccepted, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
  spdlog::debug("socket: client {} handed over its stdin/stdout", id);
  auto* transport = connection->transport.get();
  // A client that no longer reads what we write (its parent closed the pipe) is gone, even while its stdin
  // stays open: otherwise it would still count as someone who can answer a permission.
  transport->on_output_broken([this, id] { remove_later(id, /*answers_wanted=*/false); });
  m_connections.emplace(id, std::move(connection));
  transport->start();
  watch_lifeline(id);
}

void LocalSocketServer::watch_lifeline(std::uint64_t id) {
  const auto it = m_connections.find(id);
  if (it == m_connections.end() || !it->second->lifeline) return;
  it->second->lifeline->async_wait(
      boost::asio::posix::stream_descriptor::wait_read,
      [self = std::weak_ptr(m_self), id](const boost::system::error_code& error) {
        if (error || self.expired()) return;
        auto* server = *self.lock();
        const auto found = server->m_connections.find(id);
        if (found == server->m_connections.end()) return;
        char byte;
        const ssize_t n = ::recv(found->second->lifeline->native_handle(), &byte, 1, MSG_DONTWAIT);
        if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))) {
          return server->watch_lifeline(id);  // nothing is expected here; whatever comes is ignored
        }
        // The attacher is gone (killed, most likely): so is this client, whatever its descriptors say. Its
        // parent expects the backend it started to be gone too.
        spdlog::debug("socket: client {} lost its attacher; disconnected", id);
        found->second->transport->stop_input();
        server->remove(id);
      });
}

void LocalSocketServer::remove_later(std::uint64_t id, bool answers_wanted) {
  boost::asio::post(m_io, [self = std::weak_ptr(m_self), id, answers_wanted] {
    if (self.expired()) return;
    auto* server = *self.lock();
    const auto it = server->m_connections.find(id);
    if (it == server->m_connections.end() || it->second->closing) return;
    it->second->closing = true;
    it->second->input_ended = true;
    // The client closed its side; the answers to the calls it made (some come later, from the store or a turn)
    // and what is queued for it still go out before the connection closes.
    auto drain_then_remove = [self, id] {
      if (self.expired()) return;
      const auto found = (*self.lock())->m_connections.find(id);
      if (found == (*self.lock())->m_connections.end()) return;
      found->second->transport->when_output_drained([self, id] {
        if (!self.expired()) (*self.lock())->remove(id);
      });
    };
    if (!answers_wanted) return drain_then_remove();
    it->second->transport->peer()->when_calls_answered(drain_then_remove);
  });
}

void LocalSocketServer::remove(std::uint64_t id) {
  const auto it = m_connections.find(id);
  if (it == m_connections.end()) return;
  auto connection = std::move(it->second);
  m_connections.erase(it);
  spdlog::debug("socket: client {} disconnected", id);
  if (m_on_client_gone && connection->transport->peer()->initialized()) m_on_client_gone(*connection->transport->peer());
  // Destroyed after this handler: its writer may be the one calling us.
  boost::asio::post(m_io, [connection = std::shared_ptr<Connection>(std::move(connection))] {});
  maybe_closed_all();
}

void LocalSocketServer::stop_accepting() {
  boost::system::error_code ignored;
  m_retry.cancel();
  if (m_listener.is_open()) {
    m_listener.close(ignored);
    ::unlink(m_path.c_str());
  }
}

void LocalSocketServer::close_all(std::chrono::milliseconds grace, std::function<void()> done) {
  m_closed_all = std::move(done);
  m_closing = true;  // daemon.shutdown has gone out: a client served from now on would never see it
  m_undecided.clear();  // connected but silent so far: nothing to flush
  // By id: a connection with nothing queued is removed from within when_output_drained, during this loop.
  std::vector<std::uint64_t> ids;
  for (const auto& [id, connection] : m_connections) ids.push_back(id);
  for (const auto id : ids) {
    const auto it = m_connections.find(id);
    if (it == m_connections.end()) continue;
    auto& connection = *it->second;
    connection.transport->stop_input();
    if (connection.closing) continue;
    connection.closing = true;
    connection.transport->when_output_drained([self = std::weak_ptr(m_self), id] {
      if (!self.expired()) (*self.lock())->remove(id);
    });
  }
  if (m_connections.empty()) return maybe_closed_all();
  m_grace.expires_after(grace);
  m_grace.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
    if (error || self.expired()) return;
    auto* server = *self.lock();
    if (!server->m_connections.empty()) {
      spdlog::warn("socket: {} client(s) did not take their last output in time; closing them", server->m_connections.size());
    }
    while (!server->m_connections.empty()) server->remove(server->m_connections.begin()->first);
  });
}

void LocalSocketServer::maybe_closed_all() {
  if (!m_closed_all || !m_connections.empty()) return;
  m_grace.cancel();
  boost::asio::post(m_io, std::exchange(m_closed_all, nullptr));
}

}  // namespace switchboard::transport
