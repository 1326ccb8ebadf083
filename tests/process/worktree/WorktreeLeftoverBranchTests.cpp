// The start-up clean-up of a worktree create the daemon did not finish (WorktreeGit::remove_leftovers): the branch
// the create made goes with its directory while nothing was done on it, and stays otherwise.

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "support/GitRepository.h"
#include "support/TextFile.h"
#include "support/WorktreeRepository.h"
#include "worktree/WorktreeGit.h"

namespace worktree_leftover_branch_tests {

namespace fs = std::filesystem;
using switchboard::testing::git_output;
using switchboard::testing::WorktreeRepository;
using switchboard::testing::write_text_file;
using switchboard::worktree::CreateRequest;

bool branch_exists(const fs::path& repo, const std::string& branch) {
  return !git_output(repo, "branch --list " + branch).empty();
}

// A create whose session was never stored (and never settled) is what a daemon killed in the middle of making a
// worktree session leaves: the marked directory, git's entry and the new branch.
TEST_CASE("worktree leftovers: the branch of an unfinished create is deleted with its directory while it is "
          "unused, and kept once it has a commit or is checked out elsewhere",
          "[worktree]") {
  const WorktreeRepository w{"worktree-leftover-branch", {{"app.txt", "one\n"}}};
  auto created = w.worktrees.create(CreateRequest{w.repo, "half", "", ""});
  REQUIRE(created.has_value());
  const fs::path tree = created->place.path;
  REQUIRE(branch_exists(w.repo, "half"));

  SECTION("nothing done on it: the directory, git's entry and the branch are gone") {
    CHECK(w.worktrees.remove_leftovers({}) == std::vector<fs::path>{tree});
    CHECK(!fs::exists(tree));
    CHECK(git_output(w.repo, "worktree list --porcelain").find(tree.string()) == std::string::npos);
    CHECK(!branch_exists(w.repo, "half"));
  }
  SECTION("killed before the directory was made: the branch is still taken back") {
    fs::remove_all(tree);
    CHECK(w.worktrees.remove_leftovers({}).empty());
    CHECK(!branch_exists(w.repo, "half"));
  }
  SECTION("a commit on the branch: it is kept") {
    write_text_file(tree / "app.txt", "two\n");
    git_output(tree, "commit -q -am work");
    const auto work = git_output(w.repo, "rev-parse half");
    CHECK(w.worktrees.remove_leftovers({}) == std::vector<fs::path>{tree});
    CHECK(!fs::exists(tree));
    CHECK(git_output(w.repo, "rev-parse half") == work);
  }
  SECTION("checked out in another worktree: it is kept") {
    fs::remove_all(tree);
    git_output(w.repo, "worktree prune");
    const auto other = w.temp.path() / "elsewhere";
    git_output(w.repo, "worktree add -q '" + other.string() + "' half");
    REQUIRE(fs::exists(other / "app.txt"));
    CHECK(w.worktrees.remove_leftovers({}).empty());
    CHECK(branch_exists(w.repo, "half"));
    CHECK(fs::exists(other / "app.txt"));
  }
  SECTION("a stored session's worktree: nothing is touched") {
    CHECK(w.worktrees.remove_leftovers({tree}).empty());
    CHECK(fs::exists(tree / "app.txt"));
    CHECK(branch_exists(w.repo, "half"));
  }
}

}  // namespace worktree_leftover_branch_tests
