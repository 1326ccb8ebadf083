#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "acp/AcpAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::acp {

// Any ACP agent, named in the daemon's configuration (agents.acp.*: a display name, an executable, its
// arguments and environment): sessions of agent "acp" run it through the same adapter as Grok Build.
std::span<const config::AgentSettingSpec> configured_acp_settings();
// nullopt when agents.acp.bin is not set (no ACP agent is configured).
std::optional<AcpConfig> configured_acp_config(const config::AgentSettings& settings);
// The ACP agents a user names in the config file, one table each: [acp_agents.<name>] with the same keys (bin,
// args, env, name, default_model). Each is an agent of its own, named <name> in agents.list.
inline constexpr std::string_view kNamedAcpTable = "acp_agents";
std::span<const config::AgentSettingSpec> named_acp_settings();
// Agent `name` of those tables: its ACP agent, or (no bin) one that reports itself not installed.
AgentDescriptor named_acp_agent(boost::asio::io_context& io, const config::AgentSettings& settings, const std::string& name);
// The descriptor registered under "acp": the configured agent, or one that reports itself not installed and says
// which keys configure it.
AgentDescriptor configured_acp_agent(boost::asio::io_context& io, std::optional<AcpConfig> config);

}  // namespace switchboard::adapters::acp
