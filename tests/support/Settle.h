#pragma once

#include <unistd.h>

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

}  // namespace switchboard::testing
