#pragma once

#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters {

// The registry: the one place that lists the agents this binary hosts. Each entry brings its adapter's own
// configuration keys (agents.<name>.*) and builds its descriptor from their merged values; main.cpp and
// src/config name no agent. Adding an agent is one entry in BuiltinAgents.cpp (docs/architecture.md, "Adding
// an agent").

// What every agent's factory gets besides its own keys' values.
struct AgentContext {
  boost::asio::io_context& io;
  std::filesystem::path exec_shim;  // the daemon's own binary: children die with it (process/ExecShim.h)
  const config::AgentSettings& settings;
};

struct AgentRegistration {
  std::string_view name;  // as agents.list and session.create name it
  std::span<const config::AgentSettingSpec> (*settings)();
  AgentDescriptor (*make)(const AgentContext& context);
  // Whether the agent is hosted with these settings (an agent that exists only when configured); none: always.
  bool (*enabled)(const config::AgentSettings& settings) = nullptr;
};

// Claude Code, Codex, ...: what `switchboard` ships.
std::span<const AgentRegistration> builtin_agent_entries();

// The agents this executable hosts. Defined once per executable: adapters/HostedAgents.cpp gives `switchboard`
// the built-in ones; a test daemon defines its own list (tests/fake_server_agent/TestDaemonAgents.cpp).
std::span<const AgentRegistration> hosted_agent_entries();

// The agents' keys, in the given order: what the setting table is built with.
std::vector<config::AgentSettingSpec> settings_of(std::span<const AgentRegistration> agents);

// The agents' descriptors, configured from the merged `settings`.
std::vector<AgentDescriptor> descriptors_of(std::span<const AgentRegistration> agents, boost::asio::io_context& io,
                                            const config::AgentSettings& settings, const std::filesystem::path& exec_shim);

}  // namespace switchboard::adapters
