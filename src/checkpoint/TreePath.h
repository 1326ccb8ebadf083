#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "process/UniqueFd.h"

namespace switchboard::checkpoint {

// The directory that holds one path of a working tree, reached from the tree's own directory one component at a
// time without ever following a symbolic link (openat with O_NOFOLLOW). A restore writes, renames and unlinks
// relative to it: a directory of the tree replaced by a link (an ignored or skipped one, pointing anywhere) never
// leads a restore out of the tree.
class TreePath {
 public:
  enum class Reach {
    Opened,   // parent() is the directory that holds the path
    Missing,  // a directory on the way does not exist (and was not to be made)
    Link,     // a component on the way is a symbolic link, or not a directory: the path is left alone
    Failed,   // the walk failed otherwise (reason())
  };

  // Walks to the parent of `relative` (a path with '/', no "." or ".." and no empty component) from `tree_fd`,
  // making missing directories when `create` is set.
  TreePath(int tree_fd, std::string_view relative, bool create);

  Reach reach() const { return m_reach; }
  const std::string& reason() const { return m_reason; }
  int parent() const { return m_chain.empty() ? m_tree_fd : m_chain.back().get(); }
  const std::string& name() const { return m_parts.back(); }
  // Removes the directories on the way that are empty now, deepest first, up to (not including) the tree.
  void remove_empty_directories();

 private:
  int m_tree_fd;
  std::vector<std::string> m_parts;
  std::vector<process::UniqueFd> m_chain;  // the directory of each component but the last, in order
  Reach m_reach = Reach::Opened;
  std::string m_reason;
};

}  // namespace switchboard::checkpoint
