#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace switchboard::checkpoint {

// Which of `paths` git's index file `index` has an entry for, read from the file itself (versions 2 and 3, the
// ones git writes for the store). An index that does not exist has none; nullopt when the file cannot be read or
// is not in a form read here (then ask git).
std::optional<std::set<std::string>> indexed_among(const std::filesystem::path& index,
                                                   const std::set<std::string>& paths);

// The tree an index holds, read from the file: its entries, and the tree id of each directory from git's cache of
// them (the TREE extension, whole after `git write-tree`). nullopt when the file is not in a form read here or the
// cache lacks a directory (then ask git).
struct IndexTree {
  struct File {
    std::uint32_t path_at = 0;  // in `bytes`
    std::uint32_t path_length = 0;
    std::uint32_t mode = 0;
    std::uint32_t id_at = 0;  // 20 bytes
  };
  std::string bytes;                                         // the index file
  std::vector<File> files;                                   // in the index's order: by path, byte for byte
  std::unordered_map<std::string, std::string> directories;  // each directory but the root -> its tree id
  std::string root_id;

  std::string_view path_of(const File& file) const { return std::string_view(bytes).substr(file.path_at, file.path_length); }
  std::string id_of(const File& file) const;
  // As `git ls-tree -r -t -z --full-tree` lists the tree (in another order).
  std::string listing() const;
};
std::optional<IndexTree> tree_of_index(const std::filesystem::path& index);

}  // namespace switchboard::checkpoint
