#include "acp/AcpCommand.h"

#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "acp/AcpServer.h"
#include "daemon/AttachRelay.h"
#include "daemon/DataDirectory.h"
#include "process/ProcessGroupRegistry.h"
#include "process/TwoStageSignals.h"

namespace switchboard::acp {
namespace acp_command_detail {

// Once the editor is gone, how long the process waits for the daemon to close the connection (an in-process
// daemon stops its agents first).
constexpr auto kCloseLimit = std::chrono::seconds(20);

// Where the images and binary resources of prompts are written for the agent to read: the user's own, per
// process (the agents read them while the turn runs, so they outlive nothing but this process's files).
std::filesystem::path spill_dir() {
  std::error_code error;
  // $TMPDIR, else the C library's default; when that fails, the C library's P_tmpdir.
  auto base = std::filesystem::temp_directory_path(error);
  if (error) base = P_tmpdir;
  return base / ("switchboard-acp-" + std::to_string(::getuid())) / std::to_string(::getpid());
}

// An editor stops its agent with SIGTERM (or the user with ^C): the first ends the daemon connection in order,
// a second exits at once.
process::TwoStageSignals::Handlers acp_signals(AcpServer& server) {
  return {[&server](int) { server.stop(); }, nullptr, [](int signal) { return 128 + signal; }, "acp"};
}

AcpServer::Options server_options(const AcpOptions& options, bool attached) {
  return AcpServer::Options{options.agent, options.cwd, spill_dir(), attached};
}

}  // namespace acp_command_detail

using namespace acp_command_detail;

int run_acp(AcpOptions options, daemon::DaemonOptions daemon_options) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto data_dir = daemon_options.data_dir.value_or(daemon::DataDirectory::default_path());
  std::optional<int> attached_socket;
  if (!options.standalone && !daemon_options.ephemeral) attached_socket = daemon::connect_to_running_daemon(data_dir);

  int exit_code = 1;
  if (attached_socket) {
    spdlog::debug("acp: attaching to the daemon running on {}", data_dir.string());
    boost::asio::io_context io{1};
    std::unique_ptr<process::TwoStageSignals> signals;
    AcpServer server(io, server_options(options, true), *attached_socket, STDIN_FILENO, STDOUT_FILENO, [&](int code) {
      exit_code = code;
      signals->stop();
    });
    signals = std::make_unique<process::TwoStageSignals>(io, acp_signals(server));
    server.start();
    while (!server.finished()) {
      if (io.run_one() == 0) break;
    }
    return exit_code;
  }

  // No daemon runs: host one here and talk to it over a socketpair exactly as over daemon.sock (as `run`
  // does); its stdio transport is the pair's one end, and our end's half-close is its stdin closing.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    spdlog::error("acp: socketpair: {}", std::strerror(errno));
    return 1;
  }
  daemon_options.stdin_fd = pair[0];
  daemon_options.stdout_fd = pair[0];
  daemon_options.handle_signals = false;  // ours end the connection in order
  daemon::Daemon host(std::move(daemon_options));
  auto& io = host.io();
  std::unique_ptr<process::TwoStageSignals> signals;
  AcpServer server(io, server_options(options, false), pair[1], STDIN_FILENO, STDOUT_FILENO, [&](int code) {
    exit_code = code;
    signals->stop();
  });
  signals = std::make_unique<process::TwoStageSignals>(io, acp_signals(server));
  bool end_closed = false;
  server.on_daemon_initialized([&end_closed, fd = pair[0]] {
    ::close(fd);
    end_closed = true;
  });
  server.start();
  const int daemon_code = host.run_stdio();
  if (!end_closed) ::close(pair[0]);
  // The daemon has stopped; what it wrote last (and our answers to the editor) may still be on their way.
  io.restart();
  const auto deadline = std::chrono::steady_clock::now() + kCloseLimit;
  while (!server.finished() && std::chrono::steady_clock::now() < deadline) {
    if (io.run_one_for(std::chrono::milliseconds(100)) == 0 && !end_closed) break;
  }
  // The hosted daemon and its agents are gone: nobody reads the prompts' files any more. (An attached run
  // leaves them: the user's daemon may still be running a turn that reads them.)
  std::error_code ignored;
  std::filesystem::remove_all(spill_dir(), ignored);
  if (!server.finished()) {
    spdlog::error("acp: no daemon could run for the data directory {} (exit {})", data_dir.string(), daemon_code);
    return daemon_code == 0 ? 1 : daemon_code;
  }
  return exit_code;
}

}  // namespace switchboard::acp
