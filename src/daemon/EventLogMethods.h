#pragma once

#include "engine/Engine.h"
#include "store/EventLog.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// Where the event log methods find the durable event log. The daemon binds its methods before it opens the
// store, so the log is filled in later; it stays null for a daemon that keeps nothing on disk (--ephemeral).
// (Not the agent's own history: that is history.list / history.read, bound with the engine's methods.)
struct EventLogAccess {
  store::EventLog* log = nullptr;
};

// session.events: pages of a session's stored events, read on the store thread.
void bind_event_log_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log);

}  // namespace switchboard::daemon
