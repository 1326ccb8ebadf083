#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "support/GitRepository.h"
#include "support/TempDir.h"
#include "worktree/WorktreeGit.h"

namespace switchboard::testing {

// A repository on branch main whose one commit holds `files`, in a fresh directory, with the directory beside it
// where the daemon makes its worktrees (<dir>/worktrees), for the tests of worktrees made from it.
struct WorktreeRepository {
  TempDir temp;
  std::filesystem::path repo = temp.path() / "repo";
  worktree::WorktreeGit worktrees{temp.path() / "worktrees"};

  WorktreeRepository(std::string_view purpose, const std::map<std::string, std::string>& files) : temp(purpose) {
    make_repository_with_one_commit(repo, files);
  }
};

}  // namespace switchboard::testing
