#pragma once

#include <filesystem>
#include <span>

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::adapters::replay {

// The replay agent, for front-end work and demonstrations with no agent CLI and no model: a recorded Claude Code
// exchange (agents.replay.recording) played back through the real Claude Code adapter and translator, the CLI
// replaced by `switchboard __replay-claude` (ClaudeReplay.h). Never on by default: without a recording it is
// not hosted at all, so agents.list does not show it. docs/agents/replay.md.
std::span<const config::AgentSettingSpec> replay_settings();

// Whether a recording is configured: without one the registry hosts no replay agent.
bool replay_enabled(const config::AgentSettings& settings);

AgentDescriptor replay_agent(boost::asio::io_context& io, const config::AgentSettings& settings,
                             const std::filesystem::path& self_executable);

}  // namespace switchboard::adapters::replay
