#include "BuiltinAgents.h"

#include <array>

#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"

namespace switchboard::adapters {
namespace {

AgentDescriptor make_claude(const AgentContext& context) {
  return claude::claude_code_agent(context.io, claude::claude_code_config(context.settings, context.exec_shim));
}

AgentDescriptor make_codex(const AgentContext& context) {
  return codex::codex_agent(context.io, codex::codex_config(context.settings, context.exec_shim));
}

const std::array kBuiltinAgents{
    BuiltinAgent{"claude", &claude::claude_code_settings, &make_claude},
    BuiltinAgent{"codex", &codex::codex_settings, &make_codex},
};

}  // namespace

std::span<const BuiltinAgent> builtin_agent_entries() { return kBuiltinAgents; }

std::vector<config::AgentSettingSpec> builtin_agent_settings() {
  std::vector<config::AgentSettingSpec> specs;
  for (const auto& agent : kBuiltinAgents) {
    const auto own = agent.settings();
    specs.insert(specs.end(), own.begin(), own.end());
  }
  return specs;
}

std::vector<AgentDescriptor> builtin_agents(boost::asio::io_context& io, const config::AgentSettings& settings,
                                            const std::filesystem::path& exec_shim) {
  const AgentContext context{io, exec_shim, settings};
  std::vector<AgentDescriptor> agents;
  agents.reserve(kBuiltinAgents.size());
  for (const auto& agent : kBuiltinAgents) agents.push_back(agent.make(context));
  return agents;
}

}  // namespace switchboard::adapters
