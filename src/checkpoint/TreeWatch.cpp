#include "checkpoint/TreeWatch.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

namespace switchboard::checkpoint {

namespace {

// What can change a file the checkpoints keep, or the set of names in a directory. A write and a truncation
// (O_TRUNC included) are IN_MODIFY; chmod, touch and a link count change are IN_ATTRIB.
constexpr std::uint32_t kEvents = IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
                                  IN_DELETE_SELF | IN_MOVE_SELF;
// More changed paths than this in one snapshot: reading the whole tree is as cheap as naming them all to git.
constexpr std::size_t kMaxPaths = 1000;

// The process's watches, against kMaxTrees and kMaxWatchedDirectories (stores of several CheckpointStores, each
// on its own thread, share them).
std::atomic<std::size_t> g_watched_trees{0};
std::atomic<std::size_t> g_watched_directories{0};

std::string child_of(const std::string& directory, std::string_view name) {
  return directory.empty() ? std::string(name) : directory + "/" + std::string(name);
}

}  // namespace

TreeWatch::TreeWatch(std::filesystem::path work_tree) : m_work_tree(std::move(work_tree)) {}

void TreeWatch::stop() {
  if (m_fd) g_watched_trees.fetch_sub(1);
  g_watched_directories.fetch_sub(m_counted_directories);
  m_counted_directories = 0;
  m_fd.reset();
  m_directories.clear();
}

bool TreeWatch::watch_directory(const std::string& relative) {
  if (g_watched_directories.fetch_add(1) >= kMaxWatchedDirectories) {
    g_watched_directories.fetch_sub(1);
    return false;
  }
  ++m_counted_directories;
  // The tree itself may be reached through a link (git works through it too); below it, a link is a file.
  const auto path = relative.empty() ? m_work_tree : m_work_tree / relative;
  const std::uint32_t follow = relative.empty() ? 0 : IN_DONT_FOLLOW;
  const int wd = ::inotify_add_watch(m_fd.get(), path.c_str(), kEvents | IN_ONLYDIR | IN_EXCL_UNLINK | follow);
  if (wd < 0) {
    spdlog::info("checkpoints: cannot watch {} ({}); its snapshots read the whole tree", path.string(),
                 std::strerror(errno));
    return false;
  }
  // The same directory reached twice (a bind mount inside the tree): its events could not be told apart.
  const auto [at, inserted] = m_directories.emplace(wd, relative);
  return inserted || at->second == relative;
}

bool TreeWatch::start(const std::set<std::string>& ignored_directories) {
  stop();
  if (g_watched_trees.fetch_add(1) >= kMaxTrees) {
    g_watched_trees.fetch_sub(1);
    return false;
  }
  m_fd.reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!m_fd) {
    g_watched_trees.fetch_sub(1);
    return false;
  }
  // Each directory is watched before its names are read, so a name added after the read is an event.
  std::vector<std::string> pending{""};
  while (!pending.empty()) {
    const std::string directory = std::move(pending.back());
    pending.pop_back();
    if (m_directories.size() >= kMaxDirectories || !watch_directory(directory)) {
      stop();
      return false;
    }
    const auto path = directory.empty() ? m_work_tree : m_work_tree / directory;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | (directory.empty() ? 0 : O_NOFOLLOW));
    DIR* listing = fd < 0 ? nullptr : ::fdopendir(fd);
    if (listing == nullptr) {
      if (fd >= 0) ::close(fd);
      stop();
      return false;
    }
    while (const dirent* entry = ::readdir(listing)) {
      const std::string_view name = entry->d_name;
      if (name == "." || name == ".." || name == ".git") continue;  // git never enters a .git
      bool is_directory = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {
        struct stat st {};
        is_directory = ::fstatat(::dirfd(listing), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      if (!is_directory) continue;
      auto child = child_of(directory, name);
      if (ignored_directories.count(child) == 0) pending.push_back(std::move(child));
    }
    ::closedir(listing);
  }
  return true;
}

TreeWatch::Changes TreeWatch::changes() {
  Changes changes;
  if (!active()) return changes;
  const auto incomplete = [&] {
    stop();
    return Changes{};
  };
  alignas(inotify_event) char buffer[64 * 1024];
  for (;;) {
    const ssize_t got = ::read(m_fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) break;
    if (got <= 0) return incomplete();
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      // Lost events, or a watched directory gone, moved or unmounted: the set of directories is not known.
      if (event->mask & (IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) return incomplete();
      const auto directory = m_directories.find(event->wd);
      if (directory == m_directories.end()) return incomplete();
      const std::string_view name = event->len > 0 ? std::string_view(event->name) : std::string_view();
      if (name.empty()) continue;  // the directory's own attributes: git records none
      if (event->mask & IN_ISDIR) {
        // A directory made, removed or renamed is a part of the tree to watch or to forget; its attributes are
        // nothing git records.
        if (event->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)) return incomplete();
        continue;
      }
      // A .gitignore changes what is kept anywhere below it; a .git appearing or going makes or unmakes a
      // repository nested in the tree.
      if (name == ".gitignore" || name == ".git") return incomplete();
      changes.paths.insert(child_of(directory->second, name));
      if (changes.paths.size() > kMaxPaths) return incomplete();
    }
  }
  changes.complete = true;
  return changes;
}

}  // namespace switchboard::checkpoint
