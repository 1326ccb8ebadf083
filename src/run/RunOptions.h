#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::run {

// What `switchboard run` does when the agent asks for a permission (or asks a question) that no --allow or
// --deny rule decides.
enum class OnAsk {
  Deny,      // answer no, and let the agent go on without the tool
  Fail,      // answer no and end the run at once, exit code 4
  Allow,     // answer yes (questions are still rejected: a script cannot answer them)
  Delegate,  // leave it to the other clients of the daemon (console, TUI), bounded by the timeouts
};

enum class OutputFormat { Text, Json, Ndjson };

// An --allow or --deny rule, in the engine's terms (a tool, and a glob over the tool's subject).
struct RunRule {
  protocol::PermissionRule rule;
  bool allow = true;
};

// Everything one `switchboard run` was asked to do, checked (main.cpp parses it, run/RunCommand runs it).
struct RunOptions {
  std::string prompt;
  std::string agent = "claude";
  std::string cwd;  // absolute
  std::optional<std::string> model;
  std::optional<std::string> mode;
  std::optional<std::string> title;
  std::vector<std::string> files;  // absolute paths, sent as attachments
  std::optional<std::string> session_id;
  bool continue_newest = false;
  std::optional<std::string> fork_of;  // --fork: a fork of this session (session.fork), then the prompt
  std::vector<protocol::McpServer> mcp_servers;  // --mcp-config: for a new session
  // --worktree: the new session works in a worktree of its own, on this branch (empty: derived from the title).
  std::optional<std::string> worktree;
  bool ephemeral = false;
  bool standalone = false;
  OnAsk on_ask = OnAsk::Deny;
  std::vector<RunRule> rules;
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::chrono::milliseconds> idle_timeout;
  OutputFormat output = OutputFormat::Text;
  std::optional<std::filesystem::path> output_file;  // -o: the final message goes there too
};

}  // namespace switchboard::run
