#pragma once

#include <chrono>

#include <boost/asio/io_context.hpp>

namespace switchboard::testing {

// Runs `io` until `done()` holds, checking after every handler; false after `timeout`. Work that is queued
// elsewhere (a store job, a child process) holds the io_context, so run_one_for waits for it instead of
// returning early. (ProcessTestSupport.h's run_until runs in 10 ms slices instead, and checks between them.)
template <class Done>
bool run_handlers_until(boost::asio::io_context& io, Done done,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  io.restart();
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (io.run_one_for(std::chrono::milliseconds(50)) == 0) io.restart();
  }
  return true;
}

}  // namespace switchboard::testing
