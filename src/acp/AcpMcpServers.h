#pragma once

#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace switchboard::acp {

// The MCP servers an editor passes at session/new, in our form (session.create's mcpServers): a stdio server
// {name, command, args, env[{name,value}]} becomes {name, transport "stdio", command, args, env {name: value}},
// an http one {type "http", name, url, headers[{name,value}]} becomes {name, transport "http", url, headers}.
// Absent or null: none. They are checked as the daemon checks them (client/McpServerList.h: the schema's limits,
// the fields each transport needs, unique names), so that session/new refuses them with the field at fault.
// Why not, for a list we cannot take: an SSE server (not among our transports, and not advertised), one that is
// not a server at all, or one that fails that check.
std::variant<nlohmann::json, std::string> mcp_servers_of(const nlohmann::json& editor_servers);

}  // namespace switchboard::acp
