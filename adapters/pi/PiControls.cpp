#include "pi/PiControls.h"

#include <charconv>
#include <map>

#include "common/McpServers.h"
#include "common/NativeJson.h"

namespace switchboard::adapters::pi {
namespace {

using nlohmann::json;

const json* data_of(const json& response) { return native::object_at(response, "data"); }

std::string_view without_indent(std::string_view line) {
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

// "connected, 3 tools (direct)" → 3; none without a count.
std::optional<std::int64_t> tool_count(std::string_view state) {
  const auto comma = state.find(", ");
  if (comma == std::string_view::npos) return std::nullopt;
  std::string_view rest = state.substr(comma + 2);
  std::int64_t count = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), count);
  if (error != std::errc() || end == rest.data()) return std::nullopt;
  return count;
}

// One server's lines of the `/mcp` text: its own line's state (after "<name>: ") and the indented lines after it.
struct StatusLines {
  std::string state;
  std::string detail;
};

std::map<std::string, StatusLines, std::less<>> status_lines(std::string_view text) {
  std::map<std::string, StatusLines, std::less<>> servers;
  StatusLines* current = nullptr;
  while (!text.empty()) {
    const auto newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    if (!line.empty() && (line.front() == ' ' || line.front() == '\t')) {
      if (current == nullptr) continue;
      if (!current->detail.empty()) current->detail += "\n";
      current->detail += without_indent(line);
      continue;
    }
    const auto colon = line.find(": ");
    current = nullptr;
    if (colon == std::string_view::npos) continue;
    auto& entry = servers[std::string(line.substr(0, colon))];
    entry.state = std::string(line.substr(colon + 2));
    current = &entry;
  }
  return servers;
}

}  // namespace

std::vector<protocol::AgentCommand> offered_commands(const json& response) {
  std::vector<protocol::AgentCommand> commands;
  const auto* data = data_of(response);
  const auto* list = data != nullptr ? native::array_at(*data, "commands") : nullptr;
  if (list == nullptr) return commands;
  for (const auto& command : *list) {
    auto name = native::string_at(command, "name");
    if (!name || name->empty()) continue;
    const auto* origin = native::object_at(command, "sourceInfo");
    if (origin != nullptr && native::string_or_empty(*origin, "source") == "builtin") continue;
    protocol::AgentCommand offered;
    offered.name = std::move(*name);
    if (auto description = native::string_at(command, "description"); description && !description->empty()) {
      offered.description = std::move(description);
    }
    commands.push_back(std::move(offered));
  }
  return commands;
}

std::vector<std::string> thinking_levels(const json& response) {
  std::vector<std::string> levels;
  const auto* data = data_of(response);
  const auto* list = data != nullptr ? native::array_at(*data, "levels") : nullptr;
  if (list == nullptr) return levels;
  for (const auto& level : *list) {
    if (level.is_string()) levels.push_back(level.get<std::string>());
  }
  return levels;
}

protocol::SessionOption effort_option(const std::vector<std::string>& levels, const std::string& current) {
  protocol::SessionOption option;
  option.id = std::string(kEffortOption);
  option.name = "Thinking level";
  option.description = "How much the model reasons before it answers (Pi's thinking level)";
  option.kind = protocol::SessionOptionKind::Select;
  for (const auto& level : levels) option.values.push_back(protocol::SessionOptionValue{level});
  option.current_value = current;
  return option;
}

std::optional<protocol::ContextUsage> context_usage(const json& response) {
  const auto* data = data_of(response);
  const auto* context = data != nullptr ? native::object_at(*data, "contextUsage") : nullptr;
  if (context == nullptr) return std::nullopt;
  // Null right after a compaction, until the model has answered again.
  const auto tokens = native::integer_at(*context, "tokens");
  if (!tokens) return std::nullopt;
  protocol::ContextUsage usage;
  usage.used_tokens = *tokens;
  usage.window_tokens = native::integer_at(*context, "contextWindow");
  usage.cost_usd = native::number_at(*data, "cost");
  if (const auto* totals = native::object_at(*data, "tokens")) {
    usage.input_tokens = native::integer_at(*totals, "input");
    usage.output_tokens = native::integer_at(*totals, "output");
    usage.cache_read_tokens = native::integer_at(*totals, "cacheRead");
  }
  return usage;
}

std::vector<std::string> user_entry_ids(const json& response) {
  std::vector<std::string> ids;
  const auto* data = data_of(response);
  const auto* list = data != nullptr ? native::array_at(*data, "messages") : nullptr;
  if (list == nullptr) return ids;
  for (const auto& message : *list) {
    if (auto id = native::string_at(message, "entryId"); id && !id->empty()) ids.push_back(std::move(*id));
  }
  return ids;
}

std::optional<std::string> entry_after(const std::vector<std::string>& entries, const std::string& through) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i] != through) continue;
    return i + 1 < entries.size() ? entries[i + 1] : std::string();
  }
  return std::nullopt;
}

json mcp_registrations(const std::vector<protocol::McpServer>& servers) {
  json registrations = json::object();
  for (const auto& server : servers) {
    json config{{"exposure", "direct"}};
    if (server.transport == protocol::McpTransport::Stdio) {
      config["command"] = server.command.value_or("");
      config["args"] = server.args.value_or(std::vector<std::string>{});
      // Pi is given no credentials of ours (its own login or provider variables stay the user's): nothing to hide.
      config["env"] = stdio_server_environment(server, {});
    } else {
      config["url"] = server.url.value_or("");
      if (server.headers && server.headers->is_object()) config["headers"] = *server.headers;
    }
    registrations[server.name] = std::move(config);
  }
  return registrations;
}

std::vector<protocol::McpServerState> mcp_states(const std::vector<protocol::McpServer>& servers, std::string_view status_text) {
  const auto lines = status_lines(status_text);
  std::vector<protocol::McpServerState> states;
  for (const auto& server : servers) {
    protocol::McpServerState state;
    state.name = server.name;
    state.transport = server.transport;
    const auto found = lines.find(server.name);
    if (found == lines.end()) {
      state.status = protocol::McpServerStatusKind::Failed;
      state.error = "Pi did not take this server (its name or configuration was refused)";
    } else if (found->second.state.starts_with("connected")) {
      state.status = protocol::McpServerStatusKind::Connected;
      state.tools = tool_count(found->second.state);
    } else if (found->second.state.starts_with("failed") || found->second.state.starts_with("needs sign-in") ||
               found->second.state.starts_with("disabled")) {
      state.status = protocol::McpServerStatusKind::Failed;
      const auto& detail = found->second.detail;
      state.error = detail.empty() ? found->second.state : detail;
    } else {
      state.status = protocol::McpServerStatusKind::Pending;
    }
    states.push_back(std::move(state));
  }
  return states;
}

}  // namespace switchboard::adapters::pi
