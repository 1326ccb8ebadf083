// A session's own git worktree (src/worktree): made from a base on a new branch, reviewed against that base,
// merged into the user's checkout only when that is clean and the merge has no conflict (a conflict changes
// nothing there), removed without losing uncommitted work unless asked; a real repository and the git CLI.

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/GitRepository.h"
#include "support/TempDir.h"
#include "support/TextFile.h"
#include "worktree/WorktreeGit.h"

namespace worktree_git_tests {

namespace fs = std::filesystem;
using switchboard::protocol::FileChangeStatus;
using switchboard::testing::git_output;
using switchboard::testing::make_repository_with_one_commit;
using switchboard::testing::read_text_file;
using switchboard::testing::TempDir;
using switchboard::testing::write_text_file;
using switchboard::worktree::branch_from_title;
using switchboard::worktree::CreateRequest;
using switchboard::worktree::WorktreeError;
using switchboard::worktree::WorktreeGit;
using switchboard::worktree::WorktreeResult;

// Succeeded; if not, the test's report says why.
template <class T>
bool ok(const switchboard::worktree::WorktreeResult<T>& result) {
  if (result.has_error()) UNSCOPED_INFO(result.error().message);
  return result.has_value();
}

// A repository on branch main with one commit: app.txt (three lines) and src/lib.txt.
struct Repo {
  TempDir temp{"worktree"};
  fs::path main = temp.path() / "repo";
  fs::path data = temp.path() / "data" / "worktrees";
  WorktreeGit worktrees{data};

