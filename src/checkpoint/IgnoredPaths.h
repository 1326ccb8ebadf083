#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace switchboard::checkpoint {

// Whether git would keep a new file without asking git: true only when no pattern of the ignore files git reads
// for `path` (the store's info/exclude, given as `exclude`, and the .gitignore of the tree and of each directory
// above the file) can match the file or a directory above it. Only patterns made of plain characters, '*' and '?'
// are judged (with fnmatch, which agrees with git's wildmatch on them); any other pattern that applies ('**',
// brackets, escapes), a .gitignore that is a link or cannot be read, or a match (even a negated one) answers
// false, and the caller asks git. `path` is relative to `work_tree`, with '/'.
bool surely_not_ignored(const std::filesystem::path& work_tree, std::string_view exclude, std::string_view path);

}  // namespace switchboard::checkpoint
