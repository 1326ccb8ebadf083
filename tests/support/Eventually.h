#pragma once

#include <chrono>
#include <thread>

namespace switchboard::testing {

// Polls `predicate` every `poll` until it holds or `limit` has passed, for what another thread or process does
// in its own time; returns whether it held at the end.
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(10),
                std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(poll);
  }
  return predicate();
}

}  // namespace switchboard::testing
