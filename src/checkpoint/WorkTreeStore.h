#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/CheckpointTree.h"
#include "checkpoint/GitProcess.h"
#include "checkpoint/TreeWatch.h"
#include "switchboard/checkpoint/CheckpointStore.h"

namespace switchboard::checkpoint {

// A snapshot with every skipped path, not only those reported.
struct FullSnapshot {
  std::string id;
  std::vector<std::string> skipped;
};

// The checkpoints of one working tree: a git repository of the daemon's (`<store>/git`) and its index
// (`<store>/index`), with the working tree as GIT_WORK_TREE. Blocking; used on the store's thread only.
//
// Layout of `<store>`: `git/` (objects, and `info/attributes`, which switches off every conversion the tree's
// own .gitattributes could ask for, so a file is restored byte for byte), `index`, `worktree` (the path, for a
// person reading the directory), `skipped/<id>` (what a checkpoint left out, when it left something out), while a
// restore runs `restore.journal`, and while a snapshot stores changed symbolic links `link-target-<n>` (each
// link's target, for git to hash).
class WorkTreeStore {
 public:
  WorkTreeStore(const GitProcess& git, std::filesystem::path directory, std::filesystem::path work_tree,
                const CheckpointOptions& options);

  // Creates the store if it is new; after a crash, removes a stale index lock and what an interrupted restore
  // left (its temporary files). Once per process, before anything else.
  CheckpointResult<void> open();

  CheckpointResult<FullSnapshot> snapshot();
  CheckpointResult<TreeChanges> diff(const std::string& from, const std::optional<std::string>& to);
  CheckpointResult<Restored> restore(const std::string& to);

 private:
  struct RawChange;
  // The index file's identity and times: a snapshot builds on the index only while it is as the last one left it.
  struct IndexStamp {
    std::uint64_t inode = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::int64_t ctime_ns = 0;
    bool operator==(const IndexStamp&) const = default;
  };
  CheckpointResult<FullSnapshot> snapshot_once();
  // The directories git ignores as a whole (`build/`): the watch leaves them out.
  CheckpointResult<std::set<std::string>> ignored_directories();
  std::optional<IndexStamp> index_stamp() const;
  // What `ls-files -t --others --modified` would list of `paths` (files the watch saw change), judged here: each
  // is a file the index has (update-index then compares it) or a new file no ignore pattern can reach. nullopt
  // when that cannot be told without git.
  std::optional<std::string> listing_without_git(const std::set<std::string>& paths) const;
  // The snapshot after the watch saw `paths` change, built from the last one's tree in memory (m_tree) without
  // git's index: the changed files hashed, the directories above them rewritten. nullopt when a path is not one to
  // judge here (a directory now, a name git cannot take on a line): then the index is the way, and nothing was
  // recorded.
  CheckpointResult<std::optional<FullSnapshot>> snapshot_from_tree(const std::set<std::string>& paths);
  // Brings m_tree to the tree `id` unless it holds it already: from the index when `index_holds_it` (and its
  // cache of tree ids agrees), otherwise with git ls-tree. False when it cannot.
  bool hold_tree(const std::string& id, bool index_holds_it = false);
  // Gives the index the entries the snapshots built without it recorded (m_index_behind), so that it holds the
  // last checkpoint again before a snapshot builds on it.
  CheckpointResult<void> catch_up_index();
  // Merges the store's packs into one once a snapshot has left too many.
  void consolidate_packs();
  // Each id a tree of this store (UnknownCheckpoint naming the first that is not), in one git.
  CheckpointResult<void> require_trees(const std::vector<std::string>& ids);
  CheckpointResult<std::vector<RawChange>> raw_changes(const std::string& from, const std::string& to);
  // The changes `raw` between two trees (raw_changes) with their unified diffs, leaving out `leave_out`.
  CheckpointResult<std::vector<protocol::FileChange>> file_changes(const std::vector<RawChange>& raw,
                                                                   const std::string& from, const std::string& to,
                                                                   const std::set<std::string>& leave_out);
  std::vector<std::string> skipped_of(const std::string& id) const;
  void record_skipped(const std::string& id, const std::vector<std::string>& skipped) const;
  void recover_interrupted_restore() const;

  const GitProcess& m_git;
  std::filesystem::path m_directory;
  GitPlace m_place;
  const CheckpointOptions& m_options;
  std::string m_exclude;  // the store's info/exclude
  // Which files changed since the last snapshot; with it, that snapshot (as the index holds it once given
  // m_index_behind) and the index's stamp when the store last wrote it. Without a last snapshot, the next one reads
  // the whole tree.
  TreeWatch m_watch;
  bool m_watchable = true;  // false once the tree could not be watched: it is read whole from then on
  std::optional<FullSnapshot> m_last;
  std::optional<IndexStamp> m_last_index;
  // The last snapshot's tree, when it is held in memory; and what the index lacks of it: the entries of the
  // snapshots built from m_tree since the index was last written (nullopt: no entry). An index behind holds the
  // stat data of older files, so git's comparisons still find every file that differs from it.
  std::optional<CheckpointTree> m_tree;
  CheckpointTree::Changes m_index_behind;
};

// The store directory's name for a working tree: its last component (made safe) and a hash of the whole path.
std::string store_name_for(const std::filesystem::path& work_tree);

}  // namespace switchboard::checkpoint
