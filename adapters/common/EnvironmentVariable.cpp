#include "common/EnvironmentVariable.h"

#include "common/ChildEnvironment.h"

#include <cstdlib>

#include "switchboard/process/ExecutableLookup.h"

namespace switchboard::adapters {

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string executable_search_path() {
  return environment_variable("PATH").value_or(std::string(process::default_search_path()));
}

process::Environment environment_with(const EnvironmentChanges& changes) {
  auto environment = process::Environment::from_daemon();
  for (const auto& name : changes.unset) environment.unset(name);
  for (const auto& [name, value] : changes.set) environment.set(name, value);
  return environment;
}

}  // namespace switchboard::adapters
