#include "common/FileDiffs.h"

#include <utility>

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
  constexpr std::string_view kAdd = "*** Add File: ";
  constexpr std::string_view kUpdate = "*** Update File: ";
  constexpr std::string_view kDelete = "*** Delete File: ";
  enum class Section { None, Add, Update };
  std::vector<protocol::FileDiff> out;
  Section section = Section::None;
  std::string path;
  std::string body;  // the section's lines so far
  const auto flush = [&] {
    // A header without a path names no file: nothing to show (a FileDiff's path is never empty).
    if (section == Section::Add && !path.empty()) out.push_back(whole_file(path, body));
    if (section == Section::Update && !path.empty()) {
      // An apply_patch body has no file headers: marked as a hunk from its first line, a removed "-- x" or an
      // added "++ x" line (written "--- x", "+++ x") is not taken for one.
      if (!body.starts_with("@@")) body.insert(0, "@@\n");
      for (auto& hunk : hunks(path, body)) out.push_back(std::move(hunk));
    }
    section = Section::None;
    body.clear();
  };
  for (std::size_t start = 0; start < patch.size();) {
    auto end = patch.find('\n', start);
    if (end == std::string_view::npos) end = patch.size();
    auto line = patch.substr(start, end - start);
    start = end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.starts_with("*** ")) {
      // A new file's header, the end of the patch, or a marker inside a section ("*** Move to:", "*** End of File").
      const bool add = line.starts_with(kAdd);
      const bool update = line.starts_with(kUpdate);
      if (add || update || line.starts_with(kDelete) || line.starts_with("*** End Patch")) {
        flush();
        if (add || update) {
          section = add ? Section::Add : Section::Update;
          auto named = line.substr(add ? kAdd.size() : kUpdate.size());
          while (!named.empty() && (named.front() == ' ' || named.front() == '\t')) named.remove_prefix(1);
          while (!named.empty() && (named.back() == ' ' || named.back() == '\t')) named.remove_suffix(1);
          path = std::string(named);
        }
      }
      continue;
    }
    if (section == Section::Add) {
      if (line.starts_with('+')) body.append(line.substr(1)).push_back('\n');
    } else if (section == Section::Update) {
      body.append(line).push_back('\n');
    }
  }
  flush();
  return out;
}

}  // namespace switchboard::adapters
