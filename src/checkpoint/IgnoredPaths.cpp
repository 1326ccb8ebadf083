#include "checkpoint/IgnoredPaths.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "process/UniqueFd.h"

namespace switchboard::checkpoint {

namespace {

std::vector<std::string> components_of(std::string_view path) {
  std::vector<std::string> parts;
  while (!path.empty()) {
    const auto end = path.find('/');
    parts.emplace_back(path.substr(0, end));
    if (end == std::string_view::npos) break;
    path.remove_prefix(end + 1);
  }
  return parts;
}

// A .gitignore's text; empty when there is none; nullopt when it cannot be judged (a link, which git does not
// follow, or an error).
std::optional<std::string> read_ignore_file(const std::filesystem::path& path) {
  const process::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return errno == ENOENT || errno == ENOTDIR ? std::optional<std::string>(std::string()) : std::nullopt;
  std::string text;
  char buffer[8192];
  for (;;) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return std::nullopt;
    if (got == 0) return text;
    text.append(buffer, static_cast<std::size_t>(got));
  }
}

// True when no pattern of `text` (an ignore file of the directory made of the first `depth` components) can match
// the path made of `components`, or a directory on its way.
bool no_pattern_matches(std::string_view text, std::size_t depth, const std::vector<std::string>& components) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    std::string pattern(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!pattern.empty() && pattern.back() == ' ') pattern.pop_back();
    if (pattern.empty() || pattern.front() == '#') continue;
    // Escapes, brackets, carriage returns and '**' are git's own to read.
    if (pattern.find_first_of("\\[\r") != std::string::npos || pattern.find("**") != std::string::npos) return false;
    if (pattern.front() == '!') pattern.erase(0, 1);  // a re-inclusion that matches is git's to weigh, too
    if (!pattern.empty() && pattern.back() == '/') pattern.pop_back();  // for directories only: judged as for all
    if (pattern.empty()) return false;
    if (pattern.find('/') == std::string::npos) {
      // No slash: matched against the name of the file and of each directory on its way.
      for (std::size_t i = depth; i < components.size(); ++i) {
        if (::fnmatch(pattern.c_str(), components[i].c_str(), 0) == 0) return false;
      }
      continue;
    }
    // A slash: matched against the path below the ignore file's directory, '*' and '?' never matching a '/'.
    if (pattern.front() == '/') pattern.erase(0, 1);
    std::string below;
    for (std::size_t i = depth; i < components.size(); ++i) {
      if (i > depth) below.push_back('/');
      below += components[i];
      if (::fnmatch(pattern.c_str(), below.c_str(), FNM_PATHNAME) == 0) return false;
    }
  }
  return true;
}

}  // namespace

bool surely_not_ignored(const std::filesystem::path& work_tree, std::string_view exclude, std::string_view path) {
  const auto components = components_of(path);
  if (components.empty() || !no_pattern_matches(exclude, 0, components)) return false;
  std::filesystem::path directory = work_tree;
  for (std::size_t depth = 0; depth < components.size(); ++depth) {
    const auto text = read_ignore_file(directory / ".gitignore");
    if (!text || text->rfind("\xEF\xBB\xBF", 0) == 0 || !no_pattern_matches(*text, depth, components)) return false;
    directory /= components[depth];
  }
  return true;
}

}  // namespace switchboard::checkpoint
