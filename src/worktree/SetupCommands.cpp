#include "worktree/SetupCommands.h"

#include <system_error>

namespace switchboard::worktree {

namespace {

// The path as the file system resolves it, without a trailing '/' ("/srv/app/" is "/srv/app").
std::filesystem::path resolved(const std::filesystem::path& path, std::error_code& error) {
  auto canonical = std::filesystem::weakly_canonical(path, error);
  if (!canonical.has_filename() && canonical.has_parent_path() && canonical != canonical.root_path())
    canonical = canonical.parent_path();
  return canonical;
}

}  // namespace

std::optional<SetupCommand> SetupCommands::for_repository(const std::filesystem::path& repository) const {
  if (m_commands.empty()) return std::nullopt;
  std::error_code error;
  const auto wanted = resolved(repository, error);
  if (error) return std::nullopt;
  for (const auto& [configured, command] : m_commands) {
    // Canonical on every look-up: a repository configured before it existed, or through a symbolic link, matches.
    const auto path = resolved(configured, error);
    if (!error && path == wanted) return SetupCommand{command, m_time_limit};
    error.clear();
  }
  return std::nullopt;
}

}  // namespace switchboard::worktree
