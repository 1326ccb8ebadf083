#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/Settle.h"
#include "support/ScriptedAdapter.h"
#include "switchboard/bus/EventBus.h"

namespace switchboard::testing {

// One run of the daemon's engine over the real store's database in `dir`, with the scripted agent, as the daemon
// wires them: a second run over the same directory is the daemon after a restart. Destroying it is a crash as the
// engine sees it (nothing more is written), but what was handed to the store is committed when it closes.
// `adjust` sets the scripted agent up (its capabilities) before the engine first asks about it; `persist` makes
// the engine's persistence over the store, when a test needs a variant of the daemon's; `config`, the engine's
// settings.
struct StoredEngineRun {
  using MakePersistence = std::function<std::unique_ptr<daemon::StoredSessions>(store::Store&)>;

  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::unique_ptr<store::Store> store;
  std::unique_ptr<daemon::StoredSessions> persistence;
  std::unique_ptr<engine::Engine> engine;
  std::vector<bus::BusEvent> events;  // everything published, in order
  bus::Subscription recorder = bus.subscribe_all([this](const bus::BusEvent& e) { events.push_back(e); });
  std::string cwd;

  explicit StoredEngineRun(const std::filesystem::path& dir, const std::function<void(ScriptedAdapter::Control&)>& adjust = {},
                           const MakePersistence& persist = {}, engine::EngineConfig config = {})
      : cwd(dir.string()) {
    if (adjust) adjust(*control);
    auto opened = store::Store::open(io, dir / "switchboard.db");
    REQUIRE(opened.has_value());
    store = std::move(*opened);
    persistence = persist ? persist(*store) : std::make_unique<daemon::StoredSessions>(*store);
    auto state = daemon::StoredSessions::load(io, *store);
    REQUIRE(state.has_value());
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)},
                                              std::move(config), persistence.get());
    engine->restore(std::move(*state));
    bus.publish_global(protocol::ClientAttachedEvent{"tui", protocol::Transport::Stdio, true});
  }
  StoredEngineRun(const StoredEngineRun&) = delete;
  StoredEngineRun& operator=(const StoredEngineRun&) = delete;
  ~StoredEngineRun() {
    settle();
    engine.reset();
    store->close();
  }

  void settle() { testing::settle(io); }

  // Runs the reactor until `done` holds (a store job or a child process finishes meanwhile); false after `limit`.
  bool run_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(30)) {
    return poll_until(io, done, limit);
  }
};

}  // namespace switchboard::testing
