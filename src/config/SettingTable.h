#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/Settings.h"
#include "switchboard/config/AgentSettings.h"
#include "switchboard/config/NamedKeys.h"

namespace switchboard::config {

// The table of configurable keys: for each one its name in the config file, its command-line flag, its
// environment variable, what values it takes, and where its value is kept. Everything else (the file reader, the
// flag registration, `switchboard config`, the docs test) walks this table, so a key is added in one place: the
// daemon's own keys in SettingTable.cpp, an agent's keys in its adapter (AgentSettingSpec, handed over by the
// registry in adapters/BuiltinAgents.h).
// Kind and Value: switchboard/config/AgentSettings.h.

// Where a value is kept: a member of Settings, or (std::monostate) Settings::agents under the key.
using Member = std::variant<std::monostate, std::string Settings::*, std::optional<std::string> Settings::*,
                            std::int64_t Settings::*, bool Settings::*, std::vector<std::string> Settings::*>;

struct SettingSpec {
  std::string_view key;   // dotted, as in the config file: "http.port"
  std::string_view flag;  // "--port"; empty: not settable on the command line (a secret would show in `ps`)
  std::string_view env;   // "SWITCHBOARD_HTTP_PORT"
  Kind kind;
  Member member;
  std::string_view help;
  std::int64_t min = 0;
  std::int64_t max = 0;
  std::span<const std::string_view> choices{};
  bool secret = false;  // never printed
  // Agents' keys only (a Settings member's default is its initializer): see AgentSettingSpec.
  std::string_view fallback{};
  std::string_view fallback_in_data_dir{};
  // Lists only: what is wrong with one item, if anything (each item of every layer is checked with it).
  std::optional<std::string> (*check_item)(std::string_view item) = nullptr;
};

// The daemon's keys followed by the agents' (in the order given). The agents' declarations must outlive it.
class SettingTable {
 public:
  SettingTable();  // the daemon's own keys only
  explicit SettingTable(std::span<const AgentSettingSpec> agent_settings);

  std::span<const SettingSpec> specs() const { return m_specs; }
  // The spec of a key, a named one's too (acp_agents.gemini.bin finds "acp_agents.<name>.bin").
  const SettingSpec* find(std::string_view key) const;
  // The key or table nearest to a misspelt one (a few edits away), for "did you mean".
  std::optional<std::string> nearest(std::string_view key) const;
  // Settings with every default of the table (the Settings members' own, and the agents' fallbacks).
  Settings defaults() const;

 private:
  std::vector<SettingSpec> m_specs;
};

// Parsing a value as a flag or an environment variable gives it (lists: one item per flag, or the variable's
// comma-separated items). On failure, what was wrong ("expected an integer in 0..65535, got \"x\"").
std::variant<Value, std::string> parse_text(const SettingSpec& spec, const std::vector<std::string>& texts);
// Checks a value the config file gave (already of the right type) against the spec's range or choices;
// returns what is wrong.
std::optional<std::string> check_value(const SettingSpec& spec, const Value& value);

// Keeps `value` under `key`: the spec's own, or for a named spec one of the keys it stands for.
void assign(Settings& settings, const SettingSpec& spec, const Value& value);
void assign(Settings& settings, const SettingSpec& spec, std::string_view key, const Value& value);
// The member's current value; none for an unset optional (and for a named spec: use named_values).
std::optional<Value> read(const Settings& settings, const SettingSpec& spec);
// A named spec's values: each key it stands for that some layer set, with its value, in key order.
std::vector<std::pair<std::string, Value>> named_values(const Settings& settings, const SettingSpec& spec);
// How the value is written in `switchboard config` (TOML syntax; durations as "30m").
std::string format_value(const SettingSpec& spec, const Value& value);
// "an integer in 0..65535", "one of deny, allow", ... (for messages and docs).
std::string describe_kind(const SettingSpec& spec);

// "500ms", "90s", "30m", "2h" in milliseconds; nullopt for anything else (a negative or overflowing number too).
std::optional<std::int64_t> parse_duration(std::string_view text);

}  // namespace switchboard::config
