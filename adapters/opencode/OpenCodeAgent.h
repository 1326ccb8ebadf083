#pragma once

#include <filesystem>
#include <span>

#include <boost/asio/io_context.hpp>

#include "opencode/OpenCodeRuntime.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::opencode {

// OpenCode's keys (agents.opencode.*), for the setting table (adapters/BuiltinAgents.h).
std::span<const config::AgentSettingSpec> opencode_settings();
// The configuration those keys give; what they leave unset keeps OpenCodeConfig's defaults.
OpenCodeConfig opencode_config(const config::AgentSettings& settings);

// The descriptor the engine registers under "opencode": its runtime holds the one `opencode serve`.
AgentDescriptor opencode_agent(boost::asio::io_context& io, OpenCodeConfig config);

}  // namespace switchboard::adapters::opencode
