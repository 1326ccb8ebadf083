#pragma once

#include "daemon/EventLogMethods.h"
#include "engine/Engine.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// session.search (the event log's full-text index, docs/search.md) and session.export (a session's stored
// events as Markdown or as one SessionExport document). Both read on the store thread; neither is available
// without an event log (--ephemeral): Unsupported.
void bind_search_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log);

}  // namespace switchboard::daemon
