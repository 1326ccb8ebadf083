#include "grok/GrokAgent.h"

#include <array>

#include "common/EnvironmentVariable.h"
#include "grok/GrokHistory.h"

namespace switchboard::adapters::grok {
namespace {

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.grok.bin", "--grok-bin", "SWITCHBOARD_GROK_BIN", config::Kind::Text,
                           "Grok Build's executable: a path, or a name looked up on PATH", "grok"},
  config::AgentSettingSpec{"agents.grok.default_model", "--grok-default-model", "SWITCHBOARD_GROK_DEFAULT_MODEL",
                           config::Kind::Text,
                           "model of every Grok Build turn that names none (a key of Grok's [model.*] tables, or "
                           "a built-in model such as grok-4.5)"},
  config::AgentSettingSpec{"agents.grok.provider.base_url", "--grok-base-url", "SWITCHBOARD_GROK_BASE_URL",
                           config::Kind::Text,
                           "a model provider for Grok Build (e.g. http://127.0.0.1:8080/v1); unset: the user's own "
                           "GROK_HOME is used as it is"},
  config::AgentSettingSpec{"agents.grok.provider.api_key", "", std::string_view(kApiKeyVariable), config::Kind::Text,
                           "the provider's key (sent as a bearer token); never printed", {}, {}, /*secret=*/true},
  config::AgentSettingSpec{"agents.grok.provider.model", "--grok-provider-model", "SWITCHBOARD_GROK_MODEL",
                           config::Kind::Text, "the model name sent to the provider (needed with a provider)"},
  config::AgentSettingSpec{"agents.grok.provider.api", "--grok-provider-api", "SWITCHBOARD_GROK_PROVIDER_API",
                           config::Kind::Text, "the provider's API: chat_completions, responses or messages",
                           "chat_completions"},
  config::AgentSettingSpec{"agents.grok.provider.reasoning_efforts", "--grok-reasoning-effort",
                           "SWITCHBOARD_GROK_REASONING_EFFORTS", config::Kind::List,
                           "the reasoning efforts the provider's model takes, e.g. [\"low\", \"medium\", \"high\"]: "
                           "offered as the session option `effort` (the first is in force until one is set); unset: "
                           "none, and Grok sends no reasoning effort"},
  config::AgentSettingSpec{"agents.grok.provider.home", "--grok-home", "SWITCHBOARD_GROK_HOME", config::Kind::Path,
                           "the private GROK_HOME used with a provider (default: grok-home in data_dir)", {},
                           "grok-home"},
};
// clang-format on

}  // namespace

std::span<const config::AgentSettingSpec> grok_settings() { return kSettings; }

GrokConfig grok_config(const config::AgentSettings& settings) {
  GrokConfig config;
  if (auto bin = settings.text("agents.grok.bin")) config.executable = *bin;
  if (auto base_url = settings.text("agents.grok.provider.base_url")) {
    GrokProvider provider;
    provider.base_url = *base_url;
    provider.api_key = settings.text("agents.grok.provider.api_key");
    provider.model = settings.text("agents.grok.provider.model").value_or("");
    if (auto api = settings.text("agents.grok.provider.api")) provider.api = *api;
    if (auto home = settings.text("agents.grok.provider.home")) provider.grok_home = *home;
    if (const auto* efforts = settings.find("agents.grok.provider.reasoning_efforts");
        efforts != nullptr && std::holds_alternative<std::vector<std::string>>(*efforts)) {
      provider.reasoning_efforts = std::get<std::vector<std::string>>(*efforts);
    }
    config.provider = std::move(provider);
  }
  return config;
}

acp::AcpConfig acp_config_for(GrokConfig config) {
  acp::AcpConfig acp;
  acp.agent = "grok";
  acp.display_name = "Grok Build";
  acp.executable = config.executable;
  acp.arguments = arguments();
  acp.environment = environment_for(config.provider);
  // Grok's commands that our clients are not offered: `always-approve` would let Grok run every tool without
  // asking, around the session's permissions and mode; `context` and `session-info` only draw in Grok's own TUI
  // (over ACP they answer nothing); `feedback` sends a report to xAI; `loop` runs prompts on a timer of its own,
  // outside any turn of ours.
  acp.hidden_commands = {"always-approve", "context", "session-info", "feedback", "loop"};
  // Grok's `/compact` summarizes its conversation: session.compact sends it.
  acp.compact_command = true;
  // Grok's own fork and rewind, extensions of its ACP agent (`_x.ai/session/fork`, `_x.ai/rewind/*`).
  acp.xai_session_controls = true;
  // Grok reports each MCP server's state (`_x.ai/mcp/server_status`).
  acp.reports_mcp_status = true;
  // The provider key is Grok's: the MCP servers it starts inherit its environment, and get it blanked.
  if (config.provider) acp.hidden_variables = {std::string(kApiKeyVariable)};
  if (auto provider = config.provider) {
    acp.prepare = [provider = *provider]() -> std::variant<EnvironmentChanges, std::string> {
      if (provider.model.empty()) return std::string("agents.grok.provider.model is needed with agents.grok.provider.base_url");
      // A few hundred bytes, once per process start: not worth a trip off the reactor.
      if (auto refused = write_private_home(provider, environment_variable("HOME"), environment_variable("GROK_HOME"))) return *refused;
      return EnvironmentChanges{};
    };
  }
  // Grok answers ~2 s after its stdin closes (it saves and shuts its session actors down, which it also does on
  // SIGTERM, at once): the daemon's shutdown does not wait for that.
  acp.timeouts.stop_grace = std::chrono::milliseconds(300);
  return acp;
}

namespace {

std::optional<std::filesystem::path> history_home(const GrokConfig& config) {
  // Where the Grok processes this daemon starts keep their sessions: the private home with a provider, else the
  // GROK_HOME they inherit, else $HOME/.grok.
  if (config.provider) return config.provider->grok_home;
  if (auto home = environment_variable("GROK_HOME")) return std::filesystem::path(*home);
  if (auto home = environment_variable("HOME")) return std::filesystem::path(*home) / ".grok";
  return std::nullopt;
}

}  // namespace

AgentDescriptor grok_agent(boost::asio::io_context& io, GrokConfig config) {
  const auto home = history_home(config);
  auto descriptor = acp::acp_agent(io, acp_config_for(std::move(config)));
  descriptor.discover = [discover = std::move(descriptor.discover)] {
    auto info = discover();
    info.capabilities.history_list = true;
    info.capabilities.history_read = true;
    return info;
  };
  descriptor.list_history = [home](const std::string& cwd) -> HistoryOutcome<HistoryList> {
    if (!home) return HistoryList{};  // no HOME and no GROK_HOME: Grok could not have written any
    return list_history(*home, cwd);
  };
  descriptor.read_history = [home](const std::string& cwd, const std::string& id, HistorySink& sink) -> HistoryOutcome<HistoryReadStats> {
    if (!home) return AdapterError{protocol::ErrorCode::UnknownHistorySession, "Grok Build has no history here (no HOME)"};
    return read_history(*home, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::grok
