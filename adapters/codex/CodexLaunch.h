#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/ChildEnvironment.h"
#include "common/TomlString.h"

namespace switchboard::adapters::codex {

// How `codex app-server` is started: its command line, environment and (when the daemon names the model
// provider) a private CODEX_HOME with its own config.toml. The working directory is the thread's cwd.

// `codex app-server`: JSON-RPC over stdio.
std::vector<std::string> command_line(const std::string& executable);

// The version in what `codex --version` prints ("codex-cli 0.171.0" gives "0.171.0"; discovery runs it,
// common/VersionProbe.h); none when the output is not a version.
std::optional<std::string> parse_version_output(std::string_view output);

// The model provider the daemon points Codex at. Without one, the user's own Codex configuration (their
// CODEX_HOME, login and config.toml) is used as it is.
struct ProviderEndpoint {
  std::string base_url;                   // e.g. http://127.0.0.1:8080/v1; Codex POSTs {base_url}/responses
  std::optional<std::string> api_key;     // sent as `Authorization: Bearer`, through kApiKeyVariable
  std::string model = "gpt-5.5";          // the default model of new threads
  std::filesystem::path codex_home;       // the private CODEX_HOME: config, sessions and logs live there
};

// The variable the private config names as the provider's env_key.
inline constexpr std::string_view kApiKeyVariable = "SWITCHBOARD_CODEX_API_KEY";

// The private config.toml: our provider as the only one, Responses wire API, no request/stream retries, no
// update check, no analytics, no plugins (they `git fetch` from github.com at startup), and a failing provider
// fails the turn instead of being retried forever (`unbounded_connection_retries = false`). The first line
// marks the file as ours.
std::string config_toml(const ProviderEndpoint& endpoint);
inline constexpr std::string_view kConfigMarker = "# Written by switchboard for a private CODEX_HOME; do not edit.";
// The file that marks a CODEX_HOME as switchboard's own.
inline constexpr std::string_view kHomeMarker = ".switchboard-codex-home";

// Writes config_toml() into the private CODEX_HOME (common/PrivateHome.h): refused (returns why) when codex_home is
// the user's own Codex home (~/.codex, or $CODEX_HOME of the daemon's environment) or holds files switchboard did
// not write, so the user's configuration is never touched.
std::optional<std::string> write_private_home(const ProviderEndpoint& endpoint, const std::optional<std::string>& home,
                                              const std::optional<std::string>& inherited_codex_home);

using adapters::EnvironmentChanges;  // common/ChildEnvironment.h

// With an endpoint: CODEX_HOME = the private home and the key in kApiKeyVariable (removed when there is no key,
// so that a value inherited from the daemon never reaches the provider). Always RUST_LOG=warn: Codex logs to
// stderr, which the daemon forwards, rate-limited.
EnvironmentChanges environment_for(const std::optional<ProviderEndpoint>& endpoint);

using adapters::toml_string;  // common/TomlString.h

}  // namespace switchboard::adapters::codex
