#pragma once

#include <cstddef>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/McpServerCheck.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::client {

// session.create takes at most this many MCP servers (its mcpServers' maxItems in schema/methods).
inline constexpr std::size_t kMaxMcpServers = 32;

// Why a list would be refused: the field (a JSON pointer into the list, "" for the list itself) and what is wrong.
using McpServerProblem = engine::McpServerProblem;

// A client's MCP servers, already in session.create's wire shape ([{name, transport, command, args, env} or
// {name, transport, url, headers}]), decoded by the protocol's generated decoder and checked as the daemon
// checks them (names unique, the fields each transport needs, string values in env and headers, the count),
// so that a client refuses them before it starts anything rather than having the daemon refuse them later.
std::variant<std::vector<protocol::McpServer>, McpServerProblem> decode_mcp_servers(const nlohmann::json& servers);

// The servers as session.create's `mcpServers` parameter, by the protocol's generated encoder.
nlohmann::json mcp_servers_param(const std::vector<protocol::McpServer>& servers);

}  // namespace switchboard::client
