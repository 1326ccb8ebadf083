#include "client/AttachRelay.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/DataDirectory.h"
#include "switchboard/transport/StdioHandoff.h"

namespace switchboard::client {
namespace {

// Per direction: past this much unwritten input, the relay stops reading that side until the other catches up.
constexpr std::size_t kMaxBuffered = 1 << 20;
constexpr std::size_t kChunk = 64 * 1024;

// Drops the first `n` bytes of `buffer` (what was written).
void consume(std::string& buffer, std::size_t n) { buffer.erase(0, n); }

}  // namespace

std::optional<int> connect_to_running_daemon(const std::filesystem::path& data_dir) {
  std::ifstream in(daemon::RuntimeFile::path_in(data_dir));
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  const auto runtime = nlohmann::json::parse(text.str(), nullptr, false);
  if (!runtime.is_object() || !runtime.contains("socket") || !runtime["socket"].is_string()) return std::nullopt;
  const auto path = runtime["socket"].get<std::string>();
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof(address.sun_path)) return std::nullopt;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  int connected;
  do {
    connected = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address);
  } while (connected != 0 && errno == EINTR);
  if (connected != 0) {
    ::close(fd);  // a socket file left by a killed daemon: nobody listens
    return std::nullopt;
  }
  return fd;
}

namespace {

constexpr const char* kShutDownLine = "switchboard: the daemon closed the connection (it shut down)\n";

ssize_t receive_byte(int fd, char& byte) {
  ssize_t n;
  do {
    n = ::recv(fd, &byte, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

// After a handoff: the daemon serves our client; we only wait for its farewell on the lifeline.
int wait_for_farewell(int socket_fd) {
  char farewell = 0;
  const ssize_t n = receive_byte(socket_fd, farewell);
  const int receive_errno = errno;
  ::close(socket_fd);
  if (n == 1 && farewell == transport::kFarewellInputEnded) return 0;
  if (n == 1 && farewell == transport::kFarewellShutDown) {
    std::fputs(kShutDownLine, stderr);
    return 0;
  }
  if (n < 0) {
    std::fprintf(stderr, "switchboard: the connection to the daemon failed: %s\n", std::strerror(receive_errno));
  } else {
    std::fprintf(stderr, "switchboard: the daemon went away without closing the connection\n");
  }
  return 1;
}

}  // namespace

int attach_stdio(const std::filesystem::path& data_dir, int socket_fd, int in_fd, int out_fd, AttachMode mode) {
  if (mode == AttachMode::Relay || !transport::can_hand_over(in_fd) || !transport::can_hand_over(out_fd)) {
    return relay_stdio(socket_fd, in_fd, out_fd);
  }
  if (auto why = transport::send_stdio(socket_fd, in_fd, out_fd)) {
    std::fprintf(stderr, "switchboard: %s\n", why->c_str());
    ::close(socket_fd);
    return 1;
  }
  char reply = 0;
  const ssize_t n = receive_byte(socket_fd, reply);
  if (n == 1 && reply == transport::kHandoffAccepted) return wait_for_farewell(socket_fd);
  ::close(socket_fd);
  if (n != 1) {
    std::fprintf(stderr, "switchboard: the daemon closed the connection before it took our stdin/stdout\n");
    return 1;
  }
  // A daemon that predates handoffs took the marker for a bad request line and answered it: relay instead, on
  // a connection of our own (the one it answered has an error line in it).
  auto again = connect_to_running_daemon(data_dir);
  if (!again) {
    std::fprintf(stderr, "switchboard: the daemon no longer answers\n");
    return 1;
  }
  return relay_stdio(*again, in_fd, out_fd);
}

int relay_stdio(int socket_fd, int in_fd, int out_fd) {
  // A reader of our stdout that goes away is EPIPE on write (and the end of this client), not a signal.
  std::signal(SIGPIPE, SIG_IGN);
  std::string to_daemon;
  std::string to_client;
  bool input_open = true;    // our stdin
  bool daemon_open = true;   // the daemon's side of the connection (it may still send after our half-close)
  bool half_closed = false;  // we told the daemon our input ended
  bool failed = false;
  char chunk[kChunk];

  while (daemon_open || !to_client.empty()) {
    pollfd fds[3];
    nfds_t count = 0;
    int in_slot = -1, socket_slot = -1, out_slot = -1;
    if (input_open && to_daemon.size() < kMaxBuffered) {
      in_slot = static_cast<int>(count);
      fds[count++] = pollfd{in_fd, POLLIN, 0};
    }
    short socket_events = 0;
    if (daemon_open && to_client.size() < kMaxBuffered) socket_events |= POLLIN;
    if (daemon_open && !to_daemon.empty()) socket_events |= POLLOUT;
    if (socket_events != 0) {
      socket_slot = static_cast<int>(count);
      fds[count++] = pollfd{socket_fd, socket_events, 0};
    }
    if (!to_client.empty()) {
      out_slot = static_cast<int>(count);
      fds[count++] = pollfd{out_fd, POLLOUT, 0};
    }
    if (::poll(fds, count, -1) < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "switchboard: relay: poll failed: %s\n", std::strerror(errno));
      failed = true;
      break;
    }

    if (in_slot >= 0 && fds[in_slot].revents != 0) {
      const ssize_t n = ::read(in_fd, chunk, sizeof chunk);
      if (n > 0) to_daemon.append(chunk, static_cast<std::size_t>(n));
      else if (n == 0 || (errno != EINTR && errno != EAGAIN)) input_open = false;
    }
    if (socket_slot >= 0 && (fds[socket_slot].revents & (POLLIN | POLLHUP | POLLERR)) != 0 &&
        (socket_events & POLLIN) != 0) {
      const ssize_t n = ::recv(socket_fd, chunk, sizeof chunk, MSG_DONTWAIT);
      if (n > 0) {
        to_client.append(chunk, static_cast<std::size_t>(n));
      } else if (n == 0) {
        daemon_open = false;
      } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        std::fprintf(stderr, "switchboard: relay: the connection to the daemon failed: %s\n", std::strerror(errno));
        daemon_open = false;
        failed = true;
      }
    }
    if (socket_slot >= 0 && daemon_open && (fds[socket_slot].revents & POLLOUT) != 0) {
      const ssize_t n = ::send(socket_fd, to_daemon.data(), to_daemon.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) {
        consume(to_daemon, static_cast<std::size_t>(n));
      } else if (n < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        std::fprintf(stderr, "switchboard: relay: the connection to the daemon failed: %s\n", std::strerror(errno));
        daemon_open = false;
        failed = true;
      }
    }
    if (out_slot >= 0 && fds[out_slot].revents != 0) {
      // At most PIPE_BUF after POLLOUT: a pipe that polls writable takes that much without blocking.
      const ssize_t n = ::write(out_fd, to_client.data(), std::min<std::size_t>(to_client.size(), PIPE_BUF));
      if (n > 0) {
        consume(to_client, static_cast<std::size_t>(n));
      } else if (n < 0 && errno != EINTR && errno != EAGAIN) {
        break;  // whoever reads our output is gone: so is this client; closing the socket tells the daemon
      }
    }
    if (!input_open && to_daemon.empty() && daemon_open && !half_closed) {
      ::shutdown(socket_fd, SHUT_WR);
      half_closed = true;
    }
  }
  ::close(socket_fd);
  if (!failed && !half_closed) std::fputs(kShutDownLine, stderr);
  return failed ? 1 : 0;
}

}  // namespace switchboard::client
