#pragma once

#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/SourceTree.h"

namespace switchboard::testing {

// Recorded Claude Code lines under tests/fixtures/claude-code/ (copied into the repository; tests never read the
// capture directory they came from).
inline std::string claude_fixture_path(const std::string& name) {
  return source_path("tests/fixtures/claude-code/") + name;
}

inline std::vector<std::string> claude_fixture_lines(const std::string& name) {
  std::ifstream in(claude_fixture_path(name));
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

}  // namespace switchboard::testing
