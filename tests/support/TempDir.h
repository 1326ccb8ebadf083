#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace switchboard::testing {

// A fresh directory under /tmp for one test, removed with everything in it afterwards. `purpose` names it
// (/tmp/switchboard-<purpose>-XXXXXX), so a directory a crashed test left behind says which test made it.
class TempDir {
 public:
  explicit TempDir(std::string_view purpose = "test") {
    std::string name = "/tmp/switchboard-" + std::string(purpose) + "-XXXXXX";
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + name);
    m_path = name;
  }
  ~TempDir() {
    std::error_code ignored;
    // A test may have taken its own permissions away (to provoke a write error); give them back to remove it.
    std::filesystem::permissions(m_path, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(m_path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

}  // namespace switchboard::testing
