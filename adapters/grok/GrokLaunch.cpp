#include "grok/GrokLaunch.h"

#include "common/PrivateHome.h"
#include "common/TomlString.h"

namespace switchboard::adapters::grok {

namespace {

// Retries of one model request: Grok adds a fixed recovery of its own on top (4 attempts over ~44 s in all).
constexpr int kMaxRetries = 1;

}  // namespace

std::vector<std::string> arguments() { return {"agent", "--no-leader", "stdio"}; }

std::string config_toml(const GrokProvider& provider) {
  std::string out;
  out += "# Written by switchboard at every start of Grok Build in this GROK_HOME; edits are overwritten.\n";
  out += "[models]\n";
  out += "default = \"switchboard\"\n";
  out += "session_summary = \"switchboard\"\n";  // else the title request names grok-4.6 to our provider
  out += "max_retries = " + std::to_string(kMaxRetries) + "\n\n";
  out += "[model.switchboard]\n";
  out += "model = " + toml_string(provider.model) + "\n";
  out += "name = \"switchboard provider\"\n";
  out += "base_url = " + toml_string(provider.base_url) + "\n";
  out += "env_key = " + toml_string(kApiKeyVariable) + "\n";
  out += "api_backend = " + toml_string(provider.api) + "\n\n";
  // Grok offers a model's efforts as its `reasoning_effort` config option (category thought_level) and sends the
  // one in force as the request's reasoning_effort.
  for (const auto& effort : provider.reasoning_efforts) {
    out += "[[model.switchboard.reasoning_efforts]]\n";
    out += "id = " + toml_string(effort) + "\n";
    out += "value = " + toml_string(effort) + "\n";
    out += "label = " + toml_string(effort) + "\n\n";
  }
  out += "[features]\ntelemetry = false\nturn_summary = false\n\n";
  out += "[cli]\nauto_update = false\n\n";
  out += "[permission]\nask = [\"Bash\", \"Edit\", \"Write\"]\n";
  return out;
}

std::optional<std::string> write_private_home(const GrokProvider& provider, const std::optional<std::string>& home,
                                              const std::optional<std::string>& inherited_grok_home) {
  const PrivateHome grok_home{provider.grok_home, "Grok Build", "GROK_HOME", ".grok", std::string(kHomeMarker)};
  return adapters::write_private_home(grok_home, config_toml(provider), home, inherited_grok_home);
}

EnvironmentChanges environment_for(const std::optional<GrokProvider>& provider) {
  EnvironmentChanges changes;
  changes.set.emplace_back("GROK_DISABLE_AUTOUPDATER", "1");
  if (!provider) {
    // The overlay takes only soft settings (models, features): enough to bound retries and skip the extra
    // summary request after every turn, without writing the user's config.toml.
    changes.set.emplace_back("GROK_CONFIG", "{\"models\":{\"max_retries\":" + std::to_string(kMaxRetries) +
                                                "},\"features\":{\"turn_summary\":false}}");
    return changes;
  }
  changes.set.emplace_back("GROK_HOME", provider->grok_home.string());
  changes.unset.emplace_back("GROK_CONFIG");
  changes.unset.emplace_back("GROK_CONFIG_PATH");
  // Grok wants a key before it sends anything; a local provider that needs none gets a placeholder.
  changes.set.emplace_back(std::string(kApiKeyVariable), provider->api_key.value_or("switchboard-no-key"));
  return changes;
}

}  // namespace switchboard::adapters::grok
