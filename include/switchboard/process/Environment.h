#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchboard::process {

// The exact environment a child process gets. Nothing is inherited implicitly: a spawn passes only what this
// holds, so what an agent CLI sees is decided here, in one place, by the adapter.
//
// Start from `empty()` or from `from_daemon()`, a copy of the daemon's own environment minus everything named
// SWITCHBOARD_* (the daemon's configuration and, when a client exported it, its API token). Then set and unset
// variables.
//
// SECURITY: never put the daemon's API token (or anything derived from it) into a child's environment. Agent
// CLIs run arbitrary tools and model-written shell commands; anything in their environment is readable by those
// and must be assumed leaked. If a future variable must be kept from children, drop it in from_daemon() too.
class Environment {
 public:
  // The prefix from_daemon() drops: the daemon's own variables, SWITCHBOARD_TOKEN among them.
  static constexpr std::string_view kDaemonPrefix = "SWITCHBOARD_";

  static Environment empty() { return Environment(); }
  // The daemon's current environment (`environ`) without the variables named kDaemonPrefix*.
  static Environment from_daemon();
  // Parses "NAME=value" entries (an `environ`-style array, null-terminated); entries without '=' are skipped.
  static Environment from_entries(const char* const* entries);

  // Names must be non-empty and contain neither '=' nor NUL, and values no NUL; the spawn checks this and fails
  // with InvalidSpec rather than truncating silently.
  Environment& set(std::string name, std::string value);
  Environment& unset(std::string_view name);
  // Removes every variable whose name starts with `prefix` (e.g. "SWITCHBOARD_", "AWS_").
  Environment& unset_prefix(std::string_view prefix);
  // Keeps only the variables for which `keep(name)` is true.
  template <class Predicate>
  Environment& retain_if(Predicate keep) {
    std::erase_if(m_variables, [&](const auto& entry) { return !keep(std::string_view(entry.first)); });
    return *this;
  }

  std::optional<std::string> get(std::string_view name) const;
  bool contains(std::string_view name) const { return m_variables.find(name) != m_variables.end(); }
  std::size_t size() const { return m_variables.size(); }

  // The first invalid name or value, described (for the spawn's InvalidSpec error); nullopt when all are valid.
  std::optional<std::string> validate() const;
  // "NAME=value" strings, sorted by name: what execve's envp points into.
  std::vector<std::string> entries() const;

 private:
  std::map<std::string, std::string, std::less<>> m_variables;
};

}  // namespace switchboard::process
