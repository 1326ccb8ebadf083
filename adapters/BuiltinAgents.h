#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters {

// The one place that lists the agents this binary hosts. Each entry brings its adapter's own configuration keys
// (agents.<name>.*) and builds its descriptor from their merged values; main.cpp and src/config name no agent.
// Adding an agent is one entry here (docs/architecture.md, "Adding an agent").

// What every agent's factory gets besides its own keys' values.
struct AgentContext {
  boost::asio::io_context& io;
  std::filesystem::path exec_shim;  // the daemon's own binary: children die with it (process/ExecShim.h)
  const config::AgentSettings& settings;
};

struct BuiltinAgent {
  std::string_view name;  // as agents.list and session.create name it
  std::span<const config::AgentSettingSpec> (*settings)();
  AgentDescriptor (*make)(const AgentContext& context);
};

std::span<const BuiltinAgent> builtin_agent_entries();

// Every agent's keys, in the registry's order: what the setting table is built with.
std::vector<config::AgentSettingSpec> builtin_agent_settings();

// Every agent's descriptor, configured from the merged `settings`.
std::vector<AgentDescriptor> builtin_agents(boost::asio::io_context& io, const config::AgentSettings& settings,
                                            const std::filesystem::path& exec_shim);

}  // namespace switchboard::adapters
