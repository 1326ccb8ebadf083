#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/transport/StdioTransport.h"

namespace switchboard::daemon {

struct DaemonOptions {
  std::size_t max_line_bytes = 8 * 1024 * 1024;
  int stdin_fd = 0;
  int stdout_fd = 1;
};

// Owns everything of one daemon process and wires it together: the single io_context, the event bus (and its
// installation as the process-wide bus), the egress, the dispatcher with every method bound, the transports
// and the signal handling. Members are declared in dependency order, so destruction tears down transports
// before the egress and the bus.
class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();

  // Serves stdio until a graceful shutdown completes; returns the process exit code.
  int run_stdio();

  // Idempotent. Stops taking work, tells clients, flushes output; run() returns once nothing is left.
  void begin_shutdown(protocol::DaemonShutdownEventReason reason);

  boost::asio::io_context& io() { return m_io; }
  rpc::Dispatcher& dispatcher() { return m_dispatcher; }

 private:
  void on_signal(const boost::system::error_code& error, int signal);
  void finish_shutdown();

  DaemonOptions m_options;
  boost::asio::io_context m_io{1};  // one thread runs it: every handler is implicitly serialized
  bus::EventBus m_bus;
  bus::EventBus::Installation m_bus_installation{m_bus};
  bus::Egress m_egress{m_bus};
  rpc::Dispatcher m_dispatcher;
  boost::asio::signal_set m_signals{m_io};
  std::unique_ptr<transport::StdioTransport> m_stdio;
  bool m_shutting_down = false;
  int m_signals_seen = 0;
};

}  // namespace switchboard::daemon
