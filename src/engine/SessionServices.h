#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/protocol/generated/Events.h"
#include "switchboard/protocol/generated/Types.h"
#include "worktree/SetupCommands.h"

namespace switchboard::engine {

class RequestBroker;
class SessionPersistence;
class TurnCheckpoints;

// Everything a Session uses of the daemon around it, and nothing more. The engine implements it; a session
// never sees the engine itself.
class SessionServices {
 public:
  virtual ~SessionServices() = default;

  virtual boost::asio::io_context& io() = 0;
  // To the session's subscribers; dropped once the engine is sealed (after daemon.shutdown nothing more of a
  // session reaches clients).
  virtual void publish(const std::string& session_id, protocol::EventPayload event) = 0;
  // Null: everything lives in memory only.
  virtual SessionPersistence* persistence() = 0;
  // The agent's descriptor (null: no agent of that name is registered).
  virtual const adapters::AgentDescriptor* agent(const std::string& name) const = 0;
  // The configured default model for the agent, if any (the last step of resolve_model).
  virtual std::optional<std::string> default_model(const std::string& agent) const = 0;
  // EngineConfig::stream_text: what the session's agent is started with (StartOptions::stream_text).
  virtual bool stream_text() const = 0;
  // Where the session's permission and question requests are opened, answered and resolved.
  virtual RequestBroker& requests() = 0;
  // The daemon's file checkpoints: each turn's working tree is checkpointed before its prompt reaches the agent.
  virtual TurnCheckpoints& checkpoints() = 0;
  // The set-up command configured for new worktrees of the repository whose main working tree is `repository`
  // (setting worktrees.setup); nullopt: none.
  virtual std::optional<worktree::SetupCommand> worktree_setup(const std::string& repository) const = 0;
  // The models an agent offered one of its sessions: remembered for agents.list and for the agent's next new
  // sessions, which then know them before their agent first starts.
  virtual void models_reported(const std::string& agent, const std::vector<protocol::ModelInfo>& models) = 0;
  // The agent started ahead of its session (Engine::prestart), if it fits these start options: `listener` (the
  // session) hears from it from now on, and its start() completes when the agent is ready. Null: start one.
  virtual std::unique_ptr<adapters::AgentAdapter> take_prestarted(const std::string& agent, const adapters::StartOptions& options,
                                                                  adapters::AdapterListener& listener) = 0;
};

}  // namespace switchboard::engine
