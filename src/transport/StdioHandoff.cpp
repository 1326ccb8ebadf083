#include "switchboard/transport/StdioHandoff.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace switchboard::transport {

bool can_hand_over(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return false;
  if (::isatty(fd)) return false;
  return S_ISFIFO(info.st_mode) || S_ISSOCK(info.st_mode);
}

std::optional<std::string> send_stdio(int socket_fd, int in, int out) {
  char data[sizeof kHandoffMarker];
  std::memcpy(data, kHandoffMarker, sizeof data);
  iovec part{data, sizeof data};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {in, out};
  std::memcpy(CMSG_DATA(header), fds, sizeof fds);
  ssize_t sent;
  do {
    sent = ::sendmsg(socket_fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) return std::string("cannot hand stdin/stdout to the daemon: ") + std::strerror(errno);
  // Two bytes into an empty socket buffer go in one piece; anything else means the connection is not usable.
  if (sent != static_cast<ssize_t>(sizeof data)) return std::string("cannot hand stdin/stdout to the daemon: short write");
  return std::nullopt;
}

std::optional<std::string> receive_stdio(int socket_fd, ReceivedStdio& received) {
  char data[sizeof kHandoffMarker] = {};
  iovec part{data, sizeof data};
  // Room for more than we expect: a sender that attaches extra descriptors gets them closed, not leaked.
  alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))] = {};
  msghdr message{};
  message.msg_iov = &part;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(socket_fd, &message, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return std::string("reading the handoff failed: ") + std::strerror(errno);

  std::vector<int> fds;
  for (cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      fds.push_back(fd);
    }
  }
  const bool well_formed = n == static_cast<ssize_t>(sizeof data) &&
                           std::memcmp(data, kHandoffMarker, sizeof data) == 0 && fds.size() == 2 &&
                           (message.msg_flags & MSG_CTRUNC) == 0;
  if (!well_formed) {
    for (const int fd : fds) ::close(fd);
    return std::string("a malformed handoff (") + std::to_string(fds.size()) + " descriptors, " + std::to_string(n) +
           " bytes)";
  }
  received.in = fds[0];
  received.out = fds[1];
  return std::nullopt;
}

}  // namespace switchboard::transport
