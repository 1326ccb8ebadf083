#include "config/DaemonWiring.h"

namespace switchboard::config {

engine::EngineConfig engine_config(const Settings& settings) {
  engine::EngineConfig config;
  config.request_timeout = std::chrono::milliseconds(settings.permissions_timeout_ms);
  config.headless_policy = settings.permissions_headless == "allow" ? engine::HeadlessPolicy::Allow : engine::HeadlessPolicy::Deny;
  // Keyed by the agent's name as the descriptors register it.
  if (settings.claude_default_model) config.default_models["claude"] = *settings.claude_default_model;
  if (settings.codex_default_model) config.default_models["codex"] = *settings.codex_default_model;
  return config;
}

daemon::HttpOptions http_options(const Settings& settings) {
  daemon::HttpOptions http;
  http.server.host = settings.http_host;
  http.server.port = static_cast<unsigned short>(settings.http_port);  // checked to be within 0..65535
  http.server.allow_remote = settings.http_allow_remote;
  http.allowed_hosts = settings.http_allowed_hosts;
  http.cors_origins = settings.http_allowed_origins;
  http.max_body_bytes = static_cast<std::size_t>(settings.http_max_body_bytes);
  http.sse.heartbeat = std::chrono::milliseconds(settings.http_sse_heartbeat_ms);
  http.sse.history_events = static_cast<std::size_t>(settings.http_sse_history_events);
  return http;
}

daemon::DaemonOptions daemon_options(const Settings& settings) {
  daemon::DaemonOptions options;
  options.max_line_bytes = static_cast<std::size_t>(settings.stdio_max_line_bytes);
  options.data_dir = settings.data_dir;
  options.store.event_log.max_events = static_cast<std::uint64_t>(settings.store_max_events);
  options.engine = engine_config(settings);
  return options;
}

}  // namespace switchboard::config
