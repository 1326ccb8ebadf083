#include "common/FileDiffs.h"

#include <utility>

#include "common/ApplyPatch.h"

namespace switchboard::adapters {

protocol::FileDiff replacement(std::string path, std::string old_text, std::string new_text) {
  protocol::FileDiff diff;
  diff.path = std::move(path);
  diff.old_text = std::move(old_text);
  diff.new_text = std::move(new_text);
  return diff;
}

protocol::FileDiff whole_file(std::string path, std::string content) {
  protocol::FileDiff diff;
  diff.path = std::move(path);
  diff.new_text = std::move(content);
  return diff;
}

std::vector<protocol::FileDiff> hunks(const std::string& path, std::string_view unified) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < unified.size();) {
    auto end = unified.find('\n', start);
    if (end == std::string_view::npos) end = unified.size();
    lines.push_back(unified.substr(start, end - start));
    start = end + 1;
  }
  std::vector<protocol::FileDiff> out;
  bool open = false;
  const auto begin_hunk = [&] {
    out.push_back(replacement(path, {}, {}));
    open = true;
  };
  // Lines before the first "@@" are file headers ("--- a/x", "+++ b/x", "Index:", "diff --git") or, in an
  // apply_patch body, the lines of a first chunk that may leave its "@@" out.
  bool seen_hunk_mark = false;
  const auto is_file_header = [](std::string_view line) {
    return line.starts_with("--- ") || line.starts_with("+++ ") || line.starts_with("Index: ") || line.starts_with("diff ") ||
           line.starts_with("===");
  };
  for (const auto line : lines) {
    if (line.starts_with("@@")) {
      seen_hunk_mark = true;
      open = false;
      continue;
    }
    if (!seen_hunk_mark && is_file_header(line)) continue;
    // An empty line inside a hunk is a context line whose trailing space was stripped (editors do that).
    const char kind = line.empty() ? ' ' : line.front();
    if (kind != ' ' && kind != '-' && kind != '+') continue;
    if (line.empty() && !open && !seen_hunk_mark) continue;  // a blank line before any hunk: nothing's context
    if (!open) begin_hunk();
    const auto text = std::string(line.empty() ? line : line.substr(1)) + "\n";
    if (kind != '+') *out.back().old_text += text;
    if (kind != '-') out.back().new_text += text;
  }
  return out;
}

std::vector<protocol::FileDiff> patch_diffs(std::string_view patch) {
  std::vector<protocol::FileDiff> out;
  for (auto& file : read_apply_patch(patch)) {
    if (file.action == PatchAction::Add) out.push_back(whole_file(std::move(file.path), std::move(file.body)));
    if (file.action != PatchAction::Update) continue;
    // An apply_patch body has no file headers: marked as a hunk from its first line, a removed "-- x" or an
    // added "++ x" line (written "--- x", "+++ x") is not taken for one.
    if (!file.body.starts_with("@@")) file.body.insert(0, "@@\n");
    for (auto& hunk : hunks(file.path, file.body)) out.push_back(std::move(hunk));
  }
  return out;
}

}  // namespace switchboard::adapters
