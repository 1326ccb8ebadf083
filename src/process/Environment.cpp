#include "switchboard/process/Environment.h"

#include <cstring>

extern char** environ;

namespace switchboard::process {

Environment Environment::from_entries(const char* const* entries) {
  Environment environment;
  if (entries == nullptr) return environment;
  for (const char* const* entry = entries; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    // "=C:=..." style entries (empty name) exist on some systems; they are not valid POSIX names.
    if (equals == std::string_view::npos || equals == 0) continue;
    // The first definition wins, as it does for getenv().
    environment.m_variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return environment;
}

Environment Environment::from_daemon() {
  Environment environment = from_entries(environ);
  environment.unset_prefix(kDaemonPrefix);
  return environment;
}

Environment& Environment::set(std::string name, std::string value) {
  m_variables.insert_or_assign(std::move(name), std::move(value));
  return *this;
}

Environment& Environment::unset(std::string_view name) {
  if (const auto found = m_variables.find(name); found != m_variables.end()) m_variables.erase(found);
  return *this;
}

Environment& Environment::unset_prefix(std::string_view prefix) {
  return retain_if([prefix](std::string_view name) { return !name.starts_with(prefix); });
}

std::optional<std::string> Environment::get(std::string_view name) const {
  const auto found = m_variables.find(name);
  if (found == m_variables.end()) return std::nullopt;
  return found->second;
}

std::optional<std::string> Environment::validate() const {
  for (const auto& [name, value] : m_variables) {
    if (name.empty()) return std::string("environment variable with an empty name");
    if (name.find('=') != std::string::npos || name.find('\0') != std::string::npos)
      return "environment variable name contains '=' or NUL: " + name.substr(0, name.find('\0'));
    // The value is not quoted: it may be a secret.
    if (value.find('\0') != std::string::npos) return "environment variable " + name + " has a NUL byte in its value";
  }
  return std::nullopt;
}

std::vector<std::string> Environment::entries() const {
  std::vector<std::string> out;
  out.reserve(m_variables.size());
  for (const auto& [name, value] : m_variables) out.push_back(name + "=" + value);
  return out;
}

}  // namespace switchboard::process
