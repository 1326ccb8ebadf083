#include "acp/AcpControls.h"

#include <algorithm>

#include "common/McpServers.h"
#include "common/NativeJson.h"

namespace switchboard::adapters::acp {

using nlohmann::json;
using native::string_or_empty;

namespace {

std::optional<protocol::PlanEntryPriority> priority_of(std::string_view priority) {
  if (priority == "high") return protocol::PlanEntryPriority::High;
  if (priority == "medium") return protocol::PlanEntryPriority::Medium;
  if (priority == "low") return protocol::PlanEntryPriority::Low;
  return std::nullopt;
}

protocol::PlanEntryStatus status_of(std::string_view status) {
  if (status == "pending") return protocol::PlanEntryStatus::Pending;
  if (status == "in_progress") return protocol::PlanEntryStatus::InProgress;
  return protocol::PlanEntryStatus::Completed;
}

// A select option's choices: a flat list of {value, name, description}, or groups of them ({group, name, options}).
void add_values(const json& choices, std::vector<protocol::SessionOptionValue>& values) {
  if (!choices.is_array()) return;
  for (const auto& choice : choices) {
    if (const auto* grouped = native::array_at(choice, "options")) {
      add_values(*grouped, values);
      continue;
    }
    auto value = native::string_at(choice, "value");
    if (!value) continue;
    protocol::SessionOptionValue offered;
    offered.value = *value;
    offered.name = native::string_at(choice, "name");
    offered.description = native::string_at(choice, "description");
    values.push_back(std::move(offered));
  }
}

json name_value_list(const std::optional<json>& object) {
  json list = json::array();
  if (!object || !object->is_object()) return list;
  for (const auto& [name, value] : object->items()) {
    if (value.is_string()) list.push_back({{"name", name}, {"value", value}});
  }
  return list;
}

}  // namespace

std::vector<protocol::PlanEntry> plan_entries(const json& entries) {
  std::vector<protocol::PlanEntry> plan;
  if (!entries.is_array()) return plan;
  for (const auto& entry : entries) {
    if (!entry.is_object()) continue;
    protocol::PlanEntry ours;
    ours.content = string_or_empty(entry, "content");
    ours.status = status_of(string_or_empty(entry, "status"));
    ours.priority = priority_of(string_or_empty(entry, "priority"));
    plan.push_back(std::move(ours));
  }
  return plan;
}

std::vector<protocol::AgentCommand> offered_commands(const json& available, const std::vector<std::string>& hidden) {
  std::vector<protocol::AgentCommand> commands;
  if (!available.is_array()) return commands;
  for (const auto& command : available) {
    auto name = native::string_at(command, "name");
    if (!name || name->empty() || std::find(hidden.begin(), hidden.end(), *name) != hidden.end()) continue;
    protocol::AgentCommand ours;
    ours.name = *name;
    ours.description = native::string_at(command, "description");
    if (const auto* input = native::object_at(command, "input")) ours.argument_hint = native::string_at(*input, "hint");
    commands.push_back(std::move(ours));
  }
  return commands;
}

OfferedOptions offered_options(const json& config_options) {
  OfferedOptions offered;
  if (!config_options.is_array()) return offered;
  for (const auto& option : config_options) {
    const auto config_id = native::string_at(option, "id");
    const std::string category = string_or_empty(option, "category");
    if (!config_id || config_id->empty() || category == "model" || category == "mode") continue;
    protocol::SessionOption ours;
    ours.id = category == "thought_level" && !offered.config_ids.contains(std::string(kEffortOption)) ? std::string(kEffortOption) : *config_id;
    ours.name = native::string_at(option, "name");
    ours.description = native::string_at(option, "description");
    const std::string type = string_or_empty(option, "type");
    const auto* current = native::member(option, "currentValue");
    if (type == "boolean") {
      ours.kind = protocol::SessionOptionKind::Boolean;
      ours.values = {protocol::SessionOptionValue{"true", {}, {}}, protocol::SessionOptionValue{"false", {}, {}}};
      ours.current_value = current != nullptr && current->is_boolean() && current->get<bool>() ? "true" : "false";
    } else if (type == "select") {
      ours.kind = protocol::SessionOptionKind::Select;
      if (const auto* choices = native::member(option, "options")) add_values(*choices, ours.values);
      ours.current_value = current != nullptr && current->is_string() ? current->get<std::string>() : std::string();
    } else {
      continue;  // a kind of option ACP may add later: nothing we could offer a value for
    }
    if (offered.config_ids.contains(ours.id)) continue;  // two options named alike: the first one is ours
    offered.config_ids[ours.id] = *config_id;
    offered.options.push_back(std::move(ours));
  }
  return offered;
}

json config_value(const protocol::SessionOption& option, const std::string& value) {
  if (option.kind == protocol::SessionOptionKind::Boolean) return value == "true";
  return value;
}

json mcp_servers_param(const std::vector<protocol::McpServer>& servers, bool http_ok, const std::vector<std::string>& hidden_variables,
                       std::vector<protocol::McpServerState>& refused) {
  json param = json::array();
  for (const auto& server : servers) {
    if (server.transport == protocol::McpTransport::Http) {
      if (!http_ok) {
        refused.push_back(protocol::McpServerState{server.name, server.transport, protocol::McpServerStatusKind::Failed,
                                                   "the agent takes no MCP servers over HTTP (its mcpCapabilities say so)", std::nullopt});
        continue;
      }
      param.push_back({{"type", "http"}, {"name", server.name}, {"url", server.url.value_or("")}, {"headers", name_value_list(server.headers)}});
      continue;
    }
    param.push_back({{"name", server.name},
                     {"command", server.command.value_or("")},
                     {"args", server.args.value_or(std::vector<std::string>{})},
                     {"env", name_value_list(stdio_server_environment(server, hidden_variables))}});
  }
  return param;
}

protocol::McpServerStatusKind mcp_status_of(std::string_view status) {
  if (status == "ready" || status == "connected" || status == "initialized") return protocol::McpServerStatusKind::Connected;
  if (status == "failed" || status == "error" || status == "disconnected" || status == "closed") return protocol::McpServerStatusKind::Failed;
  return protocol::McpServerStatusKind::Pending;
}

}  // namespace switchboard::adapters::acp
