#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace switchboard::adapters {

// A home directory the daemon keeps for an agent CLI (CODEX_HOME, GROK_HOME) when it points the agent at a model
// provider of its own: the CLI's configuration, sessions and logs live there, and the user's own home (their
// models, keys, login) is never written. One writer and one safety check for every agent that has one.
struct PrivateHome {
  std::filesystem::path dir;
  std::string agent;        // as the refusals name it: "Codex"
  std::string variable;     // the variable that names the agent's home: "CODEX_HOME"
  std::string user_dir;     // the user's own home of the agent, below $HOME: ".codex"
  std::string marker_file;  // in `dir`: the mark that switchboard made the directory its own
};

// Whether two paths name one directory: the same file (for paths that exist, whatever the route to them), or the
// same path once symlinks, "." and ".." are resolved and trailing slashes dropped (for a directory that does not
// exist yet, such as a user's ~/.codex before the CLI first ran).
bool same_place(const std::filesystem::path& a, const std::filesystem::path& b);

// Writes `config` as <dir>/config.toml, creating the directory, by way of a temporary file renamed over it (a CLI
// starting meanwhile reads the old file or the new one). Refuses, returning why, a directory that is the user's
// own home of the agent ($HOME/<user_dir>, or `inherited_home`: the daemon's own <variable>), or one that holds
// files switchboard did not make its own. The directory is switchboard's when it holds `marker_file`; a missing or
// empty directory gets one, and so does one whose config.toml switchboard wrote (its first line is the first line
// of `config`).
std::optional<std::string> write_private_home(const PrivateHome& home, std::string_view config,
                                              const std::optional<std::string>& user_home,
                                              const std::optional<std::string>& inherited_home);

}  // namespace switchboard::adapters
