#pragma once

#include <filesystem>
#include <optional>
#include <span>

#include <boost/asio/io_context.hpp>

#include "acp/AcpAdapter.h"
#include "grok/GrokLaunch.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::grok {

// Grok Build as the first configured ACP agent: its launch (`grok agent --no-leader stdio`), its provider and
// private GROK_HOME (GrokLaunch.h); the protocol is the generic ACP adapter's (adapters/acp).
struct GrokConfig {
  std::string executable = "grok";
  std::optional<GrokProvider> provider;  // none: the user's own GROK_HOME
};

// Grok's keys (agents.grok.*), for the setting table (adapters/BuiltinAgents.h).
std::span<const config::AgentSettingSpec> grok_settings();
// The configuration those keys give: a provider only when agents.grok.provider.base_url is set.
GrokConfig grok_config(const config::AgentSettings& settings);
// What the ACP adapter runs for it.
acp::AcpConfig acp_config_for(GrokConfig config);

// The descriptor the engine registers under "grok".
AgentDescriptor grok_agent(boost::asio::io_context& io, GrokConfig config);

}  // namespace switchboard::adapters::grok
