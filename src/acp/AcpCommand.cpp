#include "acp/AcpCommand.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "acp/AcpServer.h"
#include "client/DaemonLink.h"
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

}  // namespace acp_command_detail

using namespace acp_command_detail;

int run_acp(AcpOptions options, daemon::DaemonOptions daemon_options) {
  std::signal(SIGPIPE, SIG_IGN);
  const auto attach = options.standalone ? client::Attach::Never : client::Attach::IfRunning;
  const auto link = client::DaemonLink::open("acp", std::move(daemon_options), attach);
  if (!link) return 1;
  auto& io = link->io();
  int exit_code = 1;
  std::unique_ptr<process::TwoStageSignals> signals;
  AcpServer server(io, AcpServer::Options{options.agent, options.cwd, spill_dir(), link->attached()},
                   link->take_client_socket(), STDIN_FILENO, STDOUT_FILENO, [&](int code) {
                     exit_code = code;
                     signals->stop();
                   });
  signals = std::make_unique<process::TwoStageSignals>(io, acp_signals(server));
  server.on_daemon_initialized([&link] { link->daemon_answered(); });
  server.start();
  const int daemon_code = link->run([&server] { return server.finished(); });
  if (link->attached()) return exit_code;

  // The hosted daemon has stopped; what it wrote last (and our answers to the editor) may still be on their way.
  const auto deadline = std::chrono::steady_clock::now() + kCloseLimit;
  while (!server.finished() && std::chrono::steady_clock::now() < deadline) {
    if (io.run_one_for(std::chrono::milliseconds(100)) == 0 && !link->daemon_has_answered()) break;
  }
  // The hosted daemon and its agents are gone: nobody reads the prompts' files any more. (An attached run
  // leaves them: the user's daemon may still be running a turn that reads them.)
  std::error_code ignored;
  std::filesystem::remove_all(spill_dir(), ignored);
  if (!server.finished()) {
    spdlog::error("acp: no daemon could run for the data directory {} (exit {})", link->data_dir().string(), daemon_code);
    return daemon_code == 0 ? 1 : daemon_code;
  }
  return exit_code;
}

}  // namespace switchboard::acp
