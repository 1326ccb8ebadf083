#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::acp {

// Reading and writing ACP's session controls (plans, slash commands, config options, MCP servers), shared by the
// translator, the adapter and their tests. Pure and total: a field of another type or shape reads as absent.

// A `plan` update's entries as ours: content, status (pending, in_progress, completed; any other status, such as
// a cancelled item some agents keep, reads as completed: the agent is done with it) and priority where given.
std::vector<protocol::PlanEntry> plan_entries(const nlohmann::json& entries);

// An `available_commands_update`'s commands as ours (name, description, input.hint as the argument hint), without
// the ones named in `hidden` (those that only make sense in the agent's own terminal UI, or that would go around
// the session's permissions: each agent's doc lists them).
std::vector<protocol::AgentCommand> offered_commands(const nlohmann::json& available, const std::vector<std::string>& hidden);

// The id our options take for an ACP config option: `effort` for the one of category thought_level (the id every
// agent's reasoning effort has), else the agent's own id.
inline constexpr std::string_view kEffortOption = "effort";

// The session's config options as ours, and the ACP configId each of our ids stands for. The options of category
// model and mode are left out: the session's model and mode have methods of their own.
struct OfferedOptions {
  std::vector<protocol::SessionOption> options;
  std::map<std::string, std::string> config_ids;  // our option id → ACP configId
};
OfferedOptions offered_options(const nlohmann::json& config_options);

// The value session/set_config_option takes for one of our option values: a boolean option's "true"/"false" as a
// JSON boolean (sent with `"type": "boolean"`), anything else as the value id it is.
nlohmann::json config_value(const protocol::SessionOption& option, const std::string& value);

// The MCP servers of session/new and session/load in ACP's form: stdio {name, command, args, env[{name,value}]},
// http {type:"http", name, url, headers[{name,value}]}. Each stdio server's env also blanks `hidden_variables`
// (variables the agent was given for itself, such as its provider key, which the servers it starts would
// otherwise inherit). An http server an agent cannot take (`http_ok` false: its mcpCapabilities say no) is left
// out and reported in `refused` as failed, saying why.
nlohmann::json mcp_servers_param(const std::vector<protocol::McpServer>& servers, bool http_ok,
                                 const std::vector<std::string>& hidden_variables, std::vector<protocol::McpServerState>& refused);

// One MCP server's state as an agent's own status word names it (Grok Build's `ready`, `failed`, `connecting`…).
protocol::McpServerStatusKind mcp_status_of(std::string_view status);

}  // namespace switchboard::adapters::acp
