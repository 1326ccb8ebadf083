#pragma once

#include <chrono>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

namespace switchboard::process {

// SIGINT and SIGTERM for a command in the foreground (`switchboard run`, `switchboard acp`): the first asks for
// an orderly end; a second one kills every process group the command started and exits at once. The same signal
// again within kEchoWindow is the first one seen twice, not a user insisting: timeout(1) and some CI runners
// signal the process and then its group.
class TwoStageSignals {
 public:
  struct Handlers {
    std::function<void(int signal)> first;         // the orderly end
    std::function<bool()> already_ending;          // a first signal now counts as the second
    std::function<int(int signal)> exit_code;      // the code of the exit at once
    const char* name = "switchboard";              // for the log line
  };
  static constexpr auto kEchoWindow = std::chrono::milliseconds(500);

  TwoStageSignals(boost::asio::io_context& io, Handlers handlers);
  // No more handling (the command is ending its own way).
  void stop();

 private:
  void wait();

  boost::asio::signal_set m_signals;
  Handlers m_handlers;
  int m_seen = 0;
  int m_first_signal = 0;
  std::chrono::steady_clock::time_point m_first_at;
};

}  // namespace switchboard::process
