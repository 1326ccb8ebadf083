#pragma once

#include <string>
#include <utility>
#include <vector>

#include <boost/system/result.hpp>

namespace switchboard::worktree {

// An expected failure of a worktree operation, as a value: each code has its own wire error (schema/errors.json).
// The message is safe to show a user (git's own words for what it refused, paths the user gave or can see).
struct WorktreeError {
  enum class Code {
    NotARepository,    // the directory is not inside a git repository with a working tree
    BranchExists,      // the branch asked for is already there
    MergeConflict,     // the branch does not merge cleanly into its base: `files` conflict
    CheckoutNotClean,  // the main checkout has changes, or is not on the base branch
    UncommittedWork,   // the session's worktree has uncommitted changes (`files`) the call would lose
    Failure,           // git refused or failed (an unknown base, a bad branch name, git missing)
  };

  Code code = Code::Failure;
  std::string message;
  std::vector<std::string> files{};
};

inline WorktreeError worktree_failure(std::string message) {
  return WorktreeError{WorktreeError::Code::Failure, std::move(message)};
}

template <class T>
using WorktreeResult = boost::system::result<T, WorktreeError>;

}  // namespace switchboard::worktree
