#pragma once

#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "process/UniqueFd.h"

namespace switchboard::checkpoint {

// Which files of a working tree may have changed since the last look, told by the kernel (inotify) rather than
// found by reading the whole tree again: a snapshot after a turn that changed four files of 10,000 asks git about
// those four only. Every directory the checkpoints can keep something in is watched; the directories git ignores
// (and the `.git` directories) are not.
//
// A watch only narrows what a snapshot looks at; whenever it cannot name every change (its event queue overflowed,
// a directory appeared, went or moved, a `.gitignore` was touched, or it was never started) it says so, and the
// snapshot reads the whole tree. What it cannot see at all: a file changed through a shared memory mapping without
// a change of size, and a file changed through a hard link outside the watched directories.
//
// Used on the store's thread only.
class TreeWatch {
 public:
  // inotify's instances and watches are per-user budgets the user's editors share: at most this many trees are
  // watched at once in the process, with at most this many directories among them, and this many in one tree.
  // A tree past them is read whole at every snapshot.
  static constexpr std::size_t kMaxTrees = 16;
  static constexpr std::size_t kMaxWatchedDirectories = 40'000;
  static constexpr std::size_t kMaxDirectories = 20'000;

  explicit TreeWatch(std::filesystem::path work_tree);
  ~TreeWatch() { stop(); }
  TreeWatch(const TreeWatch&) = delete;
  TreeWatch& operator=(const TreeWatch&) = delete;

  // Drops any watch and watches the tree again: every directory below it but `.git` and those in
  // `ignored_directories` (relative, with '/', no trailing '/'). False if the tree cannot be watched (inotify
  // unavailable, too many directories, a directory unreadable): then changes() is never complete.
  bool start(const std::set<std::string>& ignored_directories);
  // Forgets the watch: the next changes() is incomplete.
  void stop();
  bool active() const { return m_fd.get() >= 0; }

  struct Changes {
    bool complete = false;            // false: read the whole tree (the watch stops until start() again)
    std::set<std::string> paths;      // the files that may have changed (relative, '/'), when complete
  };
  // What happened since start() or the previous call.
  Changes changes();

 private:
  bool watch_directory(const std::string& relative);

  std::filesystem::path m_work_tree;
  process::UniqueFd m_fd;
  std::unordered_map<int, std::string> m_directories;  // watch descriptor -> directory ("" for the tree itself)
  std::size_t m_counted_directories = 0;               // this tree's share of kMaxWatchedDirectories
};

}  // namespace switchboard::checkpoint
