#include "config/WorktreeSetupEntry.h"

#include <filesystem>

namespace switchboard::config {

namespace {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

}  // namespace

std::variant<WorktreeSetupEntry, std::string> parse_worktree_setup_entry(std::string_view text) {
  const auto equals = text.find('=');
  if (equals == std::string_view::npos)
    return "expected \"<repository path>=<command>\", got \"" + std::string(text) + "\" (no '=')";
  const auto repository = trimmed(text.substr(0, equals));
  const auto command = trimmed(text.substr(equals + 1));
  if (repository.empty() || !std::filesystem::path(repository).is_absolute())
    return "the repository in \"" + std::string(text) + "\" must be an absolute path (the main checkout's top)";
  if (command.empty()) return "the command in \"" + std::string(text) + "\" is empty";
  return WorktreeSetupEntry{std::string(repository), std::string(command)};
}

std::optional<std::string> worktree_setup_entry_problem(std::string_view text) {
  auto parsed = parse_worktree_setup_entry(text);
  if (const auto* problem = std::get_if<std::string>(&parsed)) return *problem;
  return std::nullopt;
}

}  // namespace switchboard::config
