#pragma once

#include <cstddef>

#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// The protocol's own methods: initialize (version negotiation), ping (heartbeat) and rpc.discover (the
// OpenRPC document). Stateless apart from what initialize records on the peer.
struct CoreMethodsConfig {
  std::size_t max_request_bytes;
};

void bind_core_methods(rpc::Dispatcher& dispatcher, CoreMethodsConfig config);

}  // namespace switchboard::daemon
