#pragma once

#include <filesystem>
#include <span>

#include <boost/asio/io_context.hpp>

#include "pi/PiRuntime.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::pi {

// Pi's keys (agents.pi.*), for the setting table (adapters/BuiltinAgents.h).
std::span<const config::AgentSettingSpec> pi_settings();
// The configuration those keys give; what they leave unset keeps PiConfig's defaults.
PiConfig pi_config(const config::AgentSettings& settings);

// The descriptor the engine registers under "pi": its runtime finds Pi and the Node that runs it.
AgentDescriptor pi_agent(boost::asio::io_context& io, PiConfig config);

}  // namespace switchboard::adapters::pi
