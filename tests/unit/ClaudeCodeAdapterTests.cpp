#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <string>

#include <boost/asio/io_context.hpp>

#include "claude-code/ClaudeCodeAdapter.h"
#include "support/ClaudeRecordingSink.h"

// The Claude Code adapter's plumbing (translator and adapter together, a real process, real pipes) against
// tests/support/fake_claude.py, a stand-in CLI that needs no model and no installed Claude Code.

using namespace switchboard;
using namespace switchboard::adapters;
using namespace switchboard::adapters::claude;

namespace {

const std::string kFakeClaude = std::string(SWITCHBOARD_SOURCE_DIR) + "/tests/support/fake_claude.py";

// Sets an environment variable for one test (the adapter passes the test process's environment on).
struct ScopedVariable {
  std::string name;
  ScopedVariable(std::string variable, const std::string& value) : name(std::move(variable)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedVariable() { ::unsetenv(name.c_str()); }
};

template <class Predicate>
bool run_until(boost::asio::io_context& io, Predicate done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return done();
}

struct Started {
  boost::asio::io_context io{1};
  testing::ClaudeRecordingSink sink;
  std::unique_ptr<ClaudeCodeAdapter> adapter;

  Started() {
    ClaudeCodeConfig config;
    config.executable = kFakeClaude;
    config.timeouts.stop_grace = std::chrono::milliseconds(2000);
    adapter = std::make_unique<ClaudeCodeAdapter>(io, sink, config);
    std::optional<std::optional<AdapterError>> started;
    adapter->start(StartOptions{"s-test", SWITCHBOARD_SOURCE_DIR, std::nullopt, std::nullopt, std::nullopt},
                   [&](std::optional<AdapterError> error) { started = error; });
    REQUIRE(run_until(io, [&] { return started.has_value(); }));
    REQUIRE_FALSE(started->has_value());
  }
  ~Started() {
    adapter->stop();
    run_until(io, [&] { return !sink.lines.empty() && sink.lines.back().starts_with("stopped"); });
  }

  std::size_t count_starting(const std::string& prefix) const {
    return static_cast<std::size_t>(std::count_if(sink.lines.begin(), sink.lines.end(), [&](const std::string& line) { return line.starts_with(prefix); }));
  }
};

}  // namespace

TEST_CASE("claude adapter: a model or mode switch the CLI refuses is reported as one agent error", "[claude][adapter]") {
  ScopedVariable refuse("FAKE_CLAUDE_REFUSE", "set_model,set_permission_mode");
  Started claude;
  // Both calls are accepted (the CLI answers later); the refusal arrives as an error, once each.
  CHECK_FALSE(claude.adapter->set_model("claude-nonexistent"));
  REQUIRE(run_until(claude.io, [&] { return claude.count_starting("error") >= 1; }));
  CHECK_FALSE(claude.adapter->set_mode("plan"));
  REQUIRE(run_until(claude.io, [&] { return claude.count_starting("error") >= 2; }));
  // A prompt answered afterwards proves that every line the CLI wrote before it was read.
  claude.adapter->send(TurnInput{"t1", "hello", {}, std::nullopt});
  REQUIRE(run_until(claude.io, [&] { return claude.count_starting("turn_end") == 1; }));
  INFO(nlohmann::json(claude.sink.lines).dump(1));
  CHECK(claude.count_starting("error") == 2);
  CHECK(claude.count_starting(R"(error recoverable "Claude Code refused set_model: refused set_model")") == 1);
  CHECK(claude.count_starting(R"(error recoverable "Claude Code refused set_permission_mode: refused set_permission_mode")") == 1);
}
