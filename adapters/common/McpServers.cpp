#include "common/McpServers.h"

namespace switchboard::adapters {

nlohmann::json stdio_server_environment(const protocol::McpServer& server, const std::vector<std::string>& hidden) {
  nlohmann::json environment = server.env && server.env->is_object() ? *server.env : nlohmann::json::object();
  for (const auto& name : hidden) {
    if (!environment.contains(name)) environment[name] = "";
  }
  return environment;
}

std::vector<protocol::McpServerState> pending_mcp_states(const std::vector<protocol::McpServer>& servers) {
  std::vector<protocol::McpServerState> states;
  states.reserve(servers.size());
  for (const auto& server : servers) {
    states.push_back(protocol::McpServerState{server.name, server.transport, protocol::McpServerStatusKind::Pending, std::nullopt, std::nullopt});
  }
  return states;
}

}  // namespace switchboard::adapters
