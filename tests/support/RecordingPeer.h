#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/rpc/RpcPeer.h"

namespace switchboard::testing {

// An RpcPeer that keeps every response it is sent, parsed, for assertions (clangd's OutgoingRecorder).
class RecordingPeer : public rpc::RpcPeer {
 public:
  explicit RecordingPeer(bool requires_initialize = true) : m_requires_initialize(requires_initialize) {}

  void send_response(std::string message) override {
    raw.push_back(message);
    responses.push_back(nlohmann::json::parse(message));
  }
  bool requires_initialize() const override { return m_requires_initialize; }
  protocol::Transport transport() const override { return protocol::Transport::Stdio; }

  std::vector<std::string> raw;
  std::vector<nlohmann::json> responses;

 private:
  bool m_requires_initialize;
};

}  // namespace switchboard::testing
