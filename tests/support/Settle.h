#pragma once

#include <unistd.h>

#include <chrono>
#include <functional>

#include <boost/asio/io_context.hpp>

namespace switchboard::testing {

// Runs `io` until nothing happened for `quiet_ms` milliseconds: what a test does when results come from other
// threads (the store's, a checkpoint's) and it has no single one to wait for. A store job under load (an fsync
// behind other processes' writes) takes tens of milliseconds, so the quiet spell is longer than that.
inline void settle(boost::asio::io_context& io, int quiet_ms = 100) {
  for (int idle = 0; idle < quiet_ms;) {
    io.restart();
    if (io.poll() == 0) {
      ++idle;
      ::usleep(1000);
    } else {
      idle = 0;
    }
  }
}

// Runs `io` until `done` holds, polling it and sleeping a millisecond whenever nothing was ready (so a store job
// or a child process that finishes meanwhile is seen at once); false after `limit`.
inline bool poll_until(boost::asio::io_context& io, const std::function<bool()>& done,
                       std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    if (io.poll() == 0) ::usleep(1000);
  }
  return true;
}

}  // namespace switchboard::testing
