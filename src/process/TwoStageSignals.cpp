#include "process/TwoStageSignals.h"

#include <unistd.h>

#include <csignal>

#include <spdlog/spdlog.h>

#include "process/ProcessGroupRegistry.h"

namespace switchboard::process {

TwoStageSignals::TwoStageSignals(boost::asio::io_context& io, Handlers handlers)
    : m_signals(io, SIGINT, SIGTERM), m_handlers(std::move(handlers)) {
  wait();
}

void TwoStageSignals::stop() {
  boost::system::error_code ignored;
  m_signals.cancel(ignored);
}

void TwoStageSignals::wait() {
  m_signals.async_wait([this](const boost::system::error_code& error, int signal) {
    if (error) return;
    const auto now = std::chrono::steady_clock::now();
    const bool echo = m_seen > 0 && signal == m_first_signal && now - m_first_at < kEchoWindow;
    if (echo) return wait();
    if (m_seen++ > 0 || (m_handlers.already_ending && m_handlers.already_ending())) {
      spdlog::warn("{}: second signal {}: exiting at once", m_handlers.name, signal);
      ProcessGroupRegistry::the().kill_all_and_descendants();
      ::_exit(m_handlers.exit_code(signal));
    }
    m_first_signal = signal;
    m_first_at = now;
    wait();
    m_handlers.first(signal);
  });
}

}  // namespace switchboard::process
