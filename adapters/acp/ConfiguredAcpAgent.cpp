#include "acp/ConfiguredAcpAgent.h"

#include <array>

namespace switchboard::adapters::acp {
namespace {

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.acp.bin", "--acp-bin", "SWITCHBOARD_ACP_BIN", config::Kind::Text,
                           "the executable of an ACP agent of your own (agent \"acp\"): a path, or a name looked up "
                           "on PATH; unset: none"},
  config::AgentSettingSpec{"agents.acp.args", "--acp-arg", "SWITCHBOARD_ACP_ARGS", config::Kind::List,
                           "its arguments, e.g. [\"acp\"] for `opencode acp`"},
  config::AgentSettingSpec{"agents.acp.env", "", "SWITCHBOARD_ACP_ENV", config::Kind::List,
                           "NAME=VALUE variables added to its environment (may hold secrets: never printed)", {}, {},
                           /*secret=*/true},
  config::AgentSettingSpec{"agents.acp.name", "--acp-name", "SWITCHBOARD_ACP_NAME", config::Kind::Text,
                           "how messages name it", "ACP agent"},
  config::AgentSettingSpec{"agents.acp.default_model", "--acp-default-model", "SWITCHBOARD_ACP_DEFAULT_MODEL",
                           config::Kind::Text, "model of every turn that names none (one of the agent's model ids)"},
};
// The same keys for each ACP agent a user names in the config file: [acp_agents.<name>].
const std::array kNamedSettings{
  config::AgentSettingSpec{"acp_agents.<name>.bin", "", "", config::Kind::Text,
                           "the executable of ACP agent <name>: a path, or a name looked up on PATH"},
  config::AgentSettingSpec{"acp_agents.<name>.args", "", "", config::Kind::List, "its arguments"},
  config::AgentSettingSpec{"acp_agents.<name>.env", "", "", config::Kind::List,
                           "NAME=VALUE variables added to its environment (may hold secrets: never printed)", {}, {},
                           /*secret=*/true},
  config::AgentSettingSpec{"acp_agents.<name>.name", "", "", config::Kind::Text, "how messages name it (default: <name>)"},
  config::AgentSettingSpec{"acp_agents.<name>.default_model", "", "", config::Kind::Text,
                           "model of every turn that names none (one of the agent's model ids)"},
};
// clang-format on

std::vector<std::string> list_at(const config::AgentSettings& settings, std::string_view key) {
  const auto* value = settings.find(key);
  if (value == nullptr || !std::holds_alternative<std::vector<std::string>>(*value)) return {};
  return std::get<std::vector<std::string>>(*value);
}

// The agent `agent` of the keys under `table` (agents.acp, acp_agents.gemini); nullopt without a bin.
std::optional<AcpConfig> config_at(const config::AgentSettings& settings, const std::string& table, const std::string& agent,
                                   const std::string& display_name) {
  auto bin = settings.text(table + ".bin");
  if (!bin) return std::nullopt;
  AcpConfig config;
  config.agent = agent;
  config.display_name = settings.text(table + ".name").value_or(display_name);
  config.executable = *bin;
  config.arguments = list_at(settings, table + ".args");
  for (const auto& assignment : list_at(settings, table + ".env")) {
    const auto equals = assignment.find('=');
    // A bare NAME removes the variable from what the agent inherits.
    if (equals == std::string::npos) {
      config.environment.unset.push_back(assignment);
    } else {
      config.environment.set.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
    }
  }
  return config;
}

// An agent named in the configuration but not runnable: listed as not installed, with what to set.
AgentDescriptor unconfigured_agent(boost::asio::io_context& io, const std::string& agent, const std::string& problem) {
  AgentDescriptor descriptor;
  descriptor.name = agent;
  descriptor.discover = [agent, problem] {
    protocol::AgentInfo info;
    info.agent = agent;
    info.installed = false;
    info.problem = problem;
    info.capabilities = AcpAdapter::static_capabilities();
    return info;
  };
  descriptor.create = [&io, agent](AdapterListener& listener) {
    AcpConfig none;
    none.agent = agent;
    none.executable = "";
    return std::make_unique<AcpAdapter>(io, listener, std::move(none));
  };
  return descriptor;
}

}  // namespace

std::span<const config::AgentSettingSpec> configured_acp_settings() { return kSettings; }
std::span<const config::AgentSettingSpec> named_acp_settings() { return kNamedSettings; }

std::optional<AcpConfig> configured_acp_config(const config::AgentSettings& settings) {
  return config_at(settings, "agents.acp", "acp", "ACP agent");
}

AgentDescriptor named_acp_agent(boost::asio::io_context& io, const config::AgentSettings& settings, const std::string& name) {
  const std::string table = std::string(kNamedAcpTable) + "." + name;
  if (auto config = config_at(settings, table, name, name)) {
    config->install_hint = "(check " + table + ".bin in the config file: a path, or a name on PATH)";
    return acp_agent(io, std::move(*config));
  }
  return unconfigured_agent(io, name, "ACP agent " + name + " has no command: set " + table +
                                          ".bin in the config file (docs/agents/acp.md)");
}

AgentDescriptor configured_acp_agent(boost::asio::io_context& io, std::optional<AcpConfig> config) {
  if (config) return acp_agent(io, std::move(*config));
  return unconfigured_agent(io, "acp",
                            "no ACP agent is configured (set agents.acp.bin, and agents.acp.args and agents.acp.env as "
                            "it needs: docs/agents/acp.md)");
}

}  // namespace switchboard::adapters::acp
