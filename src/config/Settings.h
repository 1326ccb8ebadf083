#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/config/AgentSettings.h"

namespace switchboard::config {

// Every value a user can configure, typed, after the layers are merged (config/Configuration.h). The member
// initializers are the defaults; the daemon's own option structs are filled from these (daemon/DaemonWiring.h),
// so a default lives here and nowhere else (an agent's key: in its adapter's declaration). docs/configuration.md
// lists every key.
struct Settings {
  std::string data_dir;  // computed default: $XDG_DATA_HOME/switchboard, else ~/.local/share/switchboard

  std::string log_level = "info";
  std::optional<std::string> log_file;

  std::string http_host = "127.0.0.1";
  std::int64_t http_port = 7337;
  bool http_allow_remote = false;
  std::vector<std::string> http_allowed_hosts;
  std::vector<std::string> http_allowed_origins;
  std::int64_t http_max_body_bytes = 8 * 1024 * 1024;
  std::int64_t http_sse_heartbeat_ms = 15000;
  std::int64_t http_sse_replay_events = 10000;

  std::int64_t stdio_max_line_bytes = 8 * 1024 * 1024;

  std::int64_t store_max_events = 1'000'000;

  std::string permissions_headless = "deny";              // "deny" or "allow"
  std::int64_t permissions_timeout_ms = 30 * 60 * 1000;   // a duration ("30m") in every layer

  // "<repository>=<command>" (config/WorktreeSetupEntry.h): run in each new worktree of the repository before its
  // session's first turn, killed after worktrees_setup_timeout_ms (docs/worktrees.md).
  std::vector<std::string> worktrees_setup;
  std::int64_t worktrees_setup_timeout_ms = 10 * 60 * 1000;

  // The agents' own keys (agents.<agent>.*), declared by their adapters (adapters/BuiltinAgents.h) and read
  // back by them: the daemon does not know what they mean, except agents.<agent>.default_model
  // (daemon/DaemonWiring.h).
  AgentSettings agents;
};

}  // namespace switchboard::config
