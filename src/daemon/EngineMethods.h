#pragma once

#include "engine/Engine.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// Binds every session, permission, question, rule, agent and agent-history method of the schema to the engine:
// decoding is done by the dispatcher, this layer only maps engine outcomes to replies and errors.
void bind_engine_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine);

}  // namespace switchboard::daemon
