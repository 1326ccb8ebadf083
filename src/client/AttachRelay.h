#pragma once

#include <filesystem>
#include <optional>

namespace switchboard::client {

// `switchboard stdio` on a data directory whose daemon already runs: rather than a second daemon (which the
// lock refuses), this process becomes a client of that daemon's Unix-domain socket, which speaks the same
// protocol: it hands its stdin/stdout over for the daemon to serve, or relays between them and the socket. The TUI that spawned it then sees the same sessions and events as every other
// client of that daemon, and is a client like them (its own initialize, client id and event stream).

// Connects to the socket the running daemon of `data_dir` names in its runtime file; nullopt when there is
// none or nothing answers there (then the caller hosts a daemon itself). The descriptor is close-on-exec.
std::optional<int> connect_to_running_daemon(const std::filesystem::path& data_dir);

// How an attaching `switchboard stdio` serves its client.
enum class AttachMode {
  // Hands stdin and stdout to the daemon (transport/StdioHandoff.h) when both are pipes or sockets, so the
  // daemon serves them itself and this process only waits; otherwise (a terminal, a regular file, /dev/null, a
  // daemon that does not take handoffs) it relays.
  Handoff,
  // Always relays (`stdio --relay`: for comparison and diagnostics).
  Relay,
};

// Serves this process's stdin/stdout as a client of the daemon on `socket_fd` (connected by
// connect_to_running_daemon(data_dir)), handing them over or relaying; takes `socket_fd`. Returns the exit code:
// 0 once the daemon closed the connection in order (after our input ended, or at its shutdown, which is
// reported on stderr), 1 when the connection failed.
int attach_stdio(const std::filesystem::path& data_dir, int socket_fd, int in_fd, int out_fd, AttachMode mode);

// Copies stdin to the socket and the socket to stdout until the daemon closes the connection; takes `socket_fd`.
// End of stdin is passed on as a half-close (the daemon then finishes our output and closes), so every answer
// already on its way is still written. Never blocks one direction on the other, and never buffers more than a
// bounded amount per direction (it stops reading instead). Returns the exit code: 0 once the daemon closed the
// connection in order, 1 when the connection failed.
int relay_stdio(int socket_fd, int in_fd, int out_fd);

}  // namespace switchboard::client
