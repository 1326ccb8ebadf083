#pragma once

#include "config/Settings.h"
#include "daemon/Daemon.h"
#include "engine/Engine.h"

namespace switchboard::config {

// The merged settings handed to the parts that use them. The daemon's option structs keep their own shapes
// (chrono types, unsigned ports); this is the one place that converts. Agents are built by the registry
// (adapters/BuiltinAgents.h) from Settings::agents.
engine::EngineConfig engine_config(const Settings& settings);
daemon::HttpOptions http_options(const Settings& settings);
// Everything but `agents`, `ephemeral` and `http` (which the command line's mode decides).
daemon::DaemonOptions daemon_options(const Settings& settings);

}  // namespace switchboard::config
