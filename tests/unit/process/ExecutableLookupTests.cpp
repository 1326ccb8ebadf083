#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "switchboard/process/ExecutableLookup.h"
#include "support/ProcessTestSupport.h"

namespace executable_lookup_tests {

using namespace switchboard::process;
using switchboard::testing::TempDir;

std::filesystem::path make_file(const std::filesystem::path& path, bool executable) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << "#!/bin/sh\n";
  ::chmod(path.c_str(), executable ? 0755 : 0644);
  return path;
}

// The path found; fails the test with the error otherwise.
std::filesystem::path found(const ProcessResult<std::filesystem::path>& result) {
  if (!result) FAIL("lookup failed: " << result.error());
  return *result;
}

TEST_CASE("executable lookup: PATH order and skipped empty entries", "[process]") {
  TempDir dir;
  const auto first = make_file(dir.path() / "a" / "tool", true);
  make_file(dir.path() / "b" / "tool", true);
  const std::string a = (dir.path() / "a").string();
  const std::string b = (dir.path() / "b").string();
  CHECK(found(find_executable("tool", a + ":" + b, {})) == first);
  CHECK(found(find_executable("tool", "::" + b, {})) == dir.path() / "b" / "tool");
  // An empty entry does not mean "the working directory" here (execvp would search it).
  make_file(dir.path() / "tool", true);
  const auto not_found = find_executable("tool", ":", dir.path());
  REQUIRE_FALSE(not_found);
  CHECK(not_found.error().code == ProcessError::Code::ExecutableNotFound);
}

TEST_CASE("executable lookup: a non-executable match is reported unless a later one is executable", "[process]") {
  TempDir dir;
  make_file(dir.path() / "a" / "tool", false);
  const std::string a = (dir.path() / "a").string();
  const auto refused = find_executable("tool", a, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ProcessError::Code::NotExecutable);
  const auto later = make_file(dir.path() / "b" / "tool", true);
  CHECK(found(find_executable("tool", a + ":" + (dir.path() / "b").string(), {})) == later);
}

TEST_CASE("executable lookup: paths with a slash are not searched", "[process]") {
  TempDir dir;
  make_file(dir.path() / "bin" / "tool", true);
  CHECK(found(find_executable("bin/tool", "/usr/bin", dir.path())) == dir.path() / "bin" / "tool");
  CHECK(found(find_executable("./bin/../bin/tool", "", dir.path())) == dir.path() / "bin" / "tool");
  CHECK(found(find_executable("/bin/sh", "", {})) == "/bin/sh");
  const auto empty = find_executable("", "/bin", {});
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == ProcessError::Code::InvalidSpec);
}

TEST_CASE("executable lookup: the default search path finds sh", "[process]") {
  const auto path = default_search_path();
  CHECK_FALSE(path.empty());
  CHECK(find_executable("sh", path, {}));
}

}  // namespace executable_lookup_tests
