#pragma once

#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/RecordingPeer.h"
#include "support/Settle.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::testing {

// Hands the request to the dispatcher as a client's message and runs `io` until its answer has reached `peer` (it
// may wait on the store's thread or the engine's helper thread), then until all is quiet; the answer.
inline nlohmann::json call_method(boost::asio::io_context& io, rpc::Dispatcher& dispatcher,
                                  const std::shared_ptr<RecordingPeer>& peer, const std::string& method,
                                  const nlohmann::json& params) {
  static int id = 0;
  const auto before = peer->responses.size();
  dispatcher.handle_message(
      nlohmann::json{{"jsonrpc", "2.0"}, {"id", ++id}, {"method", method}, {"params", params}}.dump(), peer);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (peer->responses.size() == before && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    if (io.poll() == 0) ::usleep(1000);
  }
  settle(io);
  REQUIRE(peer->responses.size() == before + 1);
  return peer->responses.back();
}

}  // namespace switchboard::testing
