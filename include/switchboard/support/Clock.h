#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard {

// Wall-clock time as carried on the wire: Unix epoch milliseconds.
inline std::int64_t unix_millis_now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// An ISO 8601 / RFC 3339 timestamp as agents write them ("2026-01-02T03:04:05.678Z", "…+02:00", fractions of
// any length, 'T' or ' ') in Unix epoch milliseconds; none for anything else, including impossible dates.
std::optional<std::int64_t> parse_iso8601_millis(std::string_view text);

// Unix epoch milliseconds as the UTC timestamp parse_iso8601_millis reads back ("2026-01-02T03:04:05.678Z").
std::string format_iso8601_millis(std::int64_t millis);

}  // namespace switchboard
