#include "BuiltinAgents.h"

#include <array>

#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"
#include "opencode/OpenCodeAgent.h"
#include "pi/PiAgent.h"

namespace switchboard::adapters {
namespace {

AgentDescriptor make_pi(const AgentContext& context) {
  return pi::pi_agent(context.io, pi::pi_config(context.settings, context.exec_shim));
}

AgentDescriptor make_claude(const AgentContext& context) {
  return claude::claude_code_agent(context.io, claude::claude_code_config(context.settings, context.exec_shim));
}

AgentDescriptor make_codex(const AgentContext& context) {
  return codex::codex_agent(context.io, codex::codex_config(context.settings, context.exec_shim));
}

AgentDescriptor make_opencode(const AgentContext& context) {
  return opencode::opencode_agent(context.io, opencode::opencode_config(context.settings, context.exec_shim));
}

const std::array kBuiltinAgents{
    AgentRegistration{"claude", &claude::claude_code_settings, &make_claude},
    AgentRegistration{"codex", &codex::codex_settings, &make_codex},
    AgentRegistration{"opencode", &opencode::opencode_settings, &make_opencode},
    AgentRegistration{"pi", &pi::pi_settings, &make_pi},
};

}  // namespace

std::span<const AgentRegistration> builtin_agent_entries() { return kBuiltinAgents; }

std::vector<config::AgentSettingSpec> settings_of(std::span<const AgentRegistration> agents) {
  std::vector<config::AgentSettingSpec> specs;
  for (const auto& agent : agents) {
    const auto own = agent.settings();
    specs.insert(specs.end(), own.begin(), own.end());
  }
  return specs;
}

std::vector<AgentDescriptor> descriptors_of(std::span<const AgentRegistration> agents, boost::asio::io_context& io,
                                            const config::AgentSettings& settings, const std::filesystem::path& exec_shim) {
  const AgentContext context{io, exec_shim, settings};
  std::vector<AgentDescriptor> descriptors;
  descriptors.reserve(agents.size());
  for (const auto& agent : agents) descriptors.push_back(agent.make(context));
  return descriptors;
}

}  // namespace switchboard::adapters
