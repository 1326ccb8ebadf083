#include "daemon/Methods.h"

#include "daemon/EngineMethods.h"
#include "daemon/SearchMethods.h"

namespace switchboard::daemon {

void bind_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventLogAccess& event_log, CoreMethodsConfig config) {
  bind_core_methods(dispatcher, config);
  bind_engine_methods(dispatcher, engine);
  bind_event_log_methods(dispatcher, engine, event_log);
  bind_search_methods(dispatcher, engine, event_log);
}

}  // namespace switchboard::daemon
