#pragma once

#include "daemon/CoreMethods.h"
#include "daemon/EventLogMethods.h"
#include "engine/Engine.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// The daemon's whole method table: the protocol's own methods and the engine's. The schema contract test binds
// this same table and compares it with schema/methods in both directions.
void bind_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log, CoreMethodsConfig config);

}  // namespace switchboard::daemon
