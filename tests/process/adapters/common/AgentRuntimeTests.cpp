#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "BuiltinAgents.h"
#include "common/CliRuntime.h"
#include "common/EnvironmentVariable.h"
#include "common/VersionProbe.h"
#include "engine/Engine.h"
#include "support/CapturedLog.h"
#include "support/ClaudeRecordingSink.h"
#include "support/ProcessTestSupport.h"
#include "support/ScriptedAdapter.h"
#include "switchboard/adapters/AgentRuntime.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/process/ExecutableLookup.h"

namespace agent_runtime_tests {

using namespace switchboard;
namespace p = protocol;
using testing::ScriptedAdapter;

// A runtime that records when it is asked to stop, and finishes its stop after `stop_delay` (never, if
// negative), like a shared server taking its time to exit.
class RecordingRuntime final : public adapters::AgentRuntime {
 public:
  RecordingRuntime(boost::asio::io_context& io, std::shared_ptr<ScriptedAdapter::Control> control, std::vector<std::string>& log)
      : m_io(io), m_control(std::move(control)), m_log(log), m_timer(io) {}

  p::AgentInfo info() const override {
    p::AgentInfo info;
    info.agent = "scripted";
    info.installed = true;
    info.version = "from-the-runtime";
    return info;
  }
  void begin_discovery() override { ++discoveries; }
  std::unique_ptr<adapters::AgentAdapter> create(adapters::AdapterListener& listener) override {
    ++created;
    return std::make_unique<ScriptedAdapter>(m_io, listener, m_control);
  }
  void stop(std::function<void()> done) override {
    m_log.push_back("runtime stop");
    if (stop_delay.count() < 0) return;
    m_timer.expires_after(stop_delay);
    m_timer.async_wait([this, done = std::move(done)](const boost::system::error_code&) {
      m_log.push_back("runtime stopped");
      done();
    });
  }

  std::chrono::milliseconds stop_delay{0};
  int created = 0;
  int discoveries = 0;  // calls of begin_discovery()

 private:
  boost::asio::io_context& m_io;
  std::shared_ptr<ScriptedAdapter::Control> m_control;
  std::vector<std::string>& m_log;
  boost::asio::steady_timer m_timer;
};

struct RuntimeWorld {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::vector<std::string> log;
  std::shared_ptr<RecordingRuntime> runtime = std::make_shared<RecordingRuntime>(io, control, log);
  std::unique_ptr<engine::Engine> engine;
  bus::Subscription stopped = bus.subscribe(p::EventKind::SessionState, [this](const bus::BusEvent& event) {
    if (std::get<p::SessionStateEvent>(event.payload).state == p::SessionState::Stopped) log.push_back("session stopped");
  });

  explicit RuntimeWorld(engine::EngineConfig config = {}) {
    std::vector<adapters::AgentDescriptor> agents{adapters::describe_runtime("scripted", runtime)};
    engine = std::make_unique<engine::Engine>(io, bus, std::move(agents), std::move(config));
    bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
  }

  // A live session: created and sent a prompt, so its adapter runs.
  void live_session() {
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = std::filesystem::temp_directory_path().string();
    std::string id;
    engine->create_session(params, [&](engine::Outcome<p::SessionInfo> outcome) {
      if (auto* info = std::get_if<p::SessionInfo>(&outcome)) id = info->session_id;
    });
    REQUIRE(testing::run_until(io, [&] { return !id.empty(); }));
    p::SessionSendParams send;
    send.session_id = id;
    send.text = "hello";
    send.wait = false;
    bool answered = false;
    engine->send(send, [&](auto) { answered = true; });
    REQUIRE(testing::run_until(io, [&] { return answered && control->starts == 1; }));
    testing::run_until(io, [] { return false; }, std::chrono::milliseconds(50));
  }

