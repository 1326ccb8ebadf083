#pragma once

#include <optional>
#include <string>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// Why a list of MCP servers, decoded by the protocol's decoder, cannot be a session's: the field at fault (a JSON
// pointer into the list, like "/1/command") and what is wrong with it.
struct McpServerProblem {
  std::string pointer;
  std::string why;
};

// What the schema cannot say of session.create's mcpServers: the fields each transport needs and takes, that env
// and headers are objects of strings, that names are unique. The first problem, or none. The engine refuses
// session.create with it; a client (`run --mcp-config`, `acp`) checks its servers with it before it starts anything.
std::optional<McpServerProblem> mcp_servers_problem(const std::vector<protocol::McpServer>& servers);

}  // namespace switchboard::engine
