#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "config/SettingTable.h"

namespace switchboard::config {

// The daemon's configuration, merged in one place from four layers, each key taken from the first that sets it:
//
//   command-line flags  >  environment (SWITCHBOARD_*)  >  config file  >  defaults
//
// The config file is --config FILE, else $SWITCHBOARD_CONFIG, else $XDG_CONFIG_HOME/switchboard/config.toml,
// else ~/.config/switchboard/config.toml. A file named explicitly must exist; the default one may be absent.
// Every value a layer gives is checked (type, range, choices) and a bad one is an error naming where it was
// written (flag, variable, or file:line) and its key: a value is never silently replaced by a default.
// An empty environment variable counts as unset (shells make "unset" and "empty" hard to tell apart).

struct Origin {
  enum class Layer { Default, File, Environment, Flag };
  Layer layer = Layer::Default;
  std::string where;  // the flag, the variable, or "<file>:<line>"; empty for a default
};

// "flag --port", "env SWITCHBOARD_HTTP_PORT", "/home/me/.config/switchboard/config.toml:3", "default".
std::string describe(const Origin& origin);

struct ConfigSources {
  // The keys: the daemon's and the hosted agents' (adapters::settings_of(...)).
  SettingTable table;
  // Setting key → the values given on the command line, in order (a list key takes them all, others the last).
  std::map<std::string, std::vector<std::string>> flags;
  std::optional<std::string> config_file;  // --config
  // Reads one environment variable (std::getenv in the daemon; a map in tests).
  std::function<std::optional<std::string>(const std::string&)> environment;
};

struct Configuration {
  SettingTable table;  // the keys it was merged for
  Settings settings;
  std::map<std::string, Origin> origins;  // one per key of the setting table
  std::string file;                       // the config file consulted
  std::string file_chosen_by;             // "--config", "SWITCHBOARD_CONFIG" or "default"
  bool file_found = false;                // false only for an absent file at the default location
};

// The merged configuration, or the error message (without a "switchboard: " prefix) for exit code 2.
std::variant<Configuration, std::string> load_configuration(const ConfigSources& sources);

// What `switchboard config` prints: every key with its effective value and where it came from, one per line
// ("http.port = 9000  # flag --port"); secrets are never shown.
std::string render(const Configuration& configuration);

// The environment of this process, for ConfigSources::environment.
std::optional<std::string> process_environment(const std::string& name);

}  // namespace switchboard::config
