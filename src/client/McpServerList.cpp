#include "client/McpServerList.h"

#include <optional>
#include <utility>

#include "engine/McpServerCheck.h"
#include "switchboard/json/DecodeContext.h"
#include "switchboard/json/JsonWriter.h"

namespace switchboard::client {

namespace {

using Outcome = std::variant<std::vector<protocol::McpServer>, McpServerProblem>;

Outcome problem(std::string pointer, std::string why) {
  return Outcome(std::in_place_index<1>, McpServerProblem{std::move(pointer), std::move(why)});
}

}  // namespace

std::variant<std::vector<protocol::McpServer>, McpServerProblem> decode_mcp_servers(const nlohmann::json& servers) {
  if (!servers.is_array()) return problem("", "expected an array of MCP servers");
  if (servers.size() > kMaxMcpServers) {
    return problem("", "at most " + std::to_string(kMaxMcpServers) + " MCP servers, not " + std::to_string(servers.size()));
  }
  std::vector<protocol::McpServer> decoded;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const std::string at = "/" + std::to_string(i);
    protocol::McpServer server;
    json::DecodeContext context;
    if (!protocol::decode(servers[i], server, context)) {
      const auto& error = context.error();
      return problem(at + error.pointer, "expected " + error.expected + ", not " + error.actual);
    }
    decoded.push_back(std::move(server));
  }
  // Then what the engine checks beyond the schema, with the same words.
  if (auto found = engine::mcp_servers_problem(decoded)) return problem(std::move(found->pointer), std::move(found->why));
  return decoded;
}

nlohmann::json mcp_servers_param(const std::vector<protocol::McpServer>& servers) {
  std::string text;
  json::JsonWriter writer(text);
  writer.begin_array();
  for (const auto& server : servers) protocol::encode(writer, server);
  writer.end_array();
  writer.finish();
  return nlohmann::json::parse(text);
}

}  // namespace switchboard::client
