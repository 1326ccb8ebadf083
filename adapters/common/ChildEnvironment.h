#pragma once

#include <string>
#include <utility>
#include <vector>

#include "switchboard/process/Environment.h"

namespace switchboard::adapters {

// What an adapter changes in the daemon's environment for its agent's process: variables to set (credentials,
// a private home, telemetry off) and variables to remove (ones that would change how the agent behaves under us).
struct EnvironmentChanges {
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<std::string> unset;
};

// The daemon's environment with `changes` applied (unset first, then set).
process::Environment environment_with(const EnvironmentChanges& changes);

}  // namespace switchboard::adapters
