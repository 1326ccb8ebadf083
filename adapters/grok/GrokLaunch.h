#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/ChildEnvironment.h"

namespace switchboard::adapters::grok {

// How Grok Build (`grok agent --no-leader stdio`, an ACP agent) is started for our sessions. `--no-leader`: the
// agent runs in the process we start, never in a shared leader another client started, so its tools die with it.
std::vector<std::string> arguments();

// The model provider the daemon points Grok Build at. Without one, the user's own GROK_HOME (their models, keys
// and login) is used as it is.
struct GrokProvider {
  std::string base_url;                 // e.g. http://127.0.0.1:8080/v1; Grok appends /chat/completions
  std::optional<std::string> api_key;   // passed through kApiKeyVariable, never written to disk
  std::string model;                    // the model name sent to the provider
  std::string api = "chat_completions";  // Grok's api_backend: chat_completions, responses or messages
  std::filesystem::path grok_home;      // the private GROK_HOME: config, sessions and logs live there
  // The reasoning efforts the provider's model takes (e.g. low, medium, high), offered as the session's `effort`
  // option; the first is in force until one is set. Empty: none (Grok then sends no reasoning_effort at all, which
  // a provider whose model has none needs).
  std::vector<std::string> reasoning_efforts;
};

inline constexpr std::string_view kApiKeyVariable = "SWITCHBOARD_GROK_API_KEY";
// The file that marks a GROK_HOME as switchboard's own (Grok rewrites config.toml, so the mark is not in it).
inline constexpr std::string_view kHomeMarker = ".switchboard-grok-home";

// The private config.toml: the provider as the only model (main turns and the title/summary side requests),
// retries bounded (Grok's default retries a persistent HTTP 500 for more than 15 minutes), telemetry, update
// checks and turn summaries off, and every shell command and file edit asking (`[permission] ask`), so that the
// engine's policy, not Grok's built-in allow-list of "safe" commands, decides.
std::string config_toml(const GrokProvider& provider);

// Writes config_toml() into the private GROK_HOME (common/PrivateHome.h) anew at every start (Grok may have
// rewritten it). Refuses (returns why) when grok_home is the user's own Grok home (~/.grok, or the daemon's
// $GROK_HOME), or a directory with files that switchboard did not make its own: the user's configuration is
// never touched.
std::optional<std::string> write_private_home(const GrokProvider& provider, const std::optional<std::string>& home,
                                              const std::optional<std::string>& inherited_grok_home);

// With a provider: GROK_HOME = the private home and the key in kApiKeyVariable. Without: the user's GROK_HOME,
// with retries bounded and turn summaries off through Grok's GROK_CONFIG overlay, which never writes their file.
// Always: no update checks.
EnvironmentChanges environment_for(const std::optional<GrokProvider>& provider);

}  // namespace switchboard::adapters::grok
