#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// The protocol's own methods: initialize (version negotiation), ping (heartbeat), rpc.discover (the OpenRPC
// document) and daemon.rotateToken. Stateless apart from what initialize records on the peer.
struct CoreMethodsConfig {
  std::size_t max_request_bytes;
  // daemon.rotateToken: makes the daemon's new HTTP token and returns it; nullopt (or unset) when the daemon
  // serves no HTTP, which the method answers Unsupported.
  std::function<std::optional<std::string>()> rotate_token{};
};

void bind_core_methods(rpc::Dispatcher& dispatcher, CoreMethodsConfig config);

}  // namespace switchboard::daemon
