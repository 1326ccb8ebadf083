#pragma once

#include <filesystem>
#include <optional>

namespace switchboard::daemon {

// `switchboard stdio` on a data directory whose daemon already runs: rather than a second daemon (which the
// lock refuses), this process becomes a relay between its own stdin/stdout and that daemon's Unix-domain socket,
// which speaks the same protocol. The TUI that spawned it then sees the same sessions and events as every other
// client of that daemon, and is a client like them (its own initialize, client id and event stream).

// Connects to the socket the running daemon of `data_dir` names in its runtime file; nullopt when there is
// none or nothing answers there (then the caller hosts a daemon itself). The descriptor is close-on-exec.
std::optional<int> connect_to_running_daemon(const std::filesystem::path& data_dir);

// Copies stdin to the socket and the socket to stdout until the daemon closes the connection; takes `socket_fd`.
// End of stdin is passed on as a half-close (the daemon then finishes our output and closes), so every answer
// already on its way is still written. Never blocks one direction on the other, and never buffers more than a
// bounded amount per direction (it stops reading instead). Returns the exit code: 0 once the daemon closed the
// connection in order, 1 when the connection failed.
int relay_stdio(int socket_fd, int in_fd, int out_fd);

}  // namespace switchboard::daemon
