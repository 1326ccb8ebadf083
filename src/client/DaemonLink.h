#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>

#include "daemon/Daemon.h"

namespace switchboard::client {

// Whether a command may become a client of the daemon already running for its data directory.
enum class Attach {
  IfRunning,  // the user's daemon when one runs (its sessions and events are shared with every other client)
  Never,      // --standalone, `stdio --http`: this command hosts a daemon of its own
};

// The connected socket (close-on-exec, the caller's) of the daemon already running for the data directory
// `options` name, when `attach` allows it; nullopt when none runs, and always for an ephemeral daemon, which
// shares nothing with the user's. nullopt means: host one here.
std::optional<int> running_daemon(const daemon::DaemonOptions& options, Attach attach);

// Where a client command (`run`, `acp`) finds its daemon, which it speaks the stdio protocol to over one
// connected socket: the user's daemon running for the data directory (its daemon.sock), or else a Daemon hosted
// in this process, whose stdio transport is one end of a socketpair and the client's socket the other. The
// client is the same code on the same kind of socket either way: the two differ only in who owns the daemon,
// and so in whose io_context the client runs on.
class DaemonLink {
 public:
  // Attached when running_daemon(options, attach) finds one; else a daemon built here from `options` as
  // `host_only` changes them (what only a daemon of the command's own is told), with its signals left to the
  // command, not yet running. nullptr when not even a socketpair could be made (logged, under `name`).
  static std::unique_ptr<DaemonLink> open(const char* name, daemon::DaemonOptions options, Attach attach,
                                          const std::function<void(daemon::DaemonOptions&)>& host_only = {});
  ~DaemonLink();
  DaemonLink(const DaemonLink&) = delete;
  DaemonLink& operator=(const DaemonLink&) = delete;

  bool attached() const { return m_host == nullptr; }
  const std::filesystem::path& data_dir() const { return m_data_dir; }
  // What the client runs on: an io_context of its own when attached, the hosted daemon's otherwise.
  boost::asio::io_context& io();
  // The client's end of the connection, for its RpcConnection, which closes it. Once.
  int take_client_socket();

  // The daemon answered the client's first call: a hosted daemon's transport then holds the descriptors of its
  // end, so this process's own copy is closed, and the client sees the connection end when the daemon closes it.
  // (Not earlier: the daemon may run handlers while it opens its store, before its transport exists, and an
  // end closed then would reset the connection.)
  void daemon_answered();
  bool daemon_has_answered() const { return m_answered; }

  // Attached: runs the client's io_context until `finished()`, or until nothing is left to run. Hosted: runs
  // the daemon until it has shut down (the client closing its end is the daemon's input ending), however far
  // the client got; then the io_context is ready to run again, for what the client still has to do. Returns
  // the hosted daemon's exit code (0 when attached).
  int run(const std::function<bool()>& finished);

 private:
  DaemonLink() = default;

  std::filesystem::path m_data_dir;
  std::unique_ptr<boost::asio::io_context> m_own_io;  // attached
  std::unique_ptr<daemon::Daemon> m_host;             // hosted
  int m_client_socket = -1;
  int m_daemon_end = -1;  // hosted, until the daemon answered: this process's copy of the daemon's end
  bool m_answered = false;
};

}  // namespace switchboard::client
