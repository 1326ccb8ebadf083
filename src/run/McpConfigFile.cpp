#include "run/McpConfigFile.h"

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

namespace switchboard::run {
// Named, not anonymous: the module is a unity build, and PromptSource.cpp has an Outcome and a failure() of its own.
namespace mcp_config_file {

using Servers = std::vector<protocol::McpServer>;
using Outcome = std::variant<Servers, std::string>;

Outcome failure(std::string why) { return Outcome(std::in_place_index<1>, std::move(why)); }

// A config file holds a handful of servers: anything near this is not one.
constexpr std::uintmax_t kMaxConfigBytes = 1024 * 1024;

// An object whose values are all strings (env, headers), as the protocol requires; else what is wrong.
std::optional<std::string> string_map_problem(const nlohmann::json& value, const std::string& where) {
  if (!value.is_object()) return where + " must be an object of strings";
  for (const auto& [key, member] : value.items()) {
    if (!member.is_string()) return where + "." + key + " must be a string";
  }
  return std::nullopt;
}

Outcome server_from(const std::string& name, const nlohmann::json& entry) {
  const std::string where = "mcpServers." + name;
  if (!entry.is_object()) return failure(where + " must be an object");
  protocol::McpServer server;
  server.name = name;
  const std::string type = entry.contains("type") && entry["type"].is_string() ? entry["type"].get<std::string>() : "";
  if (entry.contains("type") && !entry["type"].is_string()) return failure(where + ".type must be a string");
  // Some clients leave the type out of an http entry: a url and no command says what it is.
  const bool http = type == "http" || (type.empty() && entry.contains("url") && !entry.contains("command"));
  if (http) {
    server.transport = protocol::McpTransport::Http;
    if (!entry.contains("url") || !entry["url"].is_string() || entry["url"].get<std::string>().empty()) {
      return failure(where + ": an http server needs a url");
    }
    server.url = entry["url"].get<std::string>();
    if (entry.contains("headers")) {
      if (auto problem = string_map_problem(entry["headers"], where + ".headers")) return failure(*problem);
      server.headers = entry["headers"];
    }
  } else if (type.empty() || type == "stdio") {
    server.transport = protocol::McpTransport::Stdio;
    if (!entry.contains("command") || !entry["command"].is_string() || entry["command"].get<std::string>().empty()) {
      return failure(where + ": a stdio server needs a command");
    }
    server.command = entry["command"].get<std::string>();
    if (entry.contains("args")) {
      if (!entry["args"].is_array()) return failure(where + ".args must be an array of strings");
      std::vector<std::string> args;
      for (const auto& arg : entry["args"]) {
        if (!arg.is_string()) return failure(where + ".args must be an array of strings");
        args.push_back(arg.get<std::string>());
      }
      server.args = std::move(args);
    }
    if (entry.contains("env")) {
      if (auto problem = string_map_problem(entry["env"], where + ".env")) return failure(*problem);
      server.env = entry["env"];
    }
  } else {
    return failure(where + ".type is " + type + ": switchboard takes stdio and http servers");
  }
  Servers one;
  one.push_back(std::move(server));
  return one;
}

}  // namespace mcp_config_file

std::variant<std::vector<protocol::McpServer>, std::string> parse_mcp_config(const std::string& text) {
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) return mcp_config_file::failure("it is not JSON");
  if (!document.is_object() || !document.contains("mcpServers") || !document["mcpServers"].is_object()) {
    return mcp_config_file::failure("it needs an object \"mcpServers\": {\"NAME\": {\"command\": ...} or {\"type\": \"http\", \"url\": ...}}");
  }
  mcp_config_file::Servers servers;
  for (const auto& [name, entry] : document["mcpServers"].items()) {
    if (name.empty()) return mcp_config_file::failure("mcpServers: a server needs a name");
    auto one = mcp_config_file::server_from(name, entry);
    if (one.index() == 1) return one;
    servers.push_back(std::move(std::get<0>(one).front()));
  }
  if (servers.empty()) return mcp_config_file::failure("mcpServers names no server");
  return servers;
}

std::variant<std::vector<protocol::McpServer>, std::string> read_mcp_config(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return mcp_config_file::failure("no such file");
  const auto size = std::filesystem::file_size(file, error);
  if (error || size > mcp_config_file::kMaxConfigBytes) return mcp_config_file::failure("over 1 MiB");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return mcp_config_file::failure("cannot be read");
  return parse_mcp_config(text.str());
}

nlohmann::json mcp_servers_param(const std::vector<protocol::McpServer>& servers) {
  auto param = nlohmann::json::array();
  for (const auto& server : servers) {
    nlohmann::json entry{{"name", server.name}, {"transport", std::string(protocol::to_string(server.transport))}};
    if (server.command) entry["command"] = *server.command;
    if (server.args) entry["args"] = *server.args;
    if (server.env) entry["env"] = *server.env;
    if (server.url) entry["url"] = *server.url;
    if (server.headers) entry["headers"] = *server.headers;
    param.push_back(std::move(entry));
  }
  return param;
}

}  // namespace switchboard::run
