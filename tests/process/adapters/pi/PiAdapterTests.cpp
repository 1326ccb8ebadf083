#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "pi/PiRuntime.h"
#include "support/ClaudeRecordingSink.h"
#include "support/RunHandlersUntil.h"
#include "support/TempDir.h"

// The Pi adapter's start against a stand-in for Node and Pi (a script written here): what it leaves behind when
// the start fails.

namespace pi_adapter_tests {

using namespace switchboard;
using namespace switchboard::adapters;
using switchboard::testing::run_handlers_until;
using switchboard::testing::TempDir;
namespace fs = std::filesystem;

void write_executable(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
  fs::permissions(path, fs::perms::owner_all);
}

std::vector<fs::path> mcp_files(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().filename().string().rfind("mcp-", 0) == 0) found.push_back(entry.path());
  }
  return found;
}

TEST_CASE("pi adapter: a start Pi refuses removes the MCP servers file at once, before Pi has exited", "[pi][adapter]") {
  TempDir dir("pi-adapter");
  // "Node": answers the version probes; as Pi it refuses get_state and stays up until its stdin closes.
  const auto node = dir.path() / "node";
  write_executable(node, R"(#!/usr/bin/env python3
import json, sys
if sys.argv[1:] == ["--version"]:
    print("v22.19.0"); sys.exit(0)
if sys.argv[2:] == ["--version"]:
    print("1.6.0"); sys.exit(0)
for line in sys.stdin:
    request = json.loads(line)
    print(json.dumps({"type": "response", "id": request.get("id"), "command": request.get("type"), "success": False, "error": "no state"}), flush=True)
)");
  const auto script = dir.path() / "pi";
  write_executable(script, "#!/bin/sh\nexit 0\n");

  boost::asio::io_context io{1};
  pi::PiConfig config;
  config.executable = script.string();
  config.node = node.string();
  config.extension_dir = dir.path() / "extensions";
  auto runtime = std::make_shared<pi::PiRuntime>(io, config);  // its probes hold a weak_ptr to it
  runtime->locate();
  runtime->begin_discovery();
  testing::ClaudeRecordingSink sink;
  auto adapter = runtime->create(sink);

  StartOptions options{"s-pi", dir.path().string(), std::nullopt, std::nullopt, std::nullopt};
  protocol::McpServer server;
  server.name = "echo";
  server.transport = protocol::McpTransport::Stdio;
  server.command = "mcp-echo";
  server.env = nlohmann::json{{"TOKEN", "secret"}};
  options.mcp_servers = {server};
  std::optional<std::optional<AdapterError>> started;
  std::optional<std::vector<fs::path>> left_when_answered;
  adapter->start(options, [&](std::optional<AdapterError> error) {
    started = error;
    left_when_answered = mcp_files(config.extension_dir);
  });
  REQUIRE(run_handlers_until(io, [&] { return started.has_value(); }));
  REQUIRE(started->has_value());
  CHECK((*started)->message.find("no state") != std::string::npos);
  REQUIRE(left_when_answered);
  CHECK(left_when_answered->empty());
  adapter.reset();
  CHECK(mcp_files(config.extension_dir).empty());
}

}  // namespace pi_adapter_tests
