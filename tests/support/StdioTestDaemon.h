#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"

namespace switchboard::testing {

// The tests' own daemon (switchboard_test_daemon: the real daemon with the scripted `controls` agent, which writes
// files as a tool call) over stdio on the data directory `data`, initialized as a client that does not answer
// permissions. A second one on the same directory is the daemon after a restart.
struct StdioTestDaemon {
  DaemonClient client;

  explicit StdioTestDaemon(const std::filesystem::path& data)
      : client({"stdio", "--data-dir", data.string()}, {}, SWITCHBOARD_TEST_DAEMON) {
    REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "test"}}}}).contains("result"));
  }

  // The call's result; the test fails when the daemon answers an error.
  nlohmann::json result(const std::string& method, const nlohmann::json& params) {
    const auto answer = client.call(method, params);
    INFO(method << ": " << answer.dump());
    REQUIRE(answer.contains("result"));
    return answer.at("result");
  }

  // The call's error; the test fails when the daemon answers a result.
  nlohmann::json error(const std::string& method, const nlohmann::json& params) {
    const auto answer = client.call(method, params);
    INFO(method << ": " << answer.dump());
    REQUIRE(answer.contains("error"));
    return answer.at("error");
  }
};

}  // namespace switchboard::testing
