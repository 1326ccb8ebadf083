#pragma once

#include <filesystem>
#include <optional>
#include <set>
#include <string>

namespace switchboard::checkpoint {

// Which of `paths` git's index file `index` has an entry for, read from the file itself (versions 2 and 3, the
// ones git writes for the store). An index that does not exist has none; nullopt when the file cannot be read or
// is not in a form read here (then ask git).
std::optional<std::set<std::string>> indexed_among(const std::filesystem::path& index,
                                                   const std::set<std::string>& paths);

// The tree an index holds, read from the file: its entries, and the tree id of each directory from git's cache of
// them (the TREE extension, whole after `git write-tree`). `listing` is as `git ls-tree -r -t -z --full-tree`
// would list that tree (in another order), `root_id` its root. nullopt when the file is not in a form read here
// or the cache lacks a directory (then ask git).
struct IndexTree {
  std::string root_id;
  std::string listing;
};
std::optional<IndexTree> tree_of_index(const std::filesystem::path& index);

}  // namespace switchboard::checkpoint
