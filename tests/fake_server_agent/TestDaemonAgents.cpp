#include <vector>

#include "BuiltinAgents.h"
#include "fake_server_agent/FakeServerAgent.h"

// The test daemon (`switchboard_test_daemon`: src/main.cpp with this list) hosts the built-in agents and the
// fake server agent, so the shared conformance scenarios can run an adapter built from the kit alone.
namespace switchboard::adapters {

namespace {

AgentDescriptor make_fake_server(const AgentContext& context) {
  return testing::fake_server::fake_server_agent(context.io, context.settings);
}

}  // namespace

std::span<const AgentRegistration> hosted_agent_entries() {
  static const std::vector<AgentRegistration> agents = [] {
    const auto builtin = builtin_agent_entries();
    std::vector<AgentRegistration> all(builtin.begin(), builtin.end());
    all.push_back(AgentRegistration{"fakeserver", &testing::fake_server::fake_server_settings, &make_fake_server});
    return all;
  }();
  return agents;
}

}  // namespace switchboard::adapters
