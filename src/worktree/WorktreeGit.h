#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/protocol/generated/Types.h"
#include "worktree/WorktreeError.h"

namespace switchboard::checkpoint {
class GitProcess;
}

namespace switchboard::worktree {

// Where a session's worktree is: its directory, its branch, what the branch started from and merges into (a
// branch name, or a commit id), and the repository's main working tree.
struct WorktreePlace {
  std::filesystem::path path;
  std::string branch;
  std::string base;
  std::filesystem::path repository;
};

struct CreateRequest {
  std::filesystem::path cwd;  // the directory the session was asked to work in: inside the repository
  std::string branch;          // empty: derived from `title`
  std::string base;            // empty: the current HEAD (its branch when it is on one)
  std::string title;
};

struct Created {
  WorktreePlace place;
  std::filesystem::path cwd;  // the session's working directory: cwd's place in the repository, inside the worktree
};

struct Merged {
  std::string commit;                       // the base's new commit
  std::vector<protocol::FileChange> files;  // what the merge changed in the base
};

// Sessions' own git worktrees, kept under `root` (<data directory>/worktrees), through the git CLI
// (checkpoint::GitProcess: an environment made from nothing, no system or global configuration). Every call runs
// git to completion on the calling thread: never the reactor (the engine calls them on its helper thread, one at
// a time).
//
// Safety: hooks never run (core.hooksPath=/dev/null), nor fsmonitor or commit signing; the user's index is never
// given to a git command that works on the worktree (each command gets GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE
// of the checkout it works on); a merge is computed without touching any checkout (`git merge-tree
// --write-tree`) and the user's checkout only fast-forwards to it, so a conflict or a refusal changes nothing
// there; uncommitted work is never deleted unless the caller says so.
class WorktreeGit {
 public:
  // Looks `git` up on `search_path` (empty: the daemon's PATH); without one, every call fails saying so.
  explicit WorktreeGit(std::filesystem::path root, std::string search_path = {});
  ~WorktreeGit();
  WorktreeGit(const WorktreeGit&) = delete;
  WorktreeGit& operator=(const WorktreeGit&) = delete;

  // A new branch from the base, checked out in a new worktree under the root. Nothing is left behind on
  // failure: no directory, no branch, no worktree entry.
  WorktreeResult<Created> create(const CreateRequest& request) const;
  // What the worktree holds (committed and uncommitted, untracked files that are not ignored) against the commit
  // its branch started from (the merge base of the branch and the base), per file.
  WorktreeResult<std::vector<protocol::FileChange>> diff(const WorktreePlace& place) const;
  // Commits the worktree's uncommitted changes on its branch (with `message`), then merges the branch into the
  // base in the main checkout, which must be clean and on the base: a squash commit or a merge commit.
  WorktreeResult<Merged> merge(const WorktreePlace& place, bool squash, const std::string& message) const;
  // The worktree's files with uncommitted changes (untracked ones included, ignored ones not).
  WorktreeResult<std::vector<std::string>> uncommitted(const WorktreePlace& place) const;
  // Removes the worktree's directory and git's entry for it (refused with UncommittedWork when it has
  // uncommitted changes, unless `force`), and the branch when `delete_branch`. true: the branch was deleted.
  WorktreeResult<bool> remove(const WorktreePlace& place, bool delete_branch, bool force) const;

  // A worktree create() made stays marked as pending (a file under <root>/.creating naming its branch, the commit
  // the branch was made at and the repository) until its session is stored and the caller settles it: what a
  // daemon killed in between leaves is then told apart from a worktree a user kept after deleting its session,
  // which must never be removed.
  void settle(const WorktreePlace& place) const;
  // At startup: removes every pending worktree directory under the root that is not in `owned` (the worktrees of
  // the stored sessions), with `git worktree prune` on its repository when its `.git` file names one, and the
  // pending marks of the owned ones. The branch such a create made (its mark names it, and the commit it was made
  // at) is deleted too, but only while it still points at that commit and no worktree has it checked out; otherwise
  // it is kept and the log says why. The paths removed. Never touches a worktree that is not marked pending.
  std::vector<std::filesystem::path> remove_leftovers(const std::vector<std::filesystem::path>& owned) const;

 private:
  std::filesystem::path m_root;
  std::unique_ptr<checkpoint::GitProcess> m_git;  // null: no git was found
  std::string m_missing_git;
};

// A branch name from a session title: lower-case words joined by '-', under "switchboard/"
// ("Fix the login bug!" → "switchboard/fix-the-login-bug"); "switchboard/session" for a title with no word.
std::string branch_from_title(const std::string& title);

}  // namespace switchboard::worktree
