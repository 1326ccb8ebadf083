#include "daemon/DaemonWiring.h"

#include "config/WorktreeSetupEntry.h"

namespace switchboard::daemon {

engine::EngineConfig engine_config(const config::Settings& settings) {
  engine::EngineConfig config;
  config.request_timeout = std::chrono::milliseconds(settings.permissions_timeout_ms);
  config.headless_policy = settings.permissions_headless == "allow" ? engine::HeadlessPolicy::Allow : engine::HeadlessPolicy::Deny;
  // Every agent's default model: a key `<table>.<agent>.default_model` (agents.claude.default_model,
  // acp_agents.gemini.default_model), keyed by the agent's name as its descriptor registers it: the one agent
  // key the daemon itself reads (the engine applies it to turns that name no model).
  constexpr std::string_view kSuffix = ".default_model";
  for (const auto& [key, value] : settings.agents.values()) {
    if (!key.ends_with(kSuffix) || !std::holds_alternative<std::string>(value)) continue;
    const std::string_view rest = std::string_view(key).substr(0, key.size() - kSuffix.size());
    const auto dot = rest.find('.');
    if (dot == std::string_view::npos || dot == 0 || rest.find('.', dot + 1) != std::string_view::npos) continue;
    const auto agent = rest.substr(dot + 1);
    if (!agent.empty()) config.default_models[std::string(agent)] = std::get<std::string>(value);
  }
  // Each entry was checked when the settings were read (config::worktree_setup_entry_problem); a later entry for
  // the same repository wins.
  std::map<std::string, std::string> setups;
  for (const auto& text : settings.worktrees_setup) {
    auto entry = config::parse_worktree_setup_entry(text);
    if (auto* parsed = std::get_if<config::WorktreeSetupEntry>(&entry)) setups[parsed->repository] = parsed->command;
  }
  config.worktree_setup =
      worktree::SetupCommands(std::move(setups), std::chrono::milliseconds(settings.worktrees_setup_timeout_ms));
  return config;
}

HttpOptions http_options(const config::Settings& settings) {
  HttpOptions http;
  http.server.host = settings.http_host;
  http.server.port = static_cast<unsigned short>(settings.http_port);  // checked to be within 0..65535
  http.server.allow_remote = settings.http_allow_remote;
  http.allowed_hosts = settings.http_allowed_hosts;
  http.cors_origins = settings.http_allowed_origins;
  http.max_body_bytes = static_cast<std::size_t>(settings.http_max_body_bytes);
  http.sse.heartbeat = std::chrono::milliseconds(settings.http_sse_heartbeat_ms);
  http.sse.replay_events = static_cast<std::size_t>(settings.http_sse_replay_events);
  return http;
}

DaemonOptions daemon_options(const config::Settings& settings) {
  DaemonOptions options;
  options.max_line_bytes = static_cast<std::size_t>(settings.stdio_max_line_bytes);
  options.data_dir = settings.data_dir;
  options.store.event_log.max_events = static_cast<std::uint64_t>(settings.store_max_events);
  options.engine = engine_config(settings);
  return options;
}

}  // namespace switchboard::daemon
