#include "acp/AcpMcpServers.h"

#include "acp/JsonMembers.h"
#include "client/McpServerList.h"

namespace switchboard::acp {

namespace {

// ACP's [{name, value}] pairs as the wire's {name: value} object. A value is taken as it comes (the check
// after says if it is no string); a list that is not of such pairs cannot be read at all.
std::variant<nlohmann::json, std::string> pairs_object(const nlohmann::json& pairs, const std::string& where) {
  if (!pairs.is_array()) return where + " must be a list of {name, value}";
  nlohmann::json object = nlohmann::json::object();
  for (const auto& pair : pairs) {
    const auto name = string_member(pair, "name");
    if (name.empty() || !pair.contains("value")) return where + " must be a list of {name, value}";
    object[name] = pair["value"];
  }
  return object;
}

// One editor server in the wire's shape, fields as they come, for the shared check to judge; else why not.
std::variant<nlohmann::json, std::string> wire_server(const nlohmann::json& server, std::size_t index) {
  const std::string where = "mcpServers/" + std::to_string(index);
  if (!server.is_object()) return std::string("mcpServers must be a list of MCP servers");
  const auto type = string_member(server, "type");
  if (!type.empty() && type != "stdio" && type != "http") {
    return "the MCP server '" + string_member(server, "name") + "' is of type " + type +
           ", which is not offered (mcpCapabilities): stdio and http are";
  }
  const bool http = type == "http";
  nlohmann::json wire{{"transport", http ? "http" : "stdio"}};
  for (const char* field : {"name", "command", "args", "url"}) {
    if (server.contains(field)) wire[field] = server[field];
  }
  for (const char* field : {"env", "headers"}) {
    if (!server.contains(field)) continue;
    auto object = pairs_object(server[field], where + "/" + field);
    if (auto* why = std::get_if<std::string>(&object)) return std::move(*why);
    wire[field] = std::get<nlohmann::json>(std::move(object));
  }
  return wire;
}

}  // namespace

std::variant<nlohmann::json, std::string> mcp_servers_of(const nlohmann::json& editor_servers) {
  if (editor_servers.is_null()) return nlohmann::json::array();
  if (!editor_servers.is_array()) return std::string("mcpServers must be a list of MCP servers");
  nlohmann::json wire = nlohmann::json::array();
  for (std::size_t i = 0; i < editor_servers.size(); ++i) {
    auto server = wire_server(editor_servers[i], i);
    if (auto* why = std::get_if<std::string>(&server)) return std::move(*why);
    wire.push_back(std::get<nlohmann::json>(std::move(server)));
  }
  auto decoded = client::decode_mcp_servers(wire);
  if (auto* problem = std::get_if<client::McpServerProblem>(&decoded)) return "mcpServers" + problem->pointer + ": " + problem->why;
  return client::mcp_servers_param(std::get<0>(decoded));
}

}  // namespace switchboard::acp
