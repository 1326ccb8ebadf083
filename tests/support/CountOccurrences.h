#pragma once

#include <cstddef>
#include <string>

namespace switchboard::testing {

// How many times `needle` occurs in `text`, occurrences not overlapping (a log line counted in a log, say).
inline std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++count;
  return count;
}

}  // namespace switchboard::testing
