#pragma once

#include <filesystem>
#include <string>
#include <variant>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::run {

// `switchboard run --mcp-config FILE`: MCP servers in the form editors and agent CLIs share,
//   {"mcpServers": {"NAME": {"command", "args", "env"} | {"type": "http", "url", "headers"}}}
// read into the protocol's McpServer list that session.create takes, checked as the daemon will check it (the
// schema's limits included). Anything else in the file, or a file that cannot be read, is a usage error that
// names where it is, found before the run starts anything.
std::variant<std::vector<protocol::McpServer>, std::string> read_mcp_config(const std::filesystem::path& file);

// The same, from the file's text (what read_mcp_config parses once the file is read).
std::variant<std::vector<protocol::McpServer>, std::string> parse_mcp_config(const std::string& text);

}  // namespace switchboard::run
