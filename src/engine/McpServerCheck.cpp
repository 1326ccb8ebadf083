#include "engine/McpServerCheck.h"

#include <set>
#include <utility>

namespace switchboard::engine {

namespace {

// The pointer segment for an object key: '~' and '/' escaped (RFC 6901).
std::string pointer_segment(const std::string& key) {
  std::string escaped;
  for (const char c : key) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

}  // namespace

std::optional<McpServerProblem> mcp_servers_problem(const std::vector<protocol::McpServer>& servers) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const auto& server = servers[i];
    const std::string at = "/" + std::to_string(i);
    if (!names.insert(server.name).second) {
      return McpServerProblem{at + "/name", "the name '" + server.name + "' is used by an earlier server (names are unique)"};
    }
    const bool stdio = server.transport == protocol::McpTransport::Stdio;
    if (stdio && !server.command) return McpServerProblem{at + "/command", "a stdio server needs a command"};
    if (!stdio && !server.url) return McpServerProblem{at + "/url", "an http server needs a url"};
    if (stdio && (server.url || server.headers)) {
      return McpServerProblem{at + (server.url ? "/url" : "/headers"), "a stdio server takes command, args and env"};
    }
    if (!stdio && (server.command || server.args || server.env)) {
      return McpServerProblem{at + (server.command ? "/command" : server.args ? "/args" : "/env"),
                              "an http server takes url and headers"};
    }
    for (const auto& [field, map] : {std::pair{"env", &server.env}, std::pair{"headers", &server.headers}}) {
      if (!*map) continue;
      if (!(*map)->is_object()) return McpServerProblem{at + "/" + field, "expected an object of strings"};
      for (const auto& [key, value] : (*map)->items()) {
        if (!value.is_string()) return McpServerProblem{at + "/" + field + "/" + pointer_segment(key), "expected a string"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace switchboard::engine
