#pragma once

#include "config/Settings.h"
#include "daemon/Daemon.h"
#include "engine/Engine.h"

namespace switchboard::daemon {

// The merged settings (config/) handed to the parts of the daemon that use them. The daemon's option structs keep
// their own shapes (chrono types, unsigned ports); this is the one place that converts. Agents are built by the
// registry (adapters/BuiltinAgents.h) from Settings::agents.
engine::EngineConfig engine_config(const config::Settings& settings);
HttpOptions http_options(const config::Settings& settings);
// Everything but `agents`, `ephemeral` and `http` (which the command line's mode decides).
DaemonOptions daemon_options(const config::Settings& settings);

}  // namespace switchboard::daemon
