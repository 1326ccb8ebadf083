#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/Engine.h"
#include "support/EngineCalls.h"
#include "support/ScriptedAdapter.h"
#include "switchboard/bus/EventBus.h"

// The engine sealed by the daemon's shutdown: daemon.shutdown is the last event clients see, so nothing the
// engine does afterwards reaches the bus, whether a session or the engine itself (a creation, an update, a
// deletion, a rule) publishes it.

namespace engine_seal_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
namespace p = protocol;

struct SealedEngine {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  engine::Engine engine{io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)}};
  std::vector<std::string> published;
  bus::Subscription recorder =
      bus.subscribe_all([this](const bus::BusEvent& e) { published.emplace_back(p::event_info(e.kind()).type); });

  void settle() {
    io.restart();
    while (io.poll() > 0) {
    }
  }

  std::string create() {
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = std::filesystem::temp_directory_path().string();
    std::optional<engine::Outcome<p::SessionInfo>> outcome;
    engine.create_session(params, [&](engine::Outcome<p::SessionInfo> result) { outcome = std::move(result); });
    settle();
    REQUIRE(outcome);
    REQUIRE(std::holds_alternative<p::SessionInfo>(*outcome));
    return std::get<p::SessionInfo>(*outcome).session_id;
  }

  void shut_down() {
    bool done = false;
    engine.shut_down(std::chrono::seconds(5), [&] { done = true; });
    settle();
    REQUIRE(done);
    REQUIRE(engine.sealed());
  }
};

TEST_CASE("engine: once the shutdown sealed it, no call publishes anything, the engine's own events included", "[engine]") {
  SealedEngine f;
  const auto kept = f.create();
  const auto deleted = f.create();
  const auto rule = std::get<p::RememberedRule>(testing::add_session_rule(f.engine, f.io, kept, p::PermissionRule{"Bash", std::nullopt}, true));
  REQUIRE_FALSE(f.published.empty());  // the recorder hears the engine before the seal
  f.shut_down();
  f.published.clear();

  // Each of these published through its own door before the seal was the engine's one door.
  std::optional<engine::Outcome<p::SessionInfo>> created;
  p::SessionCreateParams params;
  params.agent = "scripted";
  params.cwd = std::filesystem::temp_directory_path().string();
  f.engine.create_session(params, [&](engine::Outcome<p::SessionInfo> outcome) { created = std::move(outcome); });
  std::optional<engine::Outcome<p::SessionInfo>> renamed;
  f.engine.rename(kept, "after the shutdown", [&](engine::Outcome<p::SessionInfo> outcome) { renamed = std::move(outcome); });
  std::optional<std::optional<engine::EngineError>> gone;
  f.engine.delete_session(deleted, [&](std::optional<engine::EngineError> error) { gone = std::move(error); });
  testing::add_session_rule(f.engine, f.io, kept, p::PermissionRule{"Edit", std::nullopt}, false);
  std::optional<std::optional<engine::EngineError>> removed;
  f.engine.remove_rule(rule.rule_id, [&](std::optional<engine::EngineError> error) { removed = std::move(error); });
  f.settle();

  // The calls themselves are answered (what the daemon does with calls after its shutdown is its own affair);
  // clients only hear nothing more.
  CHECK(created);
  CHECK(renamed);
  CHECK(gone);
  CHECK(removed);
  CHECK(f.published == std::vector<std::string>{});
}

}  // namespace engine_seal_tests
