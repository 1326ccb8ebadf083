#include "checkpoint/PatchFiles.h"

#include <utility>

namespace switchboard::checkpoint {

PatchFiles::PatchFiles(std::string_view patch) {
  std::size_t start = 0;
  for (std::size_t at = 0; at < patch.size();) {
    const auto end = patch.find('\n', at);
    const auto line_end = end == std::string_view::npos ? patch.size() : end + 1;
    if (patch.substr(at, 11) == "diff --git " && at != start) {
      m_sections.push_back(patch.substr(start, at - start));
      start = at;
    }
    at = line_end;
  }
  if (start < patch.size()) m_sections.push_back(patch.substr(start));
}

protocol::FileChange PatchFiles::next(std::string path, char status) {
  std::string text;
  const std::size_t count = status == 'T' ? 2 : 1;
  for (std::size_t i = 0; i < count && m_taken < m_sections.size(); ++i) text.append(m_sections[m_taken++]);
  protocol::FileChange file;
  file.path = std::move(path);
  file.status = status == 'A'   ? protocol::FileChangeStatus::Added
                : status == 'D' ? protocol::FileChangeStatus::Deleted
                                : protocol::FileChangeStatus::Modified;
  // "Binary files a/x and b/x differ" stands where the hunks would, before any "@@".
  bool binary = false;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = text.find('\n', at);
    const std::string_view line(text.data() + at, (end == std::string::npos ? text.size() : end) - at);
    if (line.starts_with("@@")) break;
    if (line.starts_with("Binary files ")) binary = true;
    at = end == std::string::npos ? text.size() : end + 1;
  }
  file.binary = binary;
  if (!binary) file.diff = std::move(text);
  return file;
}

}  // namespace switchboard::checkpoint
