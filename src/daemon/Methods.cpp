#include "daemon/Methods.h"

#include "engine/EngineMethods.h"

namespace switchboard::daemon {

void bind_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine, EventHistory& history, CoreMethodsConfig config) {
  bind_core_methods(dispatcher, config);
  engine::bind_engine_methods(dispatcher, engine);
  bind_history_methods(dispatcher, engine, history);
}

}  // namespace switchboard::daemon
