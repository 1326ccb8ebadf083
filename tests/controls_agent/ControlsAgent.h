#pragma once

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::testing::controls {

// The "controls" agent of the test daemon (tests/fake_server_agent/TestDaemonAgents.cpp): an in-process adapter
// with no CLI and no model that reports everything a client can show beside the transcript — a plan, context
// usage, slash commands, an effort option, the status of its MCP servers — and forks, rewinds and compacts its
// (in-memory) conversation. Its turns are scripted by the prompt (ControlsAgent.cpp says how), so the web
// console's browser tests can drive every control deterministically. "controls-bare" is the same agent with
// none of those capabilities: what a client shows for an agent that lacks them.
adapters::AgentDescriptor controls_agent(boost::asio::io_context& io);
adapters::AgentDescriptor bare_controls_agent(boost::asio::io_context& io);

}  // namespace switchboard::testing::controls
