#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::checkpoint {

// git's patch between two trees (`diff-tree -r -p --no-renames`) read as the protocol's FileChange entries: the
// checkpoints' session.diff and a worktree's diff against its base both show changes this way.
//
// The patch has one section per changed path, in the order `diff-tree` lists the paths, each opening with
// "diff --git"; a change of type (a file become a link, status 'T') has two, the deletion then the addition. No
// content line opens that way: each starts with ' ', '+', '-', '@' or '\'.
class PatchFiles {
 public:
  explicit PatchFiles(std::string_view patch);

  // The next path's change: its sections of the patch as its unified diff (none when git calls it binary), its
  // status from diff-tree's letter (A added, D deleted, anything else modified).
  protocol::FileChange next(std::string path, char status);
  // Sections no path took: git and its listing disagree (logged by the caller).
  std::size_t left() const { return m_sections.size() - m_taken; }
  std::size_t sections() const { return m_sections.size(); }

 private:
  std::vector<std::string_view> m_sections;
  std::size_t m_taken = 0;
};

}  // namespace switchboard::checkpoint
