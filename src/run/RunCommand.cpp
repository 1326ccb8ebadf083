#include "run/RunCommand.h"

#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <boost/asio/post.hpp>

#include "client/DaemonLink.h"
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

// What only a daemon this run hosts is told (an attached run leaves the user's daemon as it is).
void configure_hosted_daemon(const RunOptions& options, daemon::DaemonOptions& daemon_options) {
  daemon_options.ephemeral = options.ephemeral;
  // The turn needs the agent's path, which discovery finds at once; the `--version` probes would only compete
  // with the agent's start for the cores (a second Node for Claude Code). They run if a client that attaches to
  // this daemon lists the agents.
  daemon_options.engine.defer_discovery = true;
  // Nobody here shows text as it is written, unless the output does: the agent may then write whole messages
  // only, which makes Claude Code's turn measurably shorter (docs/performance.md). A client that attaches to
  // this daemon sees each message once it is complete.
  daemon_options.engine.stream_text = shows_streamed_text(options.output, stderr_is_terminal());
  // A new session's agent is known now: it starts while the daemon opens its store (Engine::prestart).
  // Not for a fork (the engine makes that session), nor for MCP servers (the session hands them to its agent).
  // Nor for a worktree, whose directory the daemon has still to make.
  if (!options.session_id && !options.continue_newest && !options.fork_of && options.mcp_servers.empty() &&
      !options.worktree) {
    daemon_options.prestart = engine::AgentPrestart{options.agent, options.cwd, options.model, options.mode};
  }
}

}  // namespace

int run_headless(RunOptions options, daemon::DaemonOptions daemon_options) {
  // A reader that goes away (`| head`) must surface as EPIPE, not end the process.
  std::signal(SIGPIPE, SIG_IGN);
  const auto attach = options.standalone ? client::Attach::Never : client::Attach::IfRunning;
  const auto link = client::DaemonLink::open("run", std::move(daemon_options), attach,
                                             [&options](daemon::DaemonOptions& hosted) { configure_hosted_daemon(options, hosted); });
  if (!link) return kRunFailed;
  auto& io = link->io();
  int exit_code = kRunFailed;
  std::unique_ptr<process::TwoStageSignals> signals;
  const auto format = options.output;
  HeadlessRun run(io, std::move(options), link->attached(), link->take_client_socket(),
                  make_output(io, format, output_streams(io)), [&](int code) {
                    exit_code = code;
                    signals->stop();
                  });
  signals = std::make_unique<process::TwoStageSignals>(io, run_signals(run));
  run.on_initialized([&link] { link->daemon_answered(); });
  run.start();
  const int daemon_code = link->run([&run] { return run.finished(); });
  if (link->attached()) {
    io.run_for(kCloseLimit);  // the daemon closes the connection once it has our half-close
  } else if (!run.finished()) {
    // The daemon could not start (its data directory is another daemon's, or unusable; it said why): that
    // is a configuration matter for the run.
    run.abandon(kRunInvalid, "no daemon could run for the data directory " + link->data_dir().string() + " (exit " +
                                 std::to_string(daemon_code) + ")");
    io.run_for(std::chrono::seconds(2));
  }
  return exit_code;
}

}  // namespace switchboard::run
