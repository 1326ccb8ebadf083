#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::adapters {

// What happened to the lines a translator was fed. None of these stops it.
struct LineStats {
  std::uint64_t lines = 0;
  std::uint64_t malformed = 0;  // not JSON, not an object, or a known message missing what it needs
  std::uint64_t unknown = 0;    // a type, method or response id the translator does not know
  std::uint64_t dropped = 0;    // known, and deliberately turned into nothing (heartbeats, bookkeeping, ...)
};

// Counts a translator's lines and logs the bad ones. An agent that keeps writing garbage (another version's
// format, stray prints) must not flood the log: the first malformed lines are warnings, the rest debug messages;
// stats() has the counts.
class LineLog {
 public:
  explicit LineLog(std::string prefix) : m_prefix(std::move(prefix)) {}

  void line() { ++m_stats.lines; }
  void dropped() { ++m_stats.dropped; }
  // A line that did not parse: counted as a line and as malformed.
  void not_json(std::string_view line);
  void malformed(std::string_view why, const nlohmann::json& message);
  // Logged at debug level: an unknown message is expected of a newer agent version.
  void unknown(std::string_view what);
  const LineStats& stats() const { return m_stats; }

 private:
  std::string m_prefix;  // "claude"
  LineStats m_stats;
};

// Whether `name` is one of `names` (the translators' tables of known, deliberately dropped messages).
template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& names, std::string_view name) {
  for (const auto candidate : names) {
    if (candidate == name) return true;
  }
  return false;
}

}  // namespace switchboard::adapters
