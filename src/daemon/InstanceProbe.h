#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace switchboard::daemon {

// Asks whatever listens at http://host:port for its identity (GET /.well-known/switchboard), with a deadline.
// Used before the daemon's own io_context runs (a second instance checking on the first), so it may block.
std::optional<nlohmann::json> fetch_identity(const std::string& host, unsigned short port,
                                             std::chrono::milliseconds timeout);

}  // namespace switchboard::daemon
