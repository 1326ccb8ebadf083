#include "BuiltinAgents.h"

#include <array>

#include "acp/ConfiguredAcpAgent.h"
#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"
#include "grok/GrokAgent.h"
#include "opencode/OpenCodeAgent.h"
#include "pi/PiAgent.h"
#include "replay/ReplayAgent.h"

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

AgentDescriptor make_grok(const AgentContext& context) {
  return grok::grok_agent(context.io, grok::grok_config(context.settings, context.exec_shim));
}

AgentDescriptor make_acp(const AgentContext& context) {
  return acp::configured_acp_agent(context.io, acp::configured_acp_config(context.settings, context.exec_shim));
}

AgentDescriptor make_replay(const AgentContext& context) {
  return replay::replay_agent(context.io, context.settings, context.exec_shim);
}

const std::array kBuiltinAgents{
    AgentRegistration{"claude", &claude::claude_code_settings, &make_claude},
    AgentRegistration{"codex", &codex::codex_settings, &make_codex},
    AgentRegistration{"opencode", &opencode::opencode_settings, &make_opencode},
    AgentRegistration{"pi", &pi::pi_settings, &make_pi},
    AgentRegistration{"grok", &grok::grok_settings, &make_grok},
    AgentRegistration{"acp", &acp::configured_acp_settings, &make_acp},
    AgentRegistration{"replay", &replay::replay_settings, &make_replay, &replay::replay_enabled},
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
  for (const auto& agent : agents) {
    if (agent.enabled == nullptr || agent.enabled(settings)) descriptors.push_back(agent.make(context));
  }
  return descriptors;
}

}  // namespace switchboard::adapters
