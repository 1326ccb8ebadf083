#include "replay/ReplayAgent.h"

#include <array>
#include <string>

#include "claude-code/ClaudeCodeAdapter.h"
#include "replay/ClaudeReplay.h"

namespace switchboard::adapters::replay {
namespace {

constexpr std::int64_t kMaxSlowdown = 1000;

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.replay.recording", "--replay-recording", "SWITCHBOARD_REPLAY_RECORDING",
                           config::Kind::Path,
                           "a recorded Claude Code exchange (tests/fixtures/claude-code/recorded-exchange-*.ndjson) "
                           "that the `replay` agent plays; unset: there is no replay agent"},
  config::AgentSettingSpec{"agents.replay.slowdown", "--replay-slowdown", "SWITCHBOARD_REPLAY_SLOWDOWN",
                           config::Kind::Integer, "how many times slower than recorded the replay plays", "1", {},
                           false, 1, kMaxSlowdown},
};
// clang-format on

}  // namespace

std::span<const config::AgentSettingSpec> replay_settings() { return kSettings; }

bool replay_enabled(const config::AgentSettings& settings) { return settings.text("agents.replay.recording").has_value(); }

AgentDescriptor replay_agent(boost::asio::io_context& io, const config::AgentSettings& settings,
                             const std::filesystem::path& self_executable) {
  const auto recording = settings.text("agents.replay.recording").value_or("");
  claude::ClaudeCodeConfig config;
  config.agent_name = "replay";
  // The stand-in is this binary: the exec shim is the daemon's own executable.
  config.executable = self_executable.string();
  config.leading_arguments = {kReplayClaudeCommand, "--recording", recording, "--slowdown",
                              std::to_string(settings.integer("agents.replay.slowdown").value_or(1))};
  config.file_pool = std::make_shared<boost::asio::thread_pool>(1);
  auto descriptor = claude::claude_code_agent(io, std::move(config));
  // A recording has no history of its own to list or import.
  descriptor.list_history = nullptr;
  descriptor.read_history = nullptr;
  descriptor.discover = [discover = std::move(descriptor.discover)] {
    auto info = discover();
    info.capabilities.history_list = false;
    info.capabilities.history_read = false;
    return info;
  };
  return descriptor;
}

}  // namespace switchboard::adapters::replay
