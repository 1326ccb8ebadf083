#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "run/RunOptions.h"

namespace CLI {
class App;
}

namespace switchboard::run {

// The flags of `switchboard run` as typed; check_run_flags turns them into RunOptions (or a usage error).
struct RunFlags {
  std::vector<std::string> prompt;  // positional: the prompt, or "-" for standard input
  std::string prompt_file;
  std::string agent = "claude";
  std::string cwd;
  std::string model;
  std::string mode;
  std::string title;
  std::vector<std::string> files;
  std::string session;
  bool continue_newest = false;
  std::string fork;
  std::string mcp_config;
  std::optional<std::string> worktree;  // --worktree [BRANCH]: empty when no branch was named
  bool ephemeral = false;
  bool standalone = false;
  std::string on_ask = "deny";
  std::vector<std::string> allow;
  std::vector<std::string> deny;
  std::string timeout;
  std::string idle_timeout;
  std::string output = "text";
  std::string output_file;
};

// Registers the flags on the `run` subcommand (main.cpp owns the app); the help ends with the exit codes.
void add_run_flags(CLI::App& command, RunFlags& flags);

// Checks the flags and reads the prompt (standard input only for `-`). Relative paths are taken from the
// current directory. Returns the options or the usage error (exit code 2).
std::variant<RunOptions, std::string> check_run_flags(const RunFlags& flags, int stdin_fd);

// "30" (seconds), "500ms", "90s", "5m", "1h" → milliseconds > 0; nullopt when it is none of those.
std::optional<std::chrono::milliseconds> parse_limit(const std::string& text);

}  // namespace switchboard::run
