#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <variant>

namespace switchboard::adapters::pi {

// Our permission extension for Pi, shipped inside the daemon's binary: Pi loads an extension from a file
// (`-e <path>`), so the adapter writes it into agents.pi.extension_dir (default: pi in the data directory, private
// to the user) before it starts Pi. What it does: docs/agents/pi.md, "Permissions".
std::string_view permission_extension_source();

// Writes the extension into `dir` (created if missing) unless the file there already holds it, and returns its
// path, or why it could not be written. A few KiB, once per Pi start: not worth a trip off the reactor.
std::variant<std::filesystem::path, std::string> install_permission_extension(const std::filesystem::path& dir);

// Our MCP extension: it registers the session's MCP servers, read from the file its flag `--switchboard-mcp`
// names, with Pi's built-in MCP support (docs/agents/pi.md, "Controls"). Loaded only by sessions that have MCP
// servers.
std::string_view mcp_extension_source();
std::variant<std::filesystem::path, std::string> install_mcp_extension(const std::filesystem::path& dir);

// Writes one session's MCP servers (JSON, PiControls.h mcp_registrations) into a new file in `dir`,
// mcp-<session id>-<random>.json, created readable by the user only (it may hold tokens), and returns its path.
// The adapter removes it when its Pi exits or its start fails.
std::variant<std::filesystem::path, std::string> write_mcp_servers(const std::filesystem::path& dir, const std::string& session_id,
                                                                   const std::string& servers);

}  // namespace switchboard::adapters::pi
