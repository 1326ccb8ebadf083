#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::pi {

// Pi's answers about a session's controls (its RPC commands get_commands, get_available_thinking_levels,
// get_session_stats, get_fork_messages and the built-in `/mcp` command's status text) read into the contract's
// forms, and the session's MCP servers written in Pi's. Pure: the adapter asks, these read. docs/agents/pi.md,
// "Controls", says what each maps to.

// The option id of Pi's thinking level: reasoning effort is `effort` on every agent.
inline constexpr std::string_view kEffortOption = "effort";

// get_commands' prompt templates, skills (`skill:<name>`) and the user's extensions' commands. Commands of Pi's
// own built-in extensions (`/mcp`, `/llama`: sourceInfo.source "builtin") are left out: what they print goes to
// Pi's TUI or a notification no client sees, and the MCP servers' status is reported as mcp.status instead.
std::vector<protocol::AgentCommand> offered_commands(const nlohmann::json& response);

// get_available_thinking_levels' levels, in Pi's order (["off"] for a model without reasoning).
std::vector<std::string> thinking_levels(const nlohmann::json& response);

// The `effort` option: Pi's thinking levels, `current` in force.
protocol::SessionOption effort_option(const std::vector<std::string>& levels, const std::string& current);

// get_session_stats' context usage: the tokens of the context as of the latest model answer and the window of
// the model (contextUsage), the session's cost and token totals. None when Pi knows no context usage yet.
std::optional<protocol::ContextUsage> context_usage(const nlohmann::json& response);

// get_fork_messages' user messages on the current branch, oldest first: their entry ids.
std::vector<std::string> user_entry_ids(const nlohmann::json& response);

// The entry to fork before so that the copy keeps `through` and everything before it: the user message after
// `through` on the branch. Empty when `through` is the last one (the copy keeps everything); none when `through`
// is not on the branch.
std::optional<std::string> entry_after(const std::vector<std::string>& entries, const std::string& through);

// The session's MCP servers as Pi's registerMcpServer takes them, by name ({command, args, env} or {url,
// headers}), each with `exposure: "direct"`: the model sees their tools among its own, as with every other agent.
nlohmann::json mcp_registrations(const std::vector<protocol::McpServer>& servers);

// The status of `servers` from the text Pi's `/mcp` command prints outside its TUI: one line per server
// (`<name>: connected, 3 tools (direct)`, `<name>: failed (direct)` followed by the error indented). A server the
// text does not name failed to register (Pi refused its name or configuration).
std::vector<protocol::McpServerState> mcp_states(const std::vector<protocol::McpServer>& servers, std::string_view status_text);

}  // namespace switchboard::adapters::pi
