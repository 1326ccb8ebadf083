#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "checkpoint/GitProcess.h"
#include "checkpoint/IndexEntries.h"

namespace switchboard::checkpoint {

// The tree of the last checkpoint, held in memory directory by directory (each entry its mode, object id and
// name), so that a snapshot after a few changes builds the next tree without git's index: it rebuilds only the
// directories on the changed paths, bottom up, in one `git mktree --batch`, and the root it gets back is the
// checkpoint. The trees come out exactly as `git write-tree` would write them from an index holding the same
// entries: git's mktree sorts and encodes them, and a directory left with nothing in it is dropped from its
// parent, as an index cannot hold one.
class CheckpointTree {
 public:
  struct Entry {
    std::uint32_t mode = 0;  // 0100644, 0100755, 0120000, 0160000 (or 040000 for a directory)
    std::string id;
    bool operator==(const Entry&) const = default;
  };
  // What a snapshot changes: each path (relative, '/') with its new entry, or nullopt when it is no longer kept.
  using Changes = std::map<std::string, std::optional<Entry>>;

  // The tree `root_id` from `git ls-tree -r -t -z --full-tree` of it. False when the listing cannot be read.
  bool load(std::string_view listing, std::string root_id);
  // The tree an index holds (tree_of_index): each directory is read from it only once a snapshot needs it, so
  // holding the tree of 10,000 files costs little more than reading the index file.
  void load(IndexTree index);
  const std::string& root_id() const { return m_root_id; }
  // The number of files (every entry but the directories): what the index would count.
  std::size_t files() const { return m_files; }

  // Blocked: a file stands where a directory on the way is. Unknown: a directory on the way cannot be told from the
  // index (its cache lacks a subdirectory's id), so the path may be there: apply() declines from then on.
  enum class Kind { Absent, File, Directory, Blocked, Unknown };
  Kind kind_of(const std::string& path);
  const Entry* file(const std::string& path);

  // Applies `changes` (each path a file, or absent, here and in the result) and writes the directories they
  // touch; on success the tree is the new one and its root id is returned. nullopt when a change cannot be
  // applied here (a path under a file), or once a directory could not be told from the index (whatever the changes,
  // none at all included: a path there may have been taken for absent): then nothing changed, and
  // git's index is the way. An error of git's is
  // StoreUnavailable, and leaves the tree as it was.
  CheckpointResult<std::optional<std::string>> apply(const GitProcess& git, const GitPlace& place,
                                                     const Changes& changes);

 private:
  using Directory = std::map<std::string, Entry>;  // name -> entry
  // The directory `path` as the tree has it (read from the index the first time), nullptr when there is none.
  const Directory* find_directory(const std::string& path);

  std::map<std::string, Directory> m_directories;  // "" for the root, "a/b" below it: those read or written
  std::optional<IndexTree> m_index;                // where the others are read from, if anywhere
  std::set<std::string> m_gone;                    // directories dropped since: never read from the index again
  bool m_unreadable = false;                       // a directory the index could not tell: apply() declines
  std::string m_root_id;
  std::size_t m_files = 0;
};

}  // namespace switchboard::checkpoint
