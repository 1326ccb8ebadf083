#include "daemon/Daemon.h"

#include <unistd.h>

#include <csignal>

#include <spdlog/spdlog.h>

#include "daemon/CoreMethods.h"

namespace switchboard::daemon {

Daemon::Daemon(DaemonOptions options) : m_options(options) {
  // A reader that goes away must surface as EPIPE on write, not kill the daemon.
  std::signal(SIGPIPE, SIG_IGN);
  bind_core_methods(m_dispatcher, CoreMethodsConfig{m_options.max_line_bytes});
  m_signals.add(SIGINT);
  m_signals.add(SIGTERM);
  m_signals.async_wait([this](const auto& error, int signal) { on_signal(error, signal); });
}

Daemon::~Daemon() = default;

void Daemon::on_signal(const boost::system::error_code& error, int signal) {
  if (error) return;  // cancelled at shutdown
  ++m_signals_seen;
  if (m_signals_seen > 1 || m_shutting_down) {
    // The second signal means "now": the user already asked once and we are still here.
    spdlog::warn("second signal {}, exiting at once", signal);
    ::_exit(128 + signal);
  }
  spdlog::info("signal {} received, shutting down", signal);
  begin_shutdown(protocol::DaemonShutdownEventReason::Signal);
  m_signals.async_wait([this](const auto& next_error, int next_signal) { on_signal(next_error, next_signal); });
}

int Daemon::run_stdio() {
  transport::StdioTransport::Options stdio_options;
  stdio_options.input_fd = m_options.stdin_fd;
  stdio_options.output_fd = m_options.stdout_fd;
  stdio_options.max_line_bytes = m_options.max_line_bytes;
  m_stdio = std::make_unique<transport::StdioTransport>(m_io, m_dispatcher, m_egress, stdio_options, [this] {
    spdlog::debug("stdin closed");
    if (const auto& client = m_stdio->peer()->client_id()) {
      m_bus.publish_global(protocol::ClientDetachedEvent{*client});
    }
    begin_shutdown(protocol::DaemonShutdownEventReason::StdinClosed);
  });
  m_stdio->start();
  spdlog::info("switchboard stdio ready (pid {})", ::getpid());
  m_io.run();
  m_stdio.reset();
  return 0;
}

void Daemon::begin_shutdown(protocol::DaemonShutdownEventReason reason) {
  if (m_shutting_down) return;
  m_shutting_down = true;
  m_dispatcher.set_draining(true);
  m_bus.publish_global(protocol::DaemonShutdownEvent{reason});
  if (m_stdio) {
    m_stdio->stop_input();
    m_stdio->when_output_drained([this] { finish_shutdown(); });
  } else {
    finish_shutdown();
  }
}

void Daemon::finish_shutdown() {
  // Nothing is left to write: release the last sources of work so io_context::run() returns.
  // The signal handler stayed armed while we drained, so a second Ctrl-C still worked; now it can go.
  boost::system::error_code ignored;
  m_signals.cancel(ignored);
  m_stdio.reset();
}

}  // namespace switchboard::daemon
