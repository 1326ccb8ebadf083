#pragma once

#include <filesystem>
#include <optional>
#include <string>
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
  std::filesystem::path self_executable;  // the daemon's own binary (the replay agent runs it as its CLI)
  const config::AgentSettings& settings;
};

// One agent, or a family of agents the user names in the config file (`make_named` instead of `make`): each
// name under the family's table (acp_agents.<name>.*) is an agent of its own, built by `make_named`.
struct AgentRegistration {
  std::string_view name;  // as agents.list and session.create name it; a family: its config table ("acp_agents")
  std::span<const config::AgentSettingSpec> (*settings)();
  AgentDescriptor (*make)(const AgentContext& context);
  // Whether the agent is hosted with these settings (an agent that exists only when configured); none: always.
  bool (*enabled)(const config::AgentSettings& settings) = nullptr;
  AgentDescriptor (*make_named)(const AgentContext& context, const std::string& name) = nullptr;
  // A command the agent runs this binary as, in its CLI's place (`switchboard <helper_command> ...`; the replay
  // agent's stand-in for Claude Code), and its entry point. main() hands such a call over before anything else.
  std::string_view helper_command = {};
  int (*run_helper)(int argc, char** argv) = nullptr;
};

// Claude Code, Codex, ...: what `switchboard` ships.
std::span<const AgentRegistration> builtin_agent_entries();

// The agents this executable hosts. Defined once per executable: adapters/HostedAgents.cpp gives `switchboard`
// the built-in ones; a test daemon defines its own list (tests/fake_server_agent/TestDaemonAgents.cpp).
std::span<const AgentRegistration> hosted_agent_entries();

// A call of one of the agents' helper commands (argv[1] is its name): runs it and gives its exit code. None for
// every other call.
std::optional<int> run_agent_helper(std::span<const AgentRegistration> agents, int argc, char** argv);

// The agents' keys, in the given order: what the setting table is built with.
std::vector<config::AgentSettingSpec> settings_of(std::span<const AgentRegistration> agents);

// The names the settings give to a family's agents (acp_agents.gemini.bin → "gemini"), sorted.
std::vector<std::string> named_agents(const AgentRegistration& family, const config::AgentSettings& settings);

// What is wrong with the agents the settings name: a name taken by another agent. The key at fault (its origin
// says where it was written) and the message; none when all is well.
struct NamedAgentProblem {
  std::string key;
  std::string message;
};
std::optional<NamedAgentProblem> check_named_agents(std::span<const AgentRegistration> agents,
                                                    const config::AgentSettings& settings);

// The agents' descriptors, configured from the merged `settings`: the single agents', then each family's in
// name order.
std::vector<AgentDescriptor> descriptors_of(std::span<const AgentRegistration> agents, boost::asio::io_context& io,
                                            const config::AgentSettings& settings, const std::filesystem::path& self_executable);

}  // namespace switchboard::adapters
