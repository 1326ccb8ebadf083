#include "BuiltinAgents.h"

#include <array>
#include <map>
#include <set>

#include "switchboard/config/NamedKeys.h"

#include "acp/ConfiguredAcpAgent.h"
#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"
#include "grok/GrokAgent.h"
#include "opencode/OpenCodeAgent.h"
#include "pi/PiAgent.h"
#include "replay/ClaudeReplay.h"
#include "replay/ReplayAgent.h"

namespace switchboard::adapters {
namespace {

AgentDescriptor make_pi(const AgentContext& context) {
  return pi::pi_agent(context.io, pi::pi_config(context.settings));
}

AgentDescriptor make_claude(const AgentContext& context) {
  return claude::claude_code_agent(context.io, claude::claude_code_config(context.settings));
}

AgentDescriptor make_codex(const AgentContext& context) {
  return codex::codex_agent(context.io, codex::codex_config(context.settings));
}

AgentDescriptor make_opencode(const AgentContext& context) {
  return opencode::opencode_agent(context.io, opencode::opencode_config(context.settings));
}

AgentDescriptor make_grok(const AgentContext& context) {
  return grok::grok_agent(context.io, grok::grok_config(context.settings));
}

AgentDescriptor make_acp(const AgentContext& context) {
  return acp::configured_acp_agent(context.io, acp::configured_acp_config(context.settings));
}

AgentDescriptor make_named_acp(const AgentContext& context, const std::string& name) {
  return acp::named_acp_agent(context.io, context.settings, name);
}

AgentDescriptor make_replay(const AgentContext& context) {
  return replay::replay_agent(context.io, context.settings, context.self_executable);
}

const std::array kBuiltinAgents{
    AgentRegistration{"claude", &claude::claude_code_settings, &make_claude},
    AgentRegistration{"codex", &codex::codex_settings, &make_codex},
    AgentRegistration{"opencode", &opencode::opencode_settings, &make_opencode},
    AgentRegistration{"pi", &pi::pi_settings, &make_pi},
    AgentRegistration{"grok", &grok::grok_settings, &make_grok},
    AgentRegistration{"acp", &acp::configured_acp_settings, &make_acp},
    AgentRegistration{.name = "replay",
                      .settings = &replay::replay_settings,
                      .make = &make_replay,
                      .enabled = &replay::replay_enabled,
                      .helper_command = replay::kReplayClaudeCommand,
                      .run_helper = &replay::run_replay_claude},
    AgentRegistration{acp::kNamedAcpTable, &acp::named_acp_settings, nullptr, nullptr, &make_named_acp},
};

}  // namespace

std::span<const AgentRegistration> builtin_agent_entries() { return kBuiltinAgents; }

std::optional<int> run_agent_helper(std::span<const AgentRegistration> agents, int argc, char** argv) {
  if (argc < 2 || argv[1] == nullptr) return std::nullopt;
  const std::string_view command = argv[1];
  for (const auto& agent : agents) {
    if (agent.run_helper != nullptr && !agent.helper_command.empty() && agent.helper_command == command) {
      return agent.run_helper(argc, argv);
    }
  }
  return std::nullopt;
}

std::vector<config::AgentSettingSpec> settings_of(std::span<const AgentRegistration> agents) {
  std::vector<config::AgentSettingSpec> specs;
  for (const auto& agent : agents) {
    const auto own = agent.settings();
    specs.insert(specs.end(), own.begin(), own.end());
  }
  return specs;
}

std::vector<std::string> named_agents(const AgentRegistration& family, const config::AgentSettings& settings) {
  std::set<std::string> names;
  for (const auto& spec : family.settings()) {
    for (const auto& [key, value] : settings.values()) {
      if (auto name = config::named_segment(spec.key, key); name && config::key_matches(spec.key, key)) names.insert(*name);
    }
  }
  return {names.begin(), names.end()};
}

std::optional<NamedAgentProblem> check_named_agents(std::span<const AgentRegistration> agents,
                                                    const config::AgentSettings& settings) {
  std::map<std::string, std::string, std::less<>> taken;  // name → who has it
  for (const auto& agent : agents) {
    if (agent.make_named == nullptr) taken.emplace(std::string(agent.name), "a built-in agent");
  }
  for (const auto& family : agents) {
    if (family.make_named == nullptr) continue;
    for (const auto& name : named_agents(family, settings)) {
      const auto [at, added] = taken.emplace(name, std::string(family.name));
      if (added) continue;
      // A key of that name, for the origin.
      std::string key;
      for (const auto& spec : family.settings()) {
        for (const auto& [given, value] : settings.values()) {
          if (key.empty() && config::key_matches(spec.key, given) && config::named_segment(spec.key, given) == name) key = given;
        }
      }
      return NamedAgentProblem{key, std::string(family.name) + "." + name + ": the name \"" + name + "\" is taken by " +
                                        (at->second.starts_with("a built-in") ? at->second : "an agent of " + at->second) +
                                        "; choose another"};
    }
  }
  return std::nullopt;
}

std::vector<AgentDescriptor> descriptors_of(std::span<const AgentRegistration> agents, boost::asio::io_context& io,
                                            const config::AgentSettings& settings, const std::filesystem::path& self_executable) {
  const AgentContext context{io, self_executable, settings};
  std::vector<AgentDescriptor> descriptors;
  descriptors.reserve(agents.size());
  for (const auto& agent : agents) {
    if (agent.make_named != nullptr || (agent.enabled != nullptr && !agent.enabled(settings))) continue;
    descriptors.push_back(agent.make(context));
  }
  for (const auto& family : agents) {
    if (family.make_named == nullptr) continue;
    for (const auto& name : named_agents(family, settings)) descriptors.push_back(family.make_named(context, name));
  }
  return descriptors;
}

}  // namespace switchboard::adapters
