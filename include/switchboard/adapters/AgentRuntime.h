#pragma once

#include <functional>
#include <memory>
#include <string>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters {

// What one agent's sessions share, owned by its descriptor (one runtime per agent, living as long as the
// engine): its discovery (is it installed, which version), whatever connection or server the sessions share (an
// `opencode serve` hosting every session, one process hosting several ACP sessions; nothing for Claude Code and
// Codex, whose sessions each run a CLI of their own), the routing of that shared source's events to the
// session adapters it creates, and its own graceful stop at daemon shutdown.
//
// Everything runs on the io_context thread. Order at shutdown: the engine stops every session's adapter first,
// then every runtime, all within one deadline; whatever has not stopped by then is killed with the daemon's
// process groups.
class AgentRuntime {
 public:
  virtual ~AgentRuntime() = default;

  // What agents.list reports. Must not block: a slow probe runs in the background and fills this in later.
  // Before begin_discovery() it says at least whether the executable is there and where (a session may start).
  virtual protocol::AgentInfo info() const = 0;
  // Starts the part of discovery that runs processes (`<cli> --version`, in the background); once, later calls
  // do nothing. The engine calls it at its start, or, when its daemon defers discovery (the one a `switchboard
  // run` hosts: its turn needs the agent's path, not its version, and a probe would compete with the agent's own
  // start for the cores), when agents.list first asks. A runtime whose sessions need the probe's result (Pi's
  // Node) starts it itself when a session needs it. Default: nothing runs.
  virtual void begin_discovery() {}
  // One session's adapter; it may use what the runtime shares, and must not outlive the runtime.
  virtual std::unique_ptr<AgentAdapter> create(AdapterListener& listener) = 0;
  // Ends what the runtime shares, gracefully; `done` runs once (possibly at once) when nothing of it is left.
  virtual void stop(std::function<void()> done) = 0;
};

// A descriptor whose discovery and adapters come from `runtime` (the history hooks are the caller's to add).
inline AgentDescriptor describe_runtime(std::string name, std::shared_ptr<AgentRuntime> runtime) {
  AgentDescriptor descriptor;
  descriptor.name = std::move(name);
  descriptor.discover = [runtime] { return runtime->info(); };
  descriptor.create = [runtime](AdapterListener& listener) { return runtime->create(listener); };
  descriptor.runtime = std::move(runtime);
  return descriptor;
}

}  // namespace switchboard::adapters
