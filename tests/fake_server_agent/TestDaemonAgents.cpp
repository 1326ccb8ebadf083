#include <vector>

#include "BuiltinAgents.h"
#include "controls_agent/ControlsAgent.h"
#include "fake_server_agent/FakeServerAgent.h"

// The test daemon (`switchboard_test_daemon`: src/main.cpp with this list) hosts the built-in agents and the
// fake server agent, so the shared conformance scenarios can run an adapter built from the kit alone, and the
// controls agents (controls_agent/), which the web console's browser tests drive.
namespace switchboard::adapters {

namespace {

AgentDescriptor make_fake_server(const AgentContext& context) {
  return testing::fake_server::fake_server_agent(context.io, context.settings);
}

std::span<const config::AgentSettingSpec> no_settings() { return {}; }
AgentDescriptor make_controls(const AgentContext& context) { return testing::controls::controls_agent(context.io); }
AgentDescriptor make_bare_controls(const AgentContext& context) { return testing::controls::bare_controls_agent(context.io); }

}  // namespace

std::span<const AgentRegistration> hosted_agent_entries() {
  static const std::vector<AgentRegistration> agents = [] {
    const auto builtin = builtin_agent_entries();
    std::vector<AgentRegistration> all(builtin.begin(), builtin.end());
    all.push_back(AgentRegistration{"fakeserver", &testing::fake_server::fake_server_settings, &make_fake_server});
    all.push_back(AgentRegistration{"controls", &no_settings, &make_controls});
    all.push_back(AgentRegistration{"controls-bare", &no_settings, &make_bare_controls});
    return all;
  }();
  return agents;
}

}  // namespace switchboard::adapters
