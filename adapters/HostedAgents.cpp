#include "BuiltinAgents.h"

// `switchboard` hosts the built-in agents (a test daemon links its own definition instead).
namespace switchboard::adapters {

std::span<const AgentRegistration> hosted_agent_entries() { return builtin_agent_entries(); }

}  // namespace switchboard::adapters
