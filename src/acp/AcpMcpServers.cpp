#include "acp/AcpMcpServers.h"

#include "acp/JsonMembers.h"

namespace switchboard::acp {

namespace {

// ACP's [{name, value}] pairs as our {name: value} object; entries that are not such a pair are left out.
nlohmann::json pairs_object(const nlohmann::json& server, const char* key) {
  nlohmann::json object = nlohmann::json::object();
  if (!server.contains(key) || !server[key].is_array()) return object;
  for (const auto& pair : server[key]) {
    const auto name = string_member(pair, "name");
    if (!name.empty() && pair.contains("value") && pair["value"].is_string()) object[name] = pair["value"];
  }
  return object;
}

}  // namespace

std::variant<nlohmann::json, std::string> mcp_servers_of(const nlohmann::json& editor_servers) {
  nlohmann::json servers = nlohmann::json::array();
  if (editor_servers.is_null()) return servers;
  if (!editor_servers.is_array()) return std::string("mcpServers must be a list of MCP servers");
  for (const auto& server : editor_servers) {
    if (!server.is_object()) return std::string("mcpServers must be a list of MCP servers");
    const auto type = string_member(server, "type");
    const auto name = string_member(server, "name");
    if (type == "http") {
      servers.push_back(nlohmann::json{{"name", name}, {"transport", "http"}, {"url", string_member(server, "url")},
                                       {"headers", pairs_object(server, "headers")}});
      continue;
    }
    if (!type.empty() && type != "stdio") {
      return "the MCP server '" + name + "' is of type " + type + ", which is not offered (mcpCapabilities): stdio and http are";
    }
    nlohmann::json ours{{"name", name}, {"transport", "stdio"}, {"command", string_member(server, "command")}};
    nlohmann::json args = nlohmann::json::array();
    if (server.contains("args") && server["args"].is_array()) {
      for (const auto& arg : server["args"]) {
        if (arg.is_string()) args.push_back(arg);
      }
    }
    ours["args"] = std::move(args);
    ours["env"] = pairs_object(server, "env");
    servers.push_back(std::move(ours));
  }
  return servers;
}

}  // namespace switchboard::acp
