#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace switchboard::worktree {

// What runs in a new worktree of a repository before its session's first turn (SetupRun), and for how long at
// most.
struct SetupCommand {
  std::string command;
  std::chrono::milliseconds time_limit;
};

// The repositories' set-up commands (setting worktrees.setup, docs/worktrees.md), by the repository's main
// working tree.
class SetupCommands {
 public:
  SetupCommands() = default;
  // `by_repository`: a command by main working tree (an absolute path); a later start of the daemon may find the
  // path spelt differently, so they are compared after canonicalisation.
  SetupCommands(std::map<std::string, std::string> by_repository, std::chrono::milliseconds time_limit)
      : m_commands(std::move(by_repository)), m_time_limit(time_limit) {}

  // The command of the repository whose main working tree is `repository`; nullopt when none is configured.
  std::optional<SetupCommand> for_repository(const std::filesystem::path& repository) const;
  bool empty() const { return m_commands.empty(); }

 private:
  std::map<std::string, std::string> m_commands;
  std::chrono::milliseconds m_time_limit{std::chrono::minutes(10)};
};

}  // namespace switchboard::worktree
