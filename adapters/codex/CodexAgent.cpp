#include <array>
#include <filesystem>
#include <system_error>

#include "codex/CodexAdapter.h"
#include "codex/CodexHistory.h"
#include "common/CliRuntime.h"
#include "common/EnvironmentVariable.h"

// Discovery and registration of Codex: what `agents.list` reports, how the engine creates adapters, and how it
// reads Codex's own history (CodexHistory.h).

namespace switchboard::adapters::codex {
namespace {

constexpr std::size_t kMaxQuotedLength = 200;

namespace fs = std::filesystem;

// Where the CLIs this daemon starts keep their rollouts: the private home when a provider is configured (the
// adapter points CODEX_HOME there), else the CODEX_HOME they inherit from the daemon, else $HOME/.codex.
std::optional<fs::path> history_home(const CodexConfig& config) {
  std::optional<fs::path> private_home;
  if (config.endpoint) private_home = config.endpoint->codex_home;
  return history_codex_home(private_home, environment_variable("CODEX_HOME"), environment_variable("HOME"));
}

AdapterError unknown_history_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                      "Codex has no thread " + id.substr(0, kMaxQuotedLength) + " for " + cwd.substr(0, 500)};
}

HistoryOutcome<HistoryList> list_threads(const std::optional<fs::path>& codex_home, const std::string& cwd) {
  if (!codex_home) return HistoryList{};  // no HOME and no CODEX_HOME: the CLI could not have written any
  return list_history(*codex_home, cwd);
}

HistoryOutcome<HistoryReadStats> read_thread(const std::optional<fs::path>& codex_home, const std::string& cwd,
                                             const std::string& id, HistorySink& sink) {
  if (!codex_home || !is_thread_id(id)) return unknown_history_session(cwd, id);
  const auto file = find_rollout(*codex_home, id, cwd);
  if (!file) return unknown_history_session(cwd, id);
  const auto stats = read_history(*file, sink, *codex_home);
  if (!stats.opened) {
    return AdapterError{protocol::ErrorCode::UnknownHistorySession, "cannot read Codex's rollout file " + file->string()};
  }
  return HistoryReadStats{stats.lines, stats.malformed};
}

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.codex.bin", "--codex-bin", "SWITCHBOARD_CODEX_BIN", config::Kind::Text,
                           "Codex's executable: a path, or a name looked up on PATH", "codex"},
  config::AgentSettingSpec{"agents.codex.default_model", "--codex-default-model", "SWITCHBOARD_CODEX_DEFAULT_MODEL",
                           config::Kind::Text,
                           "model of every Codex turn that names none (a session's own model, chosen at create or with "
                           "setModel, wins)"},
  config::AgentSettingSpec{"agents.codex.provider.base_url", "--codex-base-url", "SWITCHBOARD_CODEX_BASE_URL",
                           config::Kind::Text,
                           "a Responses API provider for Codex (e.g. http://127.0.0.1:8080/v1); unset: the user's own "
                           "Codex configuration is used as it is"},
  config::AgentSettingSpec{"agents.codex.provider.api_key", "", std::string_view(kApiKeyVariable), config::Kind::Text,
                           "the provider's key (sent as a bearer token); never printed", {}, {}, /*secret=*/true},
  config::AgentSettingSpec{"agents.codex.provider.model", "--codex-provider-model", "SWITCHBOARD_CODEX_MODEL",
                           config::Kind::Text, "the provider's default model (written into the private Codex home)",
                           "gpt-5.5"},
  config::AgentSettingSpec{"agents.codex.provider.home", "--codex-home", "SWITCHBOARD_CODEX_HOME", config::Kind::Path,
                           "the private CODEX_HOME used with a provider (default: codex-home in data_dir)", {},
                           "codex-home"},
};
// clang-format on

}  // namespace

std::span<const config::AgentSettingSpec> codex_settings() { return kSettings; }

CodexConfig codex_config(const config::AgentSettings& settings) {
  CodexConfig config;
  if (auto bin = settings.text("agents.codex.bin")) config.executable = *bin;
  if (auto base_url = settings.text("agents.codex.provider.base_url")) {
    ProviderEndpoint endpoint;
    endpoint.base_url = *base_url;
    endpoint.api_key = settings.text("agents.codex.provider.api_key");
    if (auto model = settings.text("agents.codex.provider.model")) endpoint.model = *model;
    if (auto home = settings.text("agents.codex.provider.home")) endpoint.codex_home = *home;
    config.endpoint = std::move(endpoint);
  }
  return config;
}

AgentDescriptor codex_agent(boost::asio::io_context& io, CodexConfig config) {
  const auto history = history_home(config);
  auto descriptor = describe_cli_agent<CodexAdapter>(io, "codex", std::move(config), &parse_version_output);
  descriptor.list_history = [codex_home = history](const std::string& cwd) { return list_threads(codex_home, cwd); };
  descriptor.read_history = [codex_home = history](const std::string& cwd, const std::string& id, HistorySink& sink) {
    return read_thread(codex_home, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::codex
