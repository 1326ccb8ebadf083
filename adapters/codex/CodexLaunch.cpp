#include "codex/CodexLaunch.h"

#include "common/PrivateHome.h"

namespace switchboard::adapters::codex {

std::vector<std::string> command_line(const std::string& executable) { return {executable, "app-server"}; }

std::optional<std::string> parse_version_output(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r' || output.back() == ' ')) output.remove_suffix(1);
  const auto space = output.rfind(' ');
  const std::string_view version = space == std::string_view::npos ? output : output.substr(space + 1);
  if (version.empty() || version.find_first_not_of("0123456789.") != std::string_view::npos ||
      version.find('.') == std::string_view::npos || version.front() == '.' || version.back() == '.') {
    return std::nullopt;
  }
  return std::string(version);
}

std::string config_toml(const ProviderEndpoint& endpoint) {
  std::string out;
  out += kConfigMarker;
  out += '\n';
  out += "model = " + toml_string(endpoint.model) + "\n";
  out += "model_provider = \"switchboard\"\n";
  // Threads name their own approval policy and sandbox (thread/start); these are only the fallbacks.
  out += "approval_policy = \"on-request\"\n";
  out += "sandbox_mode = \"workspace-write\"\n";
  out += "check_for_update_on_startup = false\n\n";
  out += "[model_providers.switchboard]\n";
  out += "name = \"switchboard\"\n";
  out += "base_url = " + toml_string(endpoint.base_url) + "\n";
  // Without a key Codex sends no Authorization header (a local provider that needs none).
  if (endpoint.api_key) out += "env_key = " + toml_string(kApiKeyVariable) + "\n";
  out += "wire_api = \"responses\"\n";
  out += "request_max_retries = 0\n";
  out += "stream_max_retries = 0\n";
  out += "stream_idle_timeout_ms = 300000\n\n";
  out += "[analytics]\nenabled = false\n\n";
  out += "[features]\nplugins = false\nunbounded_connection_retries = false\n";
  return out;
}

std::optional<std::string> write_private_home(const ProviderEndpoint& endpoint, const std::optional<std::string>& home,
                                              const std::optional<std::string>& inherited_codex_home) {
  const PrivateHome codex_home{endpoint.codex_home, "Codex", "CODEX_HOME", ".codex", std::string(kHomeMarker)};
  return adapters::write_private_home(codex_home, config_toml(endpoint), home, inherited_codex_home);
}

EnvironmentChanges environment_for(const std::optional<ProviderEndpoint>& endpoint) {
  EnvironmentChanges changes;
  changes.set.emplace_back("RUST_LOG", "warn");
  if (!endpoint) return changes;
  changes.set.emplace_back("CODEX_HOME", endpoint->codex_home.string());
  if (endpoint->api_key) {
    changes.set.emplace_back(std::string(kApiKeyVariable), *endpoint->api_key);
  } else {
    changes.unset.emplace_back(kApiKeyVariable);
  }
  return changes;
}

}  // namespace switchboard::adapters::codex
