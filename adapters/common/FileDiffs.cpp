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
  bool has_headers = false;
  for (const auto line : lines) has_headers = has_headers || line.starts_with("@@");
  std::vector<protocol::FileDiff> out;
  // Before the first "@@" of a diff with headers, lines such as "--- a/x" are file headers, not removals.
  bool in_hunk = !has_headers;
  bool open = false;
  const auto begin_hunk = [&] {
    out.push_back(replacement(path, {}, {}));
    open = true;
  };
  for (const auto line : lines) {
    if (line.starts_with("@@")) {
      in_hunk = true;
      open = false;
      continue;
    }
    if (!in_hunk) continue;
    // An empty line inside a hunk is a context line whose trailing space was stripped (editors do that).
    const char kind = line.empty() ? ' ' : line.front();
    if (kind != ' ' && kind != '-' && kind != '+') continue;
    if (!open) begin_hunk();
    const auto text = std::string(line.empty() ? line : line.substr(1)) + "\n";
    if (kind != '+') *out.back().old_text += text;
    if (kind != '-') out.back().new_text += text;
  }
  return out;
}

}  // namespace switchboard::adapters
