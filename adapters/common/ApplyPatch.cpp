#include "common/ApplyPatch.h"

#include <array>
#include <utility>

namespace switchboard::adapters {
namespace apply_patch_detail {

constexpr std::string_view kMoveTo = "*** Move to: ";

constexpr std::array kFileHeaders{std::pair{std::string_view("*** Add File: "), PatchAction::Add},
                                  std::pair{std::string_view("*** Update File: "), PatchAction::Update},
                                  std::pair{std::string_view("*** Delete File: "), PatchAction::Delete}};

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace apply_patch_detail

std::vector<PatchedFile> read_apply_patch(std::string_view patch) {
  std::vector<PatchedFile> files;
  bool in_file = false;  // the lines belong to files.back()
  for (std::size_t start = 0; start < patch.size();) {
    auto end = patch.find('\n', start);
    if (end == std::string_view::npos) end = patch.size();
    auto line = patch.substr(start, end - start);
    start = end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with("*** ")) {
      if (in_file && line.starts_with(apply_patch_detail::kMoveTo) && files.back().action == PatchAction::Update) {
        const auto target = apply_patch_detail::trimmed(line.substr(apply_patch_detail::kMoveTo.size()));
        if (!target.empty()) files.back().move_to = std::string(target);
        continue;
      }
      for (const auto& [header, action] : apply_patch_detail::kFileHeaders) {
        if (!line.starts_with(header)) continue;
        in_file = false;
        const auto path = apply_patch_detail::trimmed(line.substr(header.size()));
        if (path.empty()) break;  // names no file: its lines belong to nothing
        files.push_back(PatchedFile{action, std::string(path), std::nullopt, {}});
        in_file = true;
        break;
      }
      // "*** End Patch" ends the last file; other markers ("*** End of File") sit inside a section.
      if (line.starts_with("*** End Patch")) in_file = false;
      continue;
    }
    if (!in_file) continue;
    auto& file = files.back();
    if (file.action == PatchAction::Add) {
      if (line.starts_with('+')) file.body.append(line.substr(1)).push_back('\n');
    } else if (file.action == PatchAction::Update) {
      file.body.append(line).push_back('\n');
    }
  }
  return files;
}

}  // namespace switchboard::adapters
