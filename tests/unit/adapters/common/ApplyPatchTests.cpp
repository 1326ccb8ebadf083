#include <catch2/catch.hpp>

#include <string>

#include "common/ApplyPatch.h"

// The one reader of the apply_patch envelope (adapters/common/ApplyPatch.h), which Codex's history and the
// FileDiffs of Codex and OpenCode both build on.

namespace apply_patch_tests {

using switchboard::adapters::PatchAction;
using switchboard::adapters::read_apply_patch;

TEST_CASE("apply_patch: each file of the envelope with its action, path, move and body", "[apply-patch]") {
  const auto files = read_apply_patch(
      "*** Begin Patch\n"
      "*** Add File: new.txt\n+first\n+second\n"
      "*** Update File: src/a.py\n*** Move to: src/b.py\n@@ def f():\n a\n-b\n+B\n*** End of File\n"
      "*** Delete File: /abs/gone.txt\n"
      "*** End Patch\n");
  REQUIRE(files.size() == 3);
  CHECK(files[0].action == PatchAction::Add);
  CHECK(files[0].path == "new.txt");
  CHECK(files[0].body == "first\nsecond\n");
  CHECK_FALSE(files[0].move_to);
  CHECK(files[1].action == PatchAction::Update);
  CHECK(files[1].path == "src/a.py");
  CHECK(files[1].move_to == std::optional<std::string>("src/b.py"));
  // An update's lines as written, hunk mark included; the "*** End of File" marker is not one of them.
  CHECK(files[1].body == "@@ def f():\n a\n-b\n+B\n");
  CHECK(files[2].action == PatchAction::Delete);
  CHECK(files[2].path == "/abs/gone.txt");
  CHECK(files[2].body.empty());
}

TEST_CASE("apply_patch: CRLF line ends read like LF ones, and paths are trimmed of spaces and tabs", "[apply-patch]") {
  const std::string lf = "*** Begin Patch\n*** Add File: /w/c\n+x\n*** Update File: /w/d\n*** Move to: /w/e\n-y\n+z\n*** End Patch\n";
  const std::string crlf = "*** Begin Patch\r\n*** Add File:  /w/c\t\r\n+x\r\n*** Update File: \t/w/d \r\n*** Move to:  /w/e \r\n-y\r\n+z\r\n*** End Patch\r\n";
  const auto expected = read_apply_patch(lf);
  const auto read = read_apply_patch(crlf);
  REQUIRE(expected.size() == 2);
  REQUIRE(read.size() == 2);
  for (std::size_t i = 0; i < read.size(); ++i) {
    CAPTURE(i);
    CHECK(read[i].action == expected[i].action);
    CHECK(read[i].path == expected[i].path);
    CHECK(read[i].move_to == expected[i].move_to);
    CHECK(read[i].body == expected[i].body);
  }
  CHECK(read[0].path == "/w/c");
  CHECK(read[0].body == "x\n");
  CHECK(read[1].path == "/w/d");
  CHECK(read[1].move_to == std::optional<std::string>("/w/e"));
  CHECK(read[1].body == "-y\n+z\n");
}

TEST_CASE("apply_patch: a header without a path, lines outside any file and an added file's unmarked lines are skipped", "[apply-patch]") {
  CHECK(read_apply_patch("").empty());
  CHECK(read_apply_patch("*** Begin Patch\n*** Add File:  \n+x\n*** End Patch\n").empty());
  const auto files = read_apply_patch("stray\n*** Begin Patch\n*** Add File: a\nnot a plus line\n+kept\n*** End Patch\n+after the end\n");
  REQUIRE(files.size() == 1);
  CHECK(files[0].body == "kept\n");
  // The last line may come without its line end.
  const auto unterminated = read_apply_patch("*** Update File: u\n-old\n+new");
  REQUIRE(unterminated.size() == 1);
  CHECK(unterminated[0].body == "-old\n+new\n");
}

}  // namespace apply_patch_tests
