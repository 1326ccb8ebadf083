#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace switchboard::testing {

// The whole content of a file; empty when it cannot be read (a test then fails on what it expected to find).
inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace switchboard::testing
