#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace switchboard::testing {

// A file of the source tree the tests read or run (a fixture, a fake agent, a script), by its path from the
// top of the tree. Built with std::filesystem rather than `std::string(SWITCHBOARD_SOURCE_DIR) + "..."`: GCC 12
// at -O2 reports a false -Warray-bounds in that concatenation of two literals for some lengths of the checkout's
// path, so whether the tests compiled with warnings as errors depended on where the tree lies.
inline std::string source_path(std::string_view relative) {
  return (std::filesystem::path(SWITCHBOARD_SOURCE_DIR) / relative).string();
}

}  // namespace switchboard::testing
