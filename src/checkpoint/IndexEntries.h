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

}  // namespace switchboard::checkpoint
