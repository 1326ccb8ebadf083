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
// clang-format on

std::vector<std::string> list_at(const config::AgentSettings& settings, std::string_view key) {
  const auto* value = settings.find(key);
  if (value == nullptr || !std::holds_alternative<std::vector<std::string>>(*value)) return {};
  return std::get<std::vector<std::string>>(*value);
}

}  // namespace

std::span<const config::AgentSettingSpec> configured_acp_settings() { return kSettings; }

std::optional<AcpConfig> configured_acp_config(const config::AgentSettings& settings, const std::filesystem::path& exec_shim) {
  auto bin = settings.text("agents.acp.bin");
  if (!bin) return std::nullopt;
  AcpConfig config;
  config.agent = "acp";
  config.display_name = settings.text("agents.acp.name").value_or("ACP agent");
  config.executable = *bin;
  config.arguments = list_at(settings, "agents.acp.args");
  for (const auto& assignment : list_at(settings, "agents.acp.env")) {
    const auto equals = assignment.find('=');
    // A bare NAME removes the variable from what the agent inherits.
    if (equals == std::string::npos) {
      config.environment.unset.push_back(assignment);
    } else {
      config.environment.set.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
    }
  }
  config.exec_shim = exec_shim;
  return config;
}

AgentDescriptor configured_acp_agent(boost::asio::io_context& io, std::optional<AcpConfig> config) {
  if (config) return acp_agent(io, std::move(*config));
  AgentDescriptor descriptor;
  descriptor.name = "acp";
  descriptor.discover = [] {
    protocol::AgentInfo info;
    info.agent = "acp";
    info.installed = false;
    info.problem = "no ACP agent is configured (set agents.acp.bin, and agents.acp.args and agents.acp.env as it needs: "
                   "docs/agents/acp.md)";
    info.capabilities = AcpAdapter::static_capabilities();
    return info;
  };
  descriptor.create = [&io](AdapterListener& listener) {
    AcpConfig none;
    none.executable = "";
    return std::make_unique<AcpAdapter>(io, listener, std::move(none));
  };
  return descriptor;
}

}  // namespace switchboard::adapters::acp
