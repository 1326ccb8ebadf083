#include "run/RunCommand.h"

#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <cstdlib>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "daemon/AttachRelay.h"
#include "process/ProcessGroupRegistry.h"
#include "process/TwoStageSignals.h"
#include "run/HeadlessRun.h"

namespace switchboard::run {
namespace {

// Once the result is out, how long the process waits for the daemon to close the connection (an in-process
// daemon stops its agents first) before it stops waiting.
constexpr auto kCloseLimit = std::chrono::seconds(20);

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

OutputStreams output_streams(boost::asio::io_context& io) {
  OutputStreams streams;
  streams.out = std::make_shared<transport::FdWriter>(io, STDOUT_FILENO);
  streams.err = std::make_shared<transport::FdWriter>(io, STDERR_FILENO);
  streams.err_is_terminal = stderr_is_terminal();
  const char* no_colour = std::getenv("NO_COLOR");
  streams.colour = streams.err_is_terminal && (no_colour == nullptr || *no_colour == '\0');
  return streams;
}

// The signals of the run's process: the first cancels the turn, a second (or one after the result) exits at once.
process::TwoStageSignals::Handlers run_signals(HeadlessRun& run) {
  return {[&run](int signal) { run.interrupt(signal); }, [&run] { return run.finished(); },
          [](int signal) { return signal == SIGTERM ? kRunTerminated : kRunInterrupted; }, "run"};
}

// Runs the io_context until the run is over and the connection closed, bounded once the result is out.
void run_until_closed(boost::asio::io_context& io, const HeadlessRun& run) {
  while (!run.finished()) {
    if (io.run_one() == 0) return;
  }
  io.run_for(kCloseLimit);
}

}  // namespace

int run_headless(RunOptions options, daemon::DaemonOptions daemon_options) {
  // A reader that goes away (`| head`) must surface as EPIPE, not end the process.
  std::signal(SIGPIPE, SIG_IGN);
  const auto data_dir = daemon_options.data_dir.value_or(daemon::DataDirectory::default_path());
  std::optional<int> attached_socket;
  if (!options.standalone) attached_socket = daemon::connect_to_running_daemon(data_dir);

  if (attached_socket) {
    boost::asio::io_context io{1};
    int exit_code = kRunFailed;
    std::unique_ptr<process::TwoStageSignals> signals;
    const auto format = options.output;
    HeadlessRun run(io, std::move(options), /*attached=*/true, *attached_socket, make_output(io, format, output_streams(io)),
                    [&](int code) {
                      exit_code = code;
                      signals->stop();
                    });
    signals = std::make_unique<process::TwoStageSignals>(io, run_signals(run));
    run.start();
    run_until_closed(io, run);
    return exit_code;
  }

  // No daemon runs (or this run wants its own): host one here, and talk to it over a socketpair exactly as
  // over daemon.sock. Its stdio transport is this pair's one end; the end of the run closes the other, which
  // the daemon takes as its stdin closing: it stops the agent and shuts down.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    spdlog::error("run: socketpair: {}", std::strerror(errno));
    return kRunFailed;
  }
  daemon_options.stdin_fd = pair[0];
  daemon_options.stdout_fd = pair[0];
  daemon_options.ephemeral = options.ephemeral;
  daemon_options.handle_signals = false;  // the run's own handler cancels the turn first
  // The turn needs the agent's path, which discovery finds at once; the `--version` probes would only compete
  // with the agent's start for the cores (a second Node for Claude Code). They run if a client that attaches to
  // this daemon lists the agents.
  daemon_options.engine.defer_discovery = true;
  // Nobody here shows text as it is written, unless the output does: the agent may then write whole messages
  // only, which makes Claude Code's turn measurably shorter (docs/performance.md). A client that attaches to
  // this daemon sees each message once it is complete. An attached run leaves the user's daemon as it is.
  daemon_options.engine.stream_text = shows_streamed_text(options.output, stderr_is_terminal());
  // A new session's agent is known now: it starts while the daemon opens its store (Engine::prestart).
  if (!options.session_id && !options.continue_newest) {
    daemon_options.prestart = engine::AgentPrestart{options.agent, options.cwd, options.model, options.mode};
  }
  daemon::Daemon host(std::move(daemon_options));
  auto& io = host.io();
  int exit_code = kRunFailed;
  std::unique_ptr<process::TwoStageSignals> signals;
  const auto format = options.output;
  HeadlessRun run(io, std::move(options), /*attached=*/false, pair[1], make_output(io, format, output_streams(io)),
                  [&](int code) {
                    exit_code = code;
                    signals->stop();
                  });
  signals = std::make_unique<process::TwoStageSignals>(io, run_signals(run));
  // Once the daemon answered, its transport holds duplicates of its end: closing ours lets the run see the
  // connection end when the daemon closes it. (Not earlier: the daemon may run handlers while it opens its
  // store, before its transport exists, and a closed end would reset the connection.)
  bool end_closed = false;
  run.on_initialized([&end_closed, fd = pair[0]] {
    ::close(fd);
    end_closed = true;
  });
  run.start();
  const int daemon_code = host.run_stdio();
  if (!run.finished()) {
    // The daemon could not start (its data directory is another daemon's, or unusable; it said why): that
    // is a configuration matter for the run.
    if (!end_closed) ::close(pair[0]);
    run.abandon(kRunInvalid, "no daemon could run for the data directory " + data_dir.string() + " (exit " +
                                 std::to_string(daemon_code) + ")");
    io.restart();
    io.run_for(std::chrono::seconds(2));
  }
  return exit_code;
}

}  // namespace switchboard::run
