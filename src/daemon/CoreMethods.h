#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::daemon {

// The protocol's own methods: initialize (version negotiation), ping (heartbeat), rpc.discover (the OpenRPC
// document), daemon.rotateToken and daemon.httpInfo. Stateless apart from what initialize records on the peer.
struct CoreMethodsConfig {
  std::size_t max_request_bytes;
  // daemon.rotateToken: makes the daemon's new HTTP token and returns it; nullopt (or unset) when the daemon
  // serves no HTTP, which the method answers Unsupported.
  std::function<std::optional<std::string>()> rotate_token{};
  // daemon.httpInfo: the HTTP port and the configured extra host names; nullopt (or unset) without HTTP.
  std::function<std::optional<protocol::DaemonHttpInfoResult>()> http_info{};
};

void bind_core_methods(rpc::Dispatcher& dispatcher, CoreMethodsConfig config);

}  // namespace switchboard::daemon
