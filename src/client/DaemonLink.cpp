#include "client/DaemonLink.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "client/AttachRelay.h"
#include "daemon/DataDirectory.h"

namespace switchboard::client {
namespace {

std::filesystem::path data_dir_of(const daemon::DaemonOptions& options) {
  return options.data_dir.value_or(daemon::DataDirectory::default_path());
}

void close_if_open(int& fd) {
  if (fd >= 0) ::close(std::exchange(fd, -1));
}

}  // namespace

std::optional<int> running_daemon(const daemon::DaemonOptions& options, Attach attach) {
  if (attach == Attach::Never || options.ephemeral) return std::nullopt;
  const auto data_dir = data_dir_of(options);
  auto socket = connect_to_running_daemon(data_dir);
  if (socket) spdlog::debug("attaching to the daemon running on {}", data_dir.string());
  return socket;
}

std::unique_ptr<DaemonLink> DaemonLink::open(const char* name, daemon::DaemonOptions options, Attach attach,
                                             const std::function<void(daemon::DaemonOptions&)>& host_only) {
  std::unique_ptr<DaemonLink> link(new DaemonLink);
  link->m_data_dir = data_dir_of(options);
  if (auto socket = running_daemon(options, attach)) {
    link->m_own_io = std::make_unique<boost::asio::io_context>(1);
    link->m_client_socket = *socket;
    return link;
  }
  // No daemon runs (or the command wants its own): one here, reached over a socketpair exactly as over
  // daemon.sock. Its stdio transport is the pair's one end; the client closing the other is its stdin closing,
  // which it takes as its end: it stops its agents and shuts down.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    spdlog::error("{}: socketpair: {}", name, std::strerror(errno));
    return nullptr;
  }
  link->m_daemon_end = pair[0];
  link->m_client_socket = pair[1];
  options.stdin_fd = pair[0];
  options.stdout_fd = pair[0];
  options.handle_signals = false;  // the command's own handlers end the connection in order
  if (host_only) host_only(options);
  link->m_host = std::make_unique<daemon::Daemon>(std::move(options));
  return link;
}

DaemonLink::~DaemonLink() {
  close_if_open(m_client_socket);
  close_if_open(m_daemon_end);
}

boost::asio::io_context& DaemonLink::io() { return m_host ? m_host->io() : *m_own_io; }

int DaemonLink::take_client_socket() { return std::exchange(m_client_socket, -1); }

void DaemonLink::daemon_answered() {
  m_answered = true;
  close_if_open(m_daemon_end);
}

int DaemonLink::run(const std::function<bool()>& finished) {
  if (!m_host) {
    while (!finished()) {
      if (m_own_io->run_one() == 0) break;
    }
    return 0;
  }
  const int daemon_code = m_host->run_stdio();
  // A daemon that stopped before it answered (it could not start: its data directory is another daemon's, or
  // unusable) leaves our copy of its end open: closing it ends the client's connection.
  close_if_open(m_daemon_end);
  m_host->io().restart();
  return daemon_code;
}

}  // namespace switchboard::client
