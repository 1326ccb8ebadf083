#pragma once

#include <filesystem>
#include <span>

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/config/AgentSettings.h"

namespace switchboard::testing::fake_server {

// The fake server agent's keys (agents.fakeserver.*): its executable, SWITCHBOARD_FAKESERVER_BIN.
std::span<const config::AgentSettingSpec> fake_server_settings();

// The descriptor registered as "fakeserver" in the test daemon (tests/fake_server_agent/TestDaemonAgents.cpp):
// its runtime, and the agent's own history read from the files the server keeps.
adapters::AgentDescriptor fake_server_agent(boost::asio::io_context& io, const config::AgentSettings& settings);

}  // namespace switchboard::testing::fake_server