  Repo() {
    make_repository_with_one_commit(main, {{"app.txt", "one\ntwo\nthree\n"}, {"src/lib.txt", "lib\n"}, {".gitignore", "*.log\n"}});
  }
  std::string status() { return git_output(main, "status --porcelain"); }
  std::string head() { return git_output(main, "rev-parse HEAD"); }
};

TEST_CASE("worktree: a session's worktree is a new branch from HEAD under the data directory, the cwd the same "
          "place inside it", "[worktree]") {
  Repo repo;
  auto created = repo.worktrees.create(CreateRequest{repo.main / "src", "", "", "Fix the login bug!"});
  REQUIRE(ok(created));
  CHECK(created->place.branch == "switchboard/fix-the-login-bug");
  CHECK(created->place.base == "main");
  CHECK(created->place.repository == fs::canonical(repo.main));
  CHECK(created->place.path.parent_path() == repo.data);
  CHECK(created->cwd == created->place.path / "src");
  CHECK(read_text_file(created->cwd / "lib.txt") == "lib\n");
  // the worktree's own index: git sees it clean, and the user's checkout is untouched
  CHECK(git_output(created->place.path, "status --porcelain").empty());
  CHECK(git_output(created->place.path, "rev-parse --abbrev-ref HEAD") == "switchboard/fix-the-login-bug\n");
  CHECK(repo.status().empty());
  CHECK(git_output(repo.main, "worktree list").find(created->place.path.string()) != std::string::npos);

  SECTION("a derived name is made unique, a given one that exists is refused") {
    auto second = repo.worktrees.create(CreateRequest{repo.main, "", "", "Fix the login bug"});
    REQUIRE(ok(second));
    CHECK(second->place.branch == "switchboard/fix-the-login-bug-2");
    CHECK(second->place.path != created->place.path);
    auto taken = repo.worktrees.create(CreateRequest{repo.main, "switchboard/fix-the-login-bug", "", ""});
    REQUIRE(taken.has_error());
    CHECK(taken.error().code == WorktreeError::Code::BranchExists);
  }
  SECTION("at the repository's top, the cwd is the worktree's top") {
    auto top = repo.worktrees.create(CreateRequest{repo.main, "top", "", ""});
    REQUIRE(ok(top));
    CHECK(top->cwd == top->place.path);
    CHECK(top->cwd.string().back() != '/');
  }
  SECTION("a named branch from a named base") {
    git_output(repo.main, "branch older HEAD");
    auto named = repo.worktrees.create(CreateRequest{repo.main, "feature/x", "older", ""});
    REQUIRE(ok(named));
    CHECK(named->place.branch == "feature/x");
    CHECK(named->place.base == "older");
  }
}

TEST_CASE("worktree: what cannot be made is refused and leaves nothing behind", "[worktree]") {
  Repo repo;
  TempDir plain{"not-a-repo"};
  auto outside = repo.worktrees.create(CreateRequest{plain.path(), "", "", "x"});
  REQUIRE(outside.has_error());
  CHECK(outside.error().code == WorktreeError::Code::NotARepository);

  auto bad_base = repo.worktrees.create(CreateRequest{repo.main, "b1", "no-such-branch", ""});
  REQUIRE(bad_base.has_error());
  CHECK(bad_base.error().code == WorktreeError::Code::Failure);
  auto bad_name = repo.worktrees.create(CreateRequest{repo.main, "bad..name", "", ""});
  REQUIRE(bad_name.has_error());
  CHECK(bad_name.error().code == WorktreeError::Code::Failure);
  auto option = repo.worktrees.create(CreateRequest{repo.main, "--force", "", ""});
  REQUIRE(option.has_error());
  CHECK(git_output(repo.main, "branch --list").find("b1") == std::string::npos);
  CHECK(git_output(repo.main, "worktree list").find("worktrees") == std::string::npos);
  CHECK((!fs::exists(repo.data) || fs::is_empty(repo.data)));
}

TEST_CASE("worktree: the diff against the base holds committed, uncommitted and new files, not ignored ones",
          "[worktree]") {
  Repo repo;
  auto created = repo.worktrees.create(CreateRequest{repo.main, "review", "", ""});
  REQUIRE(ok(created));
  const auto tree = created->place.path;
  write_text_file(tree / "app.txt", "one\nTWO\nthree\n");
  git_output(tree, "commit -q -am committed");
  write_text_file(tree / "src" / "lib.txt", "lib changed\n");  // uncommitted
  write_text_file(tree / "new.txt", "new\n");                 // untracked
  write_text_file(tree / "debug.log", "ignored\n");           // ignored

  auto diff = repo.worktrees.diff(created->place);
  REQUIRE(ok(diff));
  std::vector<std::string> paths;
  for (const auto& file : *diff) paths.push_back(file.path);
  CHECK(paths == std::vector<std::string>{"app.txt", "new.txt", "src/lib.txt"});
  CHECK((*diff)[0].status == FileChangeStatus::Modified);
  CHECK((*diff)[0].diff.find("+TWO") != std::string::npos);
  CHECK((*diff)[1].status == FileChangeStatus::Added);
  CHECK((*diff)[2].diff.find("+lib changed") != std::string::npos);
  // the review used an index of its own: what the agent staged is as it was
  CHECK(git_output(tree, "status --porcelain") == " M src/lib.txt\n?? new.txt\n");

  SECTION("the base moving on does not show up as the session's change") {
    write_text_file(repo.main / "other.txt", "base moved\n");
    git_output(repo.main, "add other.txt");
    git_output(repo.main, "commit -q -m moved");
    auto again = repo.worktrees.diff(created->place);
    REQUIRE(ok(again));
    CHECK(again->size() == 3);
  }
}

TEST_CASE("worktree: a merge takes the branch and its uncommitted work into the clean base checkout", "[worktree]") {
  Repo repo;
  auto created = repo.worktrees.create(CreateRequest{repo.main, "", "", "Change two"});
  REQUIRE(ok(created));
  write_text_file(created->place.path / "app.txt", "one\n2\nthree\n");  // left uncommitted, as agents do
  const auto before = repo.head();

  SECTION("the base has not moved: it fast-forwards to the branch, the uncommitted work committed with the message") {
    auto merged = repo.worktrees.merge(created->place, false, "Change two");
    REQUIRE(ok(merged));
    CHECK(read_text_file(repo.main / "app.txt") == "one\n2\nthree\n");
    CHECK(repo.status().empty());
    CHECK(repo.head() == merged->commit + "\n");
    CHECK(git_output(repo.main, "log -1 --format=%s") == "Change two\n");
    CHECK(git_output(repo.main, "rev-parse " + created->place.branch) == merged->commit + "\n");
    REQUIRE(merged->files.size() == 1);
    CHECK(merged->files[0].path == "app.txt");
    // nothing more to merge: the base stays where it is
    auto again = repo.worktrees.merge(created->place, false, "again");
    REQUIRE(ok(again));
    CHECK(again->commit + "\n" == repo.head());
    CHECK(again->files.empty());
  }
  SECTION("the base moved on: a merge commit with both parents") {
    write_text_file(repo.main / "other.txt", "base moved\n");
    git_output(repo.main, "add other.txt");
    git_output(repo.main, "commit -q -m moved");
    const auto moved = repo.head();
    auto merged = repo.worktrees.merge(created->place, false, "Merge two");
    REQUIRE(ok(merged));
    CHECK(git_output(repo.main, "rev-list --parents -n 1 HEAD") ==
          merged->commit + " " + moved.substr(0, moved.size() - 1) + " " +
              git_output(repo.main, "rev-parse " + created->place.branch));
    CHECK(git_output(repo.main, "log -1 --format=%s") == "Merge two\n");
    CHECK(read_text_file(repo.main / "other.txt") == "base moved\n");
    CHECK(read_text_file(repo.main / "app.txt") == "one\n2\nthree\n");
    CHECK(repo.status().empty());
  }
  SECTION("squashed: one commit on top of the base") {
    auto merged = repo.worktrees.merge(created->place, true, "Squashed");
    REQUIRE(ok(merged));
    CHECK(git_output(repo.main, "rev-list --parents -n 1 HEAD") == merged->commit + " " + before);
    CHECK(read_text_file(repo.main / "app.txt") == "one\n2\nthree\n");
  }
  SECTION("a dirty main checkout is refused and left as it was") {
    write_text_file(repo.main / "src" / "lib.txt", "user's own edit\n");
    auto refused = repo.worktrees.merge(created->place, false, "m");
    REQUIRE(refused.has_error());
    CHECK(refused.error().code == WorktreeError::Code::CheckoutNotClean);
    CHECK(refused.error().files == std::vector<std::string>{"src/lib.txt"});
    CHECK(repo.head() == before);
    CHECK(read_text_file(repo.main / "app.txt") == "one\ntwo\nthree\n");
    CHECK(read_text_file(repo.main / "src" / "lib.txt") == "user's own edit\n");
  }
  SECTION("a main checkout on another branch is refused") {
    git_output(repo.main, "checkout -q -b elsewhere");
    auto refused = repo.worktrees.merge(created->place, false, "m");
    REQUIRE(refused.has_error());
    CHECK(refused.error().code == WorktreeError::Code::CheckoutNotClean);
    CHECK(git_output(repo.main, "rev-parse main") == before);
  }
}

TEST_CASE("worktree: two sessions change the same line, the first merges, the second conflicts and the "
          "checkout stays clean", "[worktree]") {
  Repo repo;
  auto first = repo.worktrees.create(CreateRequest{repo.main, "", "", "first"});
  auto second = repo.worktrees.create(CreateRequest{repo.main, "", "", "second"});
  REQUIRE(ok(first));
  REQUIRE(ok(second));
  write_text_file(first->place.path / "app.txt", "one\nfirst\nthree\n");
  write_text_file(second->place.path / "app.txt", "one\nsecond\nthree\n");
  CHECK(read_text_file(repo.main / "app.txt") == "one\ntwo\nthree\n");  // nothing reaches main before a merge

  REQUIRE(ok(repo.worktrees.merge(first->place, false, "first")));
  const auto merged_head = repo.head();
  auto conflict = repo.worktrees.merge(second->place, false, "second");
  REQUIRE(conflict.has_error());
  CHECK(conflict.error().code == WorktreeError::Code::MergeConflict);
  CHECK(conflict.error().files == std::vector<std::string>{"app.txt"});
  CHECK(conflict.error().message.find("app.txt") != std::string::npos);
  CHECK(repo.head() == merged_head);
  CHECK(repo.status().empty());
  CHECK(read_text_file(repo.main / "app.txt") == "one\nfirst\nthree\n");
  CHECK(!fs::exists(repo.main / ".git" / "MERGE_HEAD"));
}

TEST_CASE("worktree: removing keeps uncommitted work unless forced, and the branch unless asked", "[worktree]") {
  Repo repo;
  auto created = repo.worktrees.create(CreateRequest{repo.main, "keep-me", "", ""});
  REQUIRE(ok(created));
  write_text_file(created->place.path / "draft.txt", "unsaved\n");

  auto refused = repo.worktrees.remove(created->place, false, false);
  REQUIRE(refused.has_error());
  CHECK(refused.error().code == WorktreeError::Code::UncommittedWork);
  CHECK(refused.error().files == std::vector<std::string>{"draft.txt"});
  CHECK(read_text_file(created->place.path / "draft.txt") == "unsaved\n");

  SECTION("forced: directory and entry gone, branch kept") {
    auto removed = repo.worktrees.remove(created->place, false, true);
    REQUIRE(ok(removed));
    CHECK(!*removed);
    CHECK(!fs::exists(created->place.path));
    CHECK(git_output(repo.main, "worktree list").find(created->place.path.string()) == std::string::npos);
    CHECK(git_output(repo.main, "branch --list keep-me") == "  keep-me\n");
  }
  SECTION("clean, with the branch") {
    fs::remove(created->place.path / "draft.txt");
    auto removed = repo.worktrees.remove(created->place, true, false);
    REQUIRE(ok(removed));
    CHECK(*removed);
    CHECK(!fs::exists(created->place.path));
    CHECK(git_output(repo.main, "branch --list keep-me").empty());
  }
  SECTION("a directory already gone (a crash, a user's rm) is pruned") {
    fs::remove_all(created->place.path);
    REQUIRE(ok(repo.worktrees.remove(created->place, false, false)));
    CHECK(git_output(repo.main, "worktree list").find(created->place.path.string()) == std::string::npos);
  }
}

TEST_CASE("worktree: branch names from titles", "[worktree]") {
  CHECK(branch_from_title("Fix the login bug!") == "switchboard/fix-the-login-bug");
  CHECK(branch_from_title("") == "switchboard/session");
  CHECK(branch_from_title("  --  ") == "switchboard/session");
  CHECK(branch_from_title("Überprüfe API v2") == "switchboard/berpr-fe-api-v2");
}

}  // namespace worktree_git_tests
