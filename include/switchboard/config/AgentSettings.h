#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace switchboard::config {

// What an adapter sees of the configuration system: it declares its own keys (agents.<agent>.*) with
// AgentSettingSpec, the registry (adapters/BuiltinAgents.h) hands the declarations to the setting table, and the
// merged values come back as AgentSettings. The daemon's own keys (src/config/SettingTable.cpp) use the same
// kinds and values; neither src/config nor main.cpp names an agent.

enum class Kind {
  Text,      // a non-empty string
  Path,      // a non-empty string; in the config file an absolute path or ~/...
  Integer,   // within [min, max]
  Boolean,
  Choice,    // one of `choices`
  List,      // strings: repeated flags, a comma-separated variable, an array in the file
  Duration,  // "500ms", "90s", "30m", "2h"; stored in milliseconds within [min, max]
};

using Value = std::variant<std::string, std::int64_t, bool, std::vector<std::string>>;

// One key an agent declares. The strings must outlive the daemon's configuration (string literals).
struct AgentSettingSpec {
  std::string_view key;   // dotted, as in the config file: "agents.codex.bin"
  std::string_view flag;  // "--codex-bin"; empty: not settable on the command line (a secret would show in `ps`)
  std::string_view env;   // "SWITCHBOARD_CODEX_BIN"
  Kind kind = Kind::Text;
  std::string_view help;
  // The default, written as a variable would give it; empty: the key is unset unless a layer sets it.
  std::string_view fallback{};
  // A Path key whose default is this name inside data_dir (derived after the merge, so a data_dir from any
  // layer moves it too); empty: no such default.
  std::string_view fallback_in_data_dir{};
  bool secret = false;  // never printed
  // Integer and Duration keys: the range a value must lie in (a Duration's in milliseconds).
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// The merged values of the agents' keys, by key. A key is absent when no layer set it and it has no default.
class AgentSettings {
 public:
  std::optional<std::string> text(std::string_view key) const {
    const auto it = m_values.find(key);
    if (it == m_values.end() || !std::holds_alternative<std::string>(it->second)) return std::nullopt;
    return std::get<std::string>(it->second);
  }
  std::optional<std::int64_t> integer(std::string_view key) const {
    const auto it = m_values.find(key);
    if (it == m_values.end() || !std::holds_alternative<std::int64_t>(it->second)) return std::nullopt;
    return std::get<std::int64_t>(it->second);
  }
  const Value* find(std::string_view key) const {
    const auto it = m_values.find(key);
    return it == m_values.end() ? nullptr : &it->second;
  }
  void set(std::string_view key, Value value) { m_values.insert_or_assign(std::string(key), std::move(value)); }
  void erase(std::string_view key) {
    if (const auto it = m_values.find(key); it != m_values.end()) m_values.erase(it);
  }
  const std::map<std::string, Value, std::less<>>& values() const { return m_values; }

  bool operator==(const AgentSettings&) const = default;

 private:
  std::map<std::string, Value, std::less<>> m_values;
};

}  // namespace switchboard::config
