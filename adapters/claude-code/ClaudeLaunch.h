#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/ChildEnvironment.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::claude {

// How Claude Code is started: its command line and environment. The working directory is the spawner's (the
// CLI works in, and files its history under, the directory it starts in).

struct LaunchOptions {
  std::string executable = "claude";
  std::vector<std::string> leading_arguments;  // before Claude Code's own: a stand-in's (the replay agent's)
  std::optional<std::string> model;
  std::optional<std::string> permission_mode;
  std::optional<std::string> resume_session_id;  // the CLI's own session id (system/init session_id)
  bool fork_session = false;  // continue a copy of resume_session_id under a new id (--fork-session)
  // With resume_session_id: keep the conversation only up to and including the message with this uuid.
  std::optional<std::string> resume_session_at;
  std::optional<std::string> effort;           // --effort
  std::optional<std::string> mcp_config_file;  // --mcp-config: a file holding mcp_config()'s JSON
  // --include-partial-messages: stream_event lines (text and thinking deltas) before each whole message. Without
  // it the CLI writes only whole messages, and answers a one-turn run measurably sooner (docs/performance.md).
  bool partial_messages = true;
};

// Duplex stream-json with permission prompts on stdio (and partial messages unless turned off), as the Agent
// SDK runs it.
std::vector<std::string> command_line(const LaunchOptions& options);

// The MCP servers in Claude Code's own form: {"mcpServers": {name: {"type": "stdio", command, args, env} or
// {"type": "http", url, headers}}}.
nlohmann::json mcp_config(const std::vector<protocol::McpServer>& servers);

// The version in what `claude --version` prints ("2.1.197 (Claude Code)" gives "2.1.197"; discovery runs it,
// common/VersionProbe.h); none when the output is not a version.
std::optional<std::string> parse_version_output(std::string_view output);

// Where the CLI sends its model requests, and with what key. Unset fields leave the user's own configuration
// (their login, or their ANTHROPIC_* variables) in charge.
struct ProviderEndpoint {
  std::optional<std::string> base_url;  // ANTHROPIC_BASE_URL
  std::optional<std::string> api_key;
  // How the key is sent: ANTHROPIC_API_KEY becomes `x-api-key`, ANTHROPIC_AUTH_TOKEN `Authorization: Bearer`.
  bool key_as_bearer_token = false;
  std::optional<std::string> config_dir;  // CLAUDE_CONFIG_DIR: settings, login and history live there
};

using adapters::EnvironmentChanges;  // common/ChildEnvironment.h

// Always: no auto-update, telemetry, error reporting or other non-essential traffic; and no variables that would
// change how the CLI behaves under us (NODE_OPTIONS, which the Agent SDK removes too, and CLAUDECODE, set inside
// a Claude Code session, which marks the child as nested). With a key, the other credential variable is removed
// so that a key of the user's never goes to a different base URL.
EnvironmentChanges environment_for(const ProviderEndpoint& endpoint);

// The child's environment: `inherited` ("NAME=value" entries, e.g. from environ) with the changes applied.
std::vector<std::string> apply_environment(const std::vector<std::string>& inherited, const EnvironmentChanges& changes);

}  // namespace switchboard::adapters::claude
