#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters {

// The environment variables (an object of name to value) an agent is told to give one of the session's stdio MCP
// servers: the server's own, plus each of `hidden` set empty unless the server names it itself. An agent CLI starts
// a stdio server with its own environment under the server's, so a variable holding the agent's credentials (a
// provider key we gave it) would otherwise reach a program the session's client chose.
nlohmann::json stdio_server_environment(const protocol::McpServer& server, const std::vector<std::string>& hidden);

// The session's servers, each not yet connected: what a session reports before its agent says more.
std::vector<protocol::McpServerState> pending_mcp_states(const std::vector<protocol::McpServer>& servers);

}  // namespace switchboard::adapters
