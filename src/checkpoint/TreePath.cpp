#include "checkpoint/TreePath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace switchboard::checkpoint {

TreePath::TreePath(int tree_fd, std::string_view relative, bool create) : m_tree_fd(tree_fd) {
  while (!relative.empty()) {
    const auto end = relative.find('/');
    m_parts.emplace_back(relative.substr(0, end));
    if (end == std::string_view::npos) break;
    relative.remove_prefix(end + 1);
  }
  if (m_parts.empty()) {
    m_reach = Reach::Failed;
    m_reason = "an empty path";
    return;
  }
  for (std::size_t i = 0; i + 1 < m_parts.size(); ++i) {
    const char* part = m_parts[i].c_str();
    int fd = ::openat(parent(), part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(parent(), part, 0777) != 0 && errno != EEXIST) {
        m_reach = Reach::Failed;
        m_reason = std::string("cannot create its directory: ") + std::strerror(errno);
        return;
      }
      fd = ::openat(parent(), part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      const int error = errno;
      // ELOOP: a link where a directory was (O_NOFOLLOW); ENOTDIR: a file or a link is in the way.
      m_reach = error == ENOENT ? Reach::Missing : (error == ELOOP || error == ENOTDIR) ? Reach::Link : Reach::Failed;
      m_reason = std::strerror(error);
      return;
    }
    m_chain.emplace_back(fd);
  }
}

void TreePath::remove_empty_directories() {
  if (m_reach != Reach::Opened) return;
  while (!m_chain.empty()) {
    const std::size_t depth = m_chain.size();  // m_parts[depth - 1] names the directory m_chain.back() holds
    m_chain.pop_back();
    if (::unlinkat(parent(), m_parts[depth - 1].c_str(), AT_REMOVEDIR) != 0) return;
  }
}

}  // namespace switchboard::checkpoint
