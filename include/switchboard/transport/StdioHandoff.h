#pragma once

#include <optional>
#include <string>

namespace switchboard::transport {

// How an attaching `switchboard stdio` hands its own stdin and stdout to the running daemon, so the daemon
// serves that client on them directly and no process copies bytes in between (issue 16: a relay cost ~35 us a
// round trip). Over the daemon's Unix-domain socket:
//
//   attacher -> daemon   kHandoffMarker, with SCM_RIGHTS [stdin, stdout]   (the connection's first bytes)
//   daemon -> attacher   kHandoffAccepted                                  (it serves them now)
//   ... the socket stays open as a lifeline; nothing else crosses it ...
//   daemon -> attacher   kFarewellInputEnded or kFarewellShutDown, then close
//
// The marker is "\0\n": no NDJSON line starts with a NUL, so the daemon tells it from a plain client's first
// request by peeking one byte; a daemon that predates handoffs answers it as a bad line ('{...'), which tells
// the attacher to fall back to the relay. The farewell is written only after the daemon has closed its copies
// of the descriptors and given back their file status flags. The attacher closing the lifeline (it was killed)
// ends that client at once.
inline constexpr char kHandoffMarker[] = {'\0', '\n'};
inline constexpr char kHandoffAccepted = 'A';
inline constexpr char kFarewellInputEnded = 'E';  // the client's input ended and its answers were written
inline constexpr char kFarewellShutDown = 'S';    // the daemon shut down (daemon.shutdown was the last event)

// True for a descriptor the daemon can serve as its own: a pipe or a socket. Not a terminal (its open file is
// shared with the shell and every job on it, and the daemon makes what it serves non-blocking), not a regular
// file or /dev/null (no readiness to wait for): those stay with the relay.
bool can_hand_over(int fd);

// Sends the marker with `in` and `out` attached; returns why not on failure.
std::optional<std::string> send_stdio(int socket_fd, int in, int out);

struct ReceivedStdio {
  int in = -1;
  int out = -1;
};
// Reads the marker and the two descriptors that came with it (close-on-exec from the moment they arrive:
// MSG_CMSG_CLOEXEC). `socket_fd` must have the marker waiting. Returns why not on failure; any descriptor
// that came with a malformed message is closed.
std::optional<std::string> receive_stdio(int socket_fd, ReceivedStdio& received);

}  // namespace switchboard::transport
