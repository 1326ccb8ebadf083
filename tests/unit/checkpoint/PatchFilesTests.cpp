#include <catch2/catch.hpp>

#include <string>

#include "checkpoint/PatchFiles.h"

// git's patch between two trees read as FileChange entries, one per path diff-tree listed, in its order.

namespace patch_files_tests {

using switchboard::checkpoint::PatchFiles;
namespace p = switchboard::protocol;

const std::string kPatch =
    "diff --git a/added.txt b/added.txt\n"
    "new file mode 100644\n"
    "index 0000000..257cc56\n"
    "--- /dev/null\n"
    "+++ b/added.txt\n"
    "@@ -0,0 +1 @@\n"
    "+diff --git is only text here\n"
    "diff --git a/image.png b/image.png\n"
    "index 1111111..2222222 100644\n"
    "Binary files a/image.png and b/image.png differ\n"
    "diff --git a/link b/link\n"
    "deleted file mode 100644\n"
    "index 3333333..0000000\n"
    "--- a/link\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-was a file\n"
    "diff --git a/link b/link\n"
    "new file mode 120000\n"
    "index 0000000..4444444\n"
    "--- /dev/null\n"
    "+++ b/link\n"
    "@@ -0,0 +1 @@\n"
    "+target\n"
    "\\ No newline at end of file\n"
    "diff --git a/gone.txt b/gone.txt\n"
    "deleted file mode 100644\n"
    "index 5555555..0000000\n"
    "--- a/gone.txt\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-bye\n";

TEST_CASE("patch files: each path takes its sections in order, a type change two, binary files without a diff", "[checkpoint]") {
  PatchFiles files(kPatch);
  CHECK(files.sections() == 5);
  const auto added = files.next("added.txt", 'A');
  CHECK(added.status == p::FileChangeStatus::Added);
  // A content line that reads like a section's start is content: it opens with '+'.
  CHECK(added.diff.find("+diff --git is only text here\n") != std::string::npos);
  CHECK(added.diff.starts_with("diff --git a/added.txt"));

  const auto image = files.next("image.png", 'M');
  CHECK(image.status == p::FileChangeStatus::Modified);
  CHECK(image.binary == true);
  CHECK(image.diff.empty());

  const auto link = files.next("link", 'T');
  CHECK(link.status == p::FileChangeStatus::Modified);
  CHECK(link.diff.find("-was a file\n") != std::string::npos);
  CHECK(link.diff.find("+target\n") != std::string::npos);

  const auto gone = files.next("gone.txt", 'D');
  CHECK(gone.status == p::FileChangeStatus::Deleted);
  CHECK(files.left() == 0);
  // A path git listed without a section gets an empty diff, and nothing is left over to take.
  const auto extra = files.next("extra.txt", 'M');
  CHECK(extra.diff.empty());
}

TEST_CASE("patch files: sections git wrote for no listed path are counted as left", "[checkpoint]") {
  PatchFiles files(kPatch);
  (void)files.next("added.txt", 'A');
  CHECK(files.left() == 4);
  CHECK(PatchFiles("").sections() == 0);
}

}  // namespace patch_files_tests
