#pragma once

#include <filesystem>
#include <span>

#include <boost/asio/io_context.hpp>

#include "acp/AcpAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::acp {

// Any ACP agent, named in the daemon's configuration (agents.acp.*: a display name, an executable, its
// arguments and environment): sessions of agent "acp" run it through the same adapter as Grok Build.
std::span<const config::AgentSettingSpec> configured_acp_settings();
// nullopt when agents.acp.bin is not set (no ACP agent is configured).
std::optional<AcpConfig> configured_acp_config(const config::AgentSettings& settings, const std::filesystem::path& exec_shim);
// The descriptor registered under "acp": the configured agent, or one that reports itself not installed and says
// which keys configure it.
AgentDescriptor configured_acp_agent(boost::asio::io_context& io, std::optional<AcpConfig> config);

}  // namespace switchboard::adapters::acp
