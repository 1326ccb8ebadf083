#pragma once

#include "engine/Engine.h"
#include "store/EventLog.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// Where the history methods find the durable event log. The daemon binds its methods before it opens the
// store, so the log is filled in later; it stays null for a daemon that keeps nothing on disk (--ephemeral).
struct EventHistory {
  store::EventLog* log = nullptr;
};

// session.events: pages of a session's stored events, read on the store thread.
void bind_history_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventHistory& history);

}  // namespace switchboard::daemon
