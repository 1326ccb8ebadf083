#include "checkpoint/CheckpointTree.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <utility>
#include <vector>

namespace switchboard::checkpoint {

namespace {

constexpr std::uint32_t kDirectoryMode = 040000;

std::string parent_of(const std::string& path) {
  const auto at = path.rfind('/');
  return at == std::string::npos ? std::string() : path.substr(0, at);
}

std::string name_of(const std::string& path) {
  const auto at = path.rfind('/');
  return at == std::string::npos ? path : path.substr(at + 1);
}

std::size_t depth_of(const std::string& directory) {
  return directory.empty() ? 0 : static_cast<std::size_t>(std::count(directory.begin(), directory.end(), '/')) + 1;
}

bool is_object_id(std::string_view id) {
  return id.size() == 40 && std::all_of(id.begin(), id.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

const char* type_of(std::uint32_t mode) {
  if (mode == kDirectoryMode) return "tree";
  if (mode == 0160000) return "commit";
  return "blob";
}

}  // namespace

void CheckpointTree::load(IndexTree index) {
  m_unreadable = false;
  m_directories.clear();
  m_gone.clear();
  m_files = index.files.size();
  m_root_id = index.root_id;
  m_index = std::move(index);
}

const CheckpointTree::Directory* CheckpointTree::find_directory(const std::string& path) {
  if (const auto known = m_directories.find(path); known != m_directories.end()) return &known->second;
  if (!m_index || m_gone.count(path) != 0) return nullptr;
  // The index lists files by path, byte for byte, so everything below `path` is one run of it: its own files, and
  // the files of each subdirectory, whose id git's cache of trees has.
  const std::string prefix = path.empty() ? std::string() : path + "/";
  const auto& files = m_index->files;
  const auto first_from = [&](auto from, std::string_view wanted) {
    return std::lower_bound(from, files.end(), wanted, [&](const IndexTree::File& file, std::string_view bound) {
      return m_index->path_of(file) < bound;
    });
  };
  auto it = first_from(files.begin(), prefix);
  if (it == files.end() || m_index->path_of(*it).substr(0, prefix.size()) != prefix) return nullptr;
  Directory directory;
  while (it != files.end()) {
    const auto file_path = m_index->path_of(*it);
    if (file_path.substr(0, prefix.size()) != prefix) break;
    const auto below = file_path.substr(prefix.size());
    const auto slash = below.find('/');
    if (slash == std::string_view::npos) {
      directory.emplace(std::string(below), Entry{it->mode, m_index->id_of(*it)});
      ++it;
      continue;
    }
    // A subdirectory: its entry, then on past its files ('0' is the byte after '/').
    const std::string name(below.substr(0, slash));
    const auto id = m_index->directories.find(prefix + name);
    if (id == m_index->directories.end()) {  // not in git's cache of trees: this tree cannot be told from here
      m_unreadable = true;
      return nullptr;
    }
    directory.emplace(name, Entry{kDirectoryMode, id->second});
    it = first_from(it, prefix + name + "0");
  }
  return &m_directories.emplace(path, std::move(directory)).first->second;
}

bool CheckpointTree::load(std::string_view listing, std::string root_id) {
  m_unreadable = false;
  m_directories.clear();
  m_gone.clear();
  m_index.reset();
  m_directories[""];
  m_files = 0;
  m_root_id.clear();
  const auto fail = [this] {
    m_directories.clear();
    m_files = 0;
    return false;
  };
  // "<mode> <type> <id>\t<path>", each ended by NUL, a directory before what it holds.
  while (!listing.empty()) {
    const auto end = listing.find('\0');
    const auto record = listing.substr(0, end);
    listing.remove_prefix(end == std::string_view::npos ? listing.size() : end + 1);
    const auto tab = record.find('\t');
    const auto first_space = record.find(' ');
    const auto second_space = record.find(' ', first_space + 1);
    if (tab == std::string_view::npos || second_space == std::string_view::npos || second_space > tab) return fail();
    const std::string mode_text(record.substr(0, first_space));
    char* parsed_to = nullptr;
    const auto mode = static_cast<std::uint32_t>(std::strtoul(mode_text.c_str(), &parsed_to, 8));
    const auto id = record.substr(second_space + 1, tab - second_space - 1);
    const std::string path(record.substr(tab + 1));
    if (parsed_to == mode_text.c_str() || *parsed_to != '\0' || !is_object_id(id) || path.empty()) return fail();
    m_directories[parent_of(path)][name_of(path)] = Entry{mode, std::string(id)};
    if (mode == kDirectoryMode)
      m_directories[path];
    else
      ++m_files;
  }
  m_root_id = std::move(root_id);
  return true;
}

CheckpointTree::Kind CheckpointTree::kind_of(const std::string& path) {
  const auto parent = parent_of(path);
  const auto* directory = find_directory(parent);
  if (directory == nullptr && m_unreadable) return Kind::Unknown;  // not read, so not known to be absent
  if (directory == nullptr) {
    // No such directory: absent, unless a file stands where one of the directories on the way would be.
    for (auto above = parent; !above.empty(); above = parent_of(above)) {
      const auto* holder = find_directory(parent_of(above));
      if (holder == nullptr && m_unreadable) return Kind::Unknown;
      if (holder == nullptr) continue;
      const auto entry = holder->find(name_of(above));
      return entry != holder->end() && entry->second.mode != kDirectoryMode ? Kind::Blocked : Kind::Absent;
    }
    return Kind::Absent;
  }
  const auto entry = directory->find(name_of(path));
  if (entry == directory->end()) return Kind::Absent;
  return entry->second.mode == kDirectoryMode ? Kind::Directory : Kind::File;
}

const CheckpointTree::Entry* CheckpointTree::file(const std::string& path) {
  const auto* directory = find_directory(parent_of(path));
  if (directory == nullptr) return nullptr;
  const auto entry = directory->find(name_of(path));
  return entry == directory->end() || entry->second.mode == kDirectoryMode ? nullptr : &entry->second;
}

CheckpointResult<std::optional<std::string>> CheckpointTree::apply(const GitProcess& git, const GitPlace& place,
                                                                   const Changes& changes) {
  // A directory the index could not tell may hold a path the snapshot took for absent (a tracked file deleted
  // there): no tree is built from here, not even the same one for no change.
  if (m_unreadable) return std::optional<std::string>();
  if (changes.empty()) return std::optional<std::string>(m_root_id);
  // The directories the changes touch, and every directory above them, as they will be: copies, kept only once
  // git has written them all.
  std::map<std::string, Directory> edited;
  const auto directory = [&](const std::string& path) -> Directory& {
    if (const auto it = edited.find(path); it != edited.end()) return it->second;
    const auto* known = find_directory(path);
    return edited.emplace(path, known == nullptr ? Directory{} : *known).first->second;
  };
  std::size_t files = m_files;
  for (const auto& [path, entry] : changes) {
    const auto kind = kind_of(path);
    if (kind == Kind::Blocked || kind == Kind::Directory || kind == Kind::Unknown ||
        (entry && entry->mode == kDirectoryMode))
      return std::optional<std::string>();
    auto& holder = directory(parent_of(path));
    const auto name = name_of(path);
    const auto present = holder.find(name);
    if (present != holder.end() && present->second.mode == kDirectoryMode) return std::optional<std::string>();
    if (entry) {
      if (kind == Kind::Absent) ++files;
      holder[name] = *entry;
    } else if (kind == Kind::File) {
      holder.erase(name);
      --files;
    }
    // Each directory on the way is an entry of its parent (a new one made here, its id to come) and is rewritten.
    for (auto above = parent_of(path); !above.empty(); above = parent_of(above)) {
      auto& slot = directory(parent_of(above))[name_of(above)];
      if (slot.mode != 0 && slot.mode != kDirectoryMode) return std::optional<std::string>();
      slot.mode = kDirectoryMode;
    }
    directory("");
  }

  if (m_unreadable) return std::optional<std::string>();
  // Deepest directories first: a parent is written once the ids of its rewritten subdirectories are known.
  std::map<std::size_t, std::vector<std::string>, std::greater<>> levels;
  for (const auto& [path, entries] : edited) levels[depth_of(path)].push_back(path);
  auto level = levels.begin();
  std::vector<std::string> awaited;  // the directories written in the last part, in order, their ids to come
  std::size_t answered = 0;
  std::set<std::string> dropped;  // directories left empty: no tree, and no entry in their parent
  std::string new_root;
  bool broken = false;
  const auto write_next_level = [&](std::string& input) {
    awaited.clear();
    answered = 0;
    for (; level != levels.end() && awaited.empty(); ++level) {
      for (const auto& path : level->second) {
        const auto& entries = edited.at(path);
        if (entries.empty() && !path.empty()) {
          directory(parent_of(path)).erase(name_of(path));
          dropped.insert(path);
          continue;
        }
        for (const auto& [name, entry] : entries) {
          if (entry.id.empty()) broken = true;  // a subdirectory whose tree was never written: a bug of ours
          char mode[16];
          std::snprintf(mode, sizeof mode, "%06o", static_cast<unsigned>(entry.mode));
          input.append(mode).append(" ").append(type_of(entry.mode)).append(" ").append(entry.id);
          input.append("\t").append(name).push_back('\0');
        }
        input.push_back('\0');  // the end of one tree
        awaited.push_back(path);
      }
    }
  };
  std::string input;
  write_next_level(input);
  std::string pending;  // output not yet ended by a newline
  auto ran = git.converse(place, {"mktree", "-z", "--batch"}, std::move(input),
                          [&](std::string_view chunk, std::string& more, bool& finished) {
                            pending.append(chunk);
                            for (auto end = pending.find('\n'); end != std::string::npos; end = pending.find('\n')) {
                              const std::string id = pending.substr(0, end);
                              pending.erase(0, end + 1);
                              if (answered >= awaited.size() || !is_object_id(id)) {
                                broken = true;
                                return false;
                              }
                              const auto& path = awaited[answered++];
                              if (path.empty())
                                new_root = id;
                              else
                                directory(parent_of(path))[name_of(path)].id = id;
                            }
                            if (answered == awaited.size()) {
                              write_next_level(more);
                              if (awaited.empty()) finished = true;
                            }
                            return !broken;
                          });
  if (!ran) return ran.error();
  if (ran->exit_code != 0 || broken || new_root.empty() || level != levels.end() || !awaited.empty()) {
    std::string reason = ran->err.substr(0, ran->err.find('\n'));
    if (reason.empty()) reason = "git mktree exited with " + std::to_string(ran->exit_code);
    return store_unavailable("cannot write the checkpoint: " + reason);
  }
  for (auto& [path, entries] : edited) {
    if (dropped.count(path) != 0) {
      m_directories.erase(path);
      m_gone.insert(path);
    } else {
      m_directories[path] = std::move(entries);
      m_gone.erase(path);
    }
  }
  m_files = files;
  m_root_id = new_root;
  return std::optional<std::string>(new_root);
}

}  // namespace switchboard::checkpoint
