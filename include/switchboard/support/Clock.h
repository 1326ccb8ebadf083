#pragma once

#include <chrono>
#include <cstdint>

namespace switchboard {

// Wall-clock time as carried on the wire: Unix epoch milliseconds.
inline std::int64_t unix_millis_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace switchboard