  // Shuts the engine down with `limit`; returns how long it took.
  std::chrono::milliseconds shut_down(std::chrono::milliseconds limit) {
    bool done = false;
    const auto began = std::chrono::steady_clock::now();
    engine->shut_down(limit, [&] {
      done = true;
      log.push_back("done");
    });
    REQUIRE(testing::run_until(io, [&] { return done; }));
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began);
  }
};

void write_script(const std::filesystem::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

adapters::VersionProbeSpec probe_spec(const std::string& executable) {
  adapters::VersionProbeSpec spec;
  spec.agent = "fake";
  spec.executable = executable;
  spec.install_hint = "(install the fake)";
  spec.parse_version = [](std::string_view output) -> std::optional<std::string> {
    if (!output.starts_with("fake ")) return std::nullopt;
    auto version = std::string(output.substr(5));
    while (!version.empty() && version.back() == '\n') version.pop_back();
    return version;
  };
  spec.capabilities.streaming = true;
  return spec;
}


TEST_CASE("agent runtime: the descriptor's discovery and adapters come from the agent's runtime", "[runtime]") {
  RuntimeWorld world;
  const auto agents = world.engine->list_agents();
  REQUIRE(agents.size() == 1);
  CHECK(agents[0].version == "from-the-runtime");
  world.live_session();
  CHECK(world.runtime->created == 1);
}

TEST_CASE("agent runtime: discovery begins with the engine, unless deferred: then at agents.list, not for a session", "[runtime]") {
  SECTION("at once") {
    RuntimeWorld world;
    CHECK(world.runtime->discoveries == 1);
  }
  SECTION("deferred (the daemon of a `switchboard run`)") {
    engine::EngineConfig config;
    config.defer_discovery = true;
    RuntimeWorld world(config);
    CHECK(world.runtime->discoveries == 0);
    world.live_session();  // a session starts on what discovery found without its probes
    CHECK(world.runtime->created == 1);
    CHECK(world.runtime->discoveries == 0);
    world.engine->list_agents();
    CHECK(world.runtime->discoveries >= 1);
  }
}

TEST_CASE("agent runtime: shutdown stops the sessions first, then the runtimes, then reports done", "[runtime]") {
  RuntimeWorld world;
  world.live_session();
  world.control->stop_delays = {std::chrono::milliseconds(40)};  // the session's CLI takes a while to exit
  world.runtime->stop_delay = std::chrono::milliseconds(40);
  world.shut_down(std::chrono::seconds(10));
  CHECK(world.log == std::vector<std::string>{"session stopped", "runtime stop", "runtime stopped", "done"});
}

TEST_CASE("agent runtime: with no session, shutdown still stops every runtime", "[runtime]") {
  RuntimeWorld world;
  world.shut_down(std::chrono::seconds(10));
  CHECK(world.log == std::vector<std::string>{"runtime stop", "runtime stopped", "done"});
}

TEST_CASE("agent runtime: a runtime that never finishes stopping is cut off by the same overall deadline", "[runtime]") {
  RuntimeWorld world;
  world.live_session();
  world.control->stop_delays = {std::chrono::milliseconds(100)};
  world.runtime->stop_delay = std::chrono::milliseconds(-1);
  const auto took = world.shut_down(std::chrono::milliseconds(400));
  CHECK(world.log == std::vector<std::string>{"session stopped", "runtime stop", "done"});
  // One deadline for both phases: not the session's 100 ms plus a fresh 400 ms for the runtimes.
  CHECK(took >= std::chrono::milliseconds(400));
  CHECK(took < std::chrono::milliseconds(490));
}

TEST_CASE("version probe: a CLI found on the path reports its version from `--version`", "[runtime][process]") {
  testing::TempDir dir{"runtime"};
  write_script(dir.path() / "fake-cli", "echo 'fake 1.2.3'");
  boost::asio::io_context io;
  auto probe = adapters::VersionProbe::start(io, probe_spec((dir.path() / "fake-cli").string()));
  CHECK(probe->info().installed);  // as far as the file system can tell, at once
  CHECK(probe->info().agent == "fake");
  CHECK(probe->info().capabilities.streaming);
  REQUIRE(testing::run_until(io, [&] { return probe->info().version.has_value(); }));
  CHECK(probe->info().version == "1.2.3");
  CHECK(probe->info().installed);
  CHECK(probe->info().path == (dir.path() / "fake-cli").string());
  CHECK(probe->executable() == (dir.path() / "fake-cli").string());
}

TEST_CASE("version probe: a missing CLI is reported at once with the install hint", "[runtime][process]") {
  boost::asio::io_context io;
  auto probe = adapters::VersionProbe::start(io, probe_spec("/nonexistent/fake-cli"));
  CHECK_FALSE(probe->info().installed);
  CHECK(probe->info().problem == "'/nonexistent/fake-cli' not found (install the fake)");
  CHECK(probe->executable() == "/nonexistent/fake-cli");
}

TEST_CASE("version probe: output that is not a version, or a failing exit, is the problem", "[runtime][process]") {
  testing::TempDir dir{"runtime"};
  const auto path = (dir.path() / "fake-cli").string();
  SECTION("not a version") { write_script(path, "echo 'Error: not installed'"); }
  SECTION("a version, but a failing exit") { write_script(path, "echo 'fake 1.0'; exit 3"); }
  boost::asio::io_context io;
  auto probe = adapters::VersionProbe::start(io, probe_spec(path));
  REQUIRE(testing::run_until(io, [&] { return !probe->info().installed; }));
  REQUIRE(probe->info().problem);
  CHECK(probe->info().problem->starts_with("'" + path + " --version' failed ("));
  CHECK_FALSE(probe->info().version);
}

TEST_CASE("version probe: a probe that hangs is killed at its deadline, and so is one still running at stop", "[runtime][process]") {
  testing::TempDir dir{"runtime"};
  const auto path = (dir.path() / "fake-cli").string();
  write_script(path, "exec sleep 30");
  boost::asio::io_context io;
  auto spec = probe_spec(path);
  testing::CapturedLog log("%l %v");
  const auto warned = [&] {
    const auto lines = log.lines();
    return std::any_of(lines.begin(), lines.end(), [](const std::string& line) { return line.starts_with("warning "); });
  };
  SECTION("deadline: a failure, warned about") {
    spec.timeout = std::chrono::milliseconds(100);
    auto probe = adapters::VersionProbe::start(io, spec);
    REQUIRE(testing::run_until(io, [&] { return !probe->info().installed; }, std::chrono::seconds(10)));
    CHECK(probe->info().problem->starts_with("'" + path + " --version' failed ("));
    CHECK(warned());
  }
  SECTION("stop: the daemon is going, which is no failure and warns nobody") {
    auto probe = adapters::VersionProbe::start(io, spec);
    probe->stop();
    REQUIRE(testing::run_until(io, [&] { return !probe->info().installed; }, std::chrono::seconds(10)));
    CHECK(probe->info().problem == "'" + path + " --version' was stopped before it answered");
    CHECK_FALSE(warned());
  }
}

TEST_CASE("cli runtime: adapters run the executable discovery found, and its stop ends the probe", "[runtime][process]") {
  testing::TempDir dir{"runtime"};
  const auto path = dir.path() / "fake-cli";
  write_script(path, "exec sleep 30");
  boost::asio::io_context io;
  auto control = std::make_shared<ScriptedAdapter::Control>();
  std::string executable_given;
  adapters::CliRuntime runtime(io, probe_spec(path.string()),
                               [&](adapters::AdapterListener& listener, const std::string& executable) {
                                 executable_given = executable;
                                 return std::make_unique<ScriptedAdapter>(io, listener, control);
                               });
  testing::ClaudeRecordingSink listener;  // any listener: the adapter is only made
  CHECK(runtime.create(listener) != nullptr);
  CHECK(executable_given == path.string());
  runtime.begin_discovery();
  bool stopped = false;
  runtime.stop([&] { stopped = true; });
  CHECK(stopped);
  REQUIRE(testing::run_until(io, [&] { return !runtime.info().installed; }, std::chrono::seconds(10)));
}

TEST_CASE("cli runtime: `--version` runs once discovery begins, once, and not before", "[runtime][process]") {
  testing::TempDir dir{"runtime"};
  const auto path = dir.path() / "fake-cli";
  const auto runs = dir.path() / "runs";
  write_script(path, "echo probed >> '" + runs.string() + "'; echo 'fake 1.2.3'");
  boost::asio::io_context io;
  auto control = std::make_shared<ScriptedAdapter::Control>();
  adapters::CliRuntime runtime(io, probe_spec(path.string()), [&](adapters::AdapterListener& listener, const std::string&) {
    return std::make_unique<ScriptedAdapter>(io, listener, control);
  });
  // Found on the path at once: a session could start.
  CHECK(runtime.info().installed);
  CHECK(runtime.info().path == path.string());
  testing::run_until(io, [] { return false; }, std::chrono::milliseconds(300));
  CHECK_FALSE(std::filesystem::exists(runs));
  CHECK_FALSE(runtime.info().version.has_value());

  runtime.begin_discovery();
  runtime.begin_discovery();
  REQUIRE(testing::run_until(io, [&] { return runtime.info().version.has_value(); }, std::chrono::seconds(10)));
  CHECK(runtime.info().version == "1.2.3");
  runtime.begin_discovery();
  testing::run_until(io, [] { return false; }, std::chrono::milliseconds(200));
  std::ifstream in(runs);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) ++count;
  CHECK(count == 1);
  bool stopped = false;
  runtime.stop([&] { stopped = true; });
  CHECK(stopped);
}

