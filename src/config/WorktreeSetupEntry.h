#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace switchboard::config {

// One entry of the setting worktrees.setup, "<repository>=<command>": the command (run by /bin/sh in every new
// worktree of the repository before its session's first turn) and the repository's main working tree, an absolute
// path. Split at the first '='.
struct WorktreeSetupEntry {
  std::string repository;
  std::string command;
};

// The entry, or what is wrong with it (no '=', a relative or empty path, an empty command).
std::variant<WorktreeSetupEntry, std::string> parse_worktree_setup_entry(std::string_view text);

// The problem with the entry, if any: SettingSpec::check_item of worktrees.setup.
std::optional<std::string> worktree_setup_entry_problem(std::string_view text);

}  // namespace switchboard::config
