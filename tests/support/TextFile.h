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

// Replaces the file's content with `content`, byte for byte, making the directories it needs.
inline void write_text_file(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

}  // namespace switchboard::testing