TEST_CASE("environment variable: an empty value counts as unset, for every variable an adapter reads", "[runtime]") {
  const char* name = "SWITCHBOARD_TEST_ENVIRONMENT_RULE";
  ::unsetenv(name);
  CHECK_FALSE(adapters::environment_variable(name));
  ::setenv(name, "", 1);
  CHECK_FALSE(adapters::environment_variable(name));
  ::setenv(name, "value", 1);
  CHECK(adapters::environment_variable(name) == "value");
  ::unsetenv(name);

  const char* path = std::getenv("PATH");
  const std::string saved = path != nullptr ? path : "";
  ::setenv("PATH", "", 1);
  const auto empty_path = adapters::executable_search_path();
  ::setenv("PATH", "/only/here", 1);
  const auto set_path = adapters::executable_search_path();
  ::setenv("PATH", saved.c_str(), 1);
  CHECK(empty_path == process::default_search_path());
  CHECK(set_path == "/only/here");
}

TEST_CASE("version probe: the install hint names each built-in agent's real key, flag and variable", "[runtime]") {
  CHECK(adapters::install_hint("claude") ==
        "(install it with scripts/install-agents claude, or configure agents.claude.bin: --claude-bin, "
        "SWITCHBOARD_CLAUDE_BIN or the config file)");
  for (const auto& agent : adapters::builtin_agent_entries()) {
    const std::string name(agent.name);
    INFO(name);
    if (name == "replay") continue;  // its stand-in for a CLI is this binary itself: nothing to install
    if (agent.make_named != nullptr) continue;  // agents the user names: their hint names their own table
    const auto hint = adapters::install_hint(agent.name);
    bool found = false;
    for (const auto& spec : agent.settings()) {
      if (spec.key != "agents." + name + ".bin") continue;
      found = true;
      CHECK(hint.find(std::string(spec.key) + ":") != std::string::npos);
      CHECK(hint.find(std::string(spec.flag) + ",") != std::string::npos);
      CHECK(hint.find(std::string(spec.env) + " ") != std::string::npos);
    }
    CHECK(found);
  }
}

}  // namespace agent_runtime_tests
