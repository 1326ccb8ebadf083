#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "daemon/Methods.h"
#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/CallMethod.h"
#include "support/RecordingPeer.h"
#include "support/ScriptedAdapter.h"
#include "support/Settle.h"
#include "support/StoreTestSupport.h"
#include "support/TempDir.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::testing {

// The daemon's method table over its own wiring, in one process: agents → bus → egress → the store's durable event
// log (and its full-text index), read back through the one dispatcher. Two scripted agents, "scripted" and
// "other", so that sessions of two different agents share the daemon. A client that answers permissions is
// attached, so an ask waits for permission.respond. The store is in a fresh directory removed afterwards, or in
// `data_dir` (the caller's, kept): a second one there is the daemon after a restart, with the stored sessions.
struct LoggedMethods {
  std::optional<TempDir> own_dir;
  std::filesystem::path dir;
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  bus::Egress egress{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::shared_ptr<ScriptedAdapter::Control> other_control = std::make_shared<ScriptedAdapter::Control>();
  std::unique_ptr<store::Store> store;
  std::unique_ptr<daemon::StoredSessions> persistence;
  std::unique_ptr<engine::Engine> engine;
  daemon::EventLogAccess event_log;
  rpc::Dispatcher dispatcher;
  std::shared_ptr<RecordingPeer> peer = std::make_shared<RecordingPeer>(false);

  explicit LoggedMethods(const std::filesystem::path& data_dir = {}) {
    if (data_dir.empty()) {
      own_dir.emplace("logged-methods");
      dir = own_dir->path();
    } else {
      dir = data_dir;
    }
    auto opened = store::Store::open(io, dir / "switchboard.db");
    REQUIRE(opened.has_value());
    store = std::move(*opened);
    persistence = std::make_unique<daemon::StoredSessions>(*store);
    auto stored = daemon::StoredSessions::load(io, *store);
    REQUIRE(stored.has_value());
    auto other = ScriptedAdapter::descriptor(io, other_control);
    other.name = "other";
    other.discover = [discover = other.discover] {
      auto info = discover();
      info.agent = "other";
      return info;
    };
    engine = std::make_unique<engine::Engine>(
        io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control), std::move(other)},
        engine::EngineConfig{}, persistence.get());
    engine->restore(std::move(*stored));
    engine->set_last_seq_source([this] { return egress.last_seq(); });  // session.attach's lastSeq, as the daemon's
    egress.continue_after(store->events().last_seq());
    egress.add_sink(store->events());
    event_log.log = &store->events();
    daemon::bind_methods(dispatcher, *engine, event_log, {1024 * 1024});
    bus.publish_global(protocol::ClientAttachedEvent{"tui", protocol::Transport::Stdio, true});
  }
  LoggedMethods(const LoggedMethods&) = delete;
  LoggedMethods& operator=(const LoggedMethods&) = delete;
  ~LoggedMethods() {
    settle();
    egress.remove_sink(store->events());
    engine.reset();
    store->close();
  }

  void settle() { testing::settle(io); }

  // Every event so far committed to the log, so that its index has it too.
  void commit() {
    settle();
    REQUIRE(await_store<std::uint64_t>(io, [&](auto done) { store->events().flush(done); }));
  }

  nlohmann::json call(const std::string& method, const nlohmann::json& params) {
    return call_method(io, dispatcher, peer, method, params);
  }

  // A new session of `agent` in `cwd`; its id.
  std::string create(const std::string& agent, const std::string& cwd) {
    const auto created = call("session.create", {{"agent", agent}, {"cwd", cwd}});
    REQUIRE(created.contains("result"));
    return created.at("result").at("session").at("sessionId");
  }
};

}  // namespace switchboard::testing
