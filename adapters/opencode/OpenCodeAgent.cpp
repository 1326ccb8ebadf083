#include "opencode/OpenCodeAgent.h"

#include <array>
#include <memory>

namespace switchboard::adapters::opencode {
namespace {

const std::array kSettings{
    config::AgentSettingSpec{"agents.opencode.bin", "--opencode-bin", "SWITCHBOARD_OPENCODE_BIN", config::Kind::Text,
                             "OpenCode's executable: a path, or a name looked up on PATH", "opencode"},
};

}  // namespace

std::span<const config::AgentSettingSpec> opencode_settings() { return kSettings; }

OpenCodeConfig opencode_config(const config::AgentSettings& settings, const std::filesystem::path& exec_shim) {
  OpenCodeConfig config;
  if (auto bin = settings.text("agents.opencode.bin")) config.executable = *bin;
  config.exec_shim = exec_shim;
  // `opencode serve` does not end at EOF on stdin: the graceful step of its stop is SIGTERM, after a short wait.
  config.timeouts.stop_grace = std::chrono::milliseconds(1000);
  return config;
}

AgentDescriptor opencode_agent(boost::asio::io_context& io, OpenCodeConfig config) {
  return describe_runtime("opencode", std::make_shared<OpenCodeRuntime>(io, std::move(config)));
}

}  // namespace switchboard::adapters::opencode
