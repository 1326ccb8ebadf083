#include <catch2/catch.hpp>

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "claude-code/ClaudeCodeAdapter.h"
#include "claude-code/ClaudeMessages.h"
#include "support/ClaudeRecordingSink.h"
#include "support/RunHandlersUntil.h"
#include "support/SourceTree.h"

// The Claude Code adapter's plumbing (translator and adapter together, a real process, real pipes) against
// tests/support/fake_claude.py, a stand-in CLI that needs no model and no installed Claude Code.

namespace claude_code_adapter_tests {

using namespace switchboard;
using namespace switchboard::adapters;
using namespace switchboard::adapters::claude;
using switchboard::testing::run_handlers_until;

const std::string kFakeClaude = switchboard::testing::source_path("tests/support/fake_claude.py");

// Sets an environment variable for one test (the adapter passes the test process's environment on).
struct ScopedVariable {
  std::string name;
  ScopedVariable(std::string variable, const std::string& value) : name(std::move(variable)) { ::setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedVariable() { ::unsetenv(name.c_str()); }
};

struct Started {
  boost::asio::io_context io{1};
  testing::ClaudeRecordingSink sink;
  std::unique_ptr<ClaudeCodeAdapter> adapter;

  explicit Started(std::vector<std::pair<std::string, std::string>> options = {}) {
    ClaudeCodeConfig config;
    config.executable = kFakeClaude;
    config.timeouts.stop_grace = std::chrono::milliseconds(2000);
    adapter = std::make_unique<ClaudeCodeAdapter>(io, sink, config);
    std::optional<std::optional<AdapterError>> started;
    StartOptions start{"s-test", SWITCHBOARD_SOURCE_DIR, std::nullopt, std::nullopt, std::nullopt};
    start.options = std::move(options);
    adapter->start(start, [&](std::optional<AdapterError> error) { started = error; });
    REQUIRE(run_handlers_until(io, [&] { return started.has_value(); }));
    REQUIRE_FALSE(started->has_value());
  }
  ~Started() {
    adapter->stop();
    run_handlers_until(io, [&] { return !sink.lines.empty() && sink.lines.back().starts_with("stopped"); });
  }

  std::size_t count_starting(const std::string& prefix) const {
    return static_cast<std::size_t>(std::count_if(sink.lines.begin(), sink.lines.end(), [&](const std::string& line) { return line.starts_with(prefix); }));
  }
};

TEST_CASE("claude adapter: a model or mode switch completes with the CLI's answer, a refusal is no agent error", "[claude][adapter]") {
  ScopedVariable refuse("FAKE_CLAUDE_REFUSE", "set_model,set_permission_mode");
  Started claude;
  // Neither call completes before the CLI answered; each then completes once, with the CLI's refusal.
  std::vector<std::optional<AdapterError>> model;
  std::vector<std::optional<AdapterError>> mode;
  claude.adapter->set_model("claude-nonexistent", [&](std::optional<AdapterError> error) { model.push_back(error); });
  claude.adapter->set_mode("plan", [&](std::optional<AdapterError> error) { mode.push_back(error); });
  CHECK(model.empty());
  CHECK(mode.empty());
  REQUIRE(run_handlers_until(claude.io, [&] { return !model.empty() && !mode.empty(); }));
  // A prompt answered afterwards proves that every line the CLI wrote before it was read.
  claude.adapter->send(TurnInput{"t1", "hello", {}, std::nullopt});
  REQUIRE(run_handlers_until(claude.io, [&] { return claude.count_starting("turn_end") == 1; }));
  INFO(nlohmann::json(claude.sink.lines).dump(1));
  REQUIRE(model.size() == 1);
  REQUIRE(model[0]);
  CHECK(model[0]->code == protocol::ErrorCode::Unsupported);
  CHECK(model[0]->message == "Claude Code refused set_model: refused set_model");
  REQUIRE(mode.size() == 1);
  REQUIRE(mode[0]);
  CHECK(mode[0]->code == protocol::ErrorCode::Unsupported);
  CHECK(mode[0]->message == "Claude Code refused set_permission_mode: refused set_permission_mode");
  CHECK(claude.count_starting("error") == 0);
}

TEST_CASE("claude adapter: a model or mode switch the CLI accepts completes without error", "[claude][adapter]") {
  Started claude;
  std::vector<std::optional<AdapterError>> answers;
  claude.adapter->set_model("claude-other", [&](std::optional<AdapterError> error) { answers.push_back(error); });
  claude.adapter->set_mode("plan", [&](std::optional<AdapterError> error) { answers.push_back(error); });
  REQUIRE(run_handlers_until(claude.io, [&] { return answers.size() == 2; }));
  CHECK_FALSE(answers[0]);
  CHECK_FALSE(answers[1]);
  CHECK(claude.count_starting("error") == 0);
}

TEST_CASE("claude adapter: an effort stored for the session that the CLI does not take is left out: the start works and says so", "[claude][adapter]") {
  Started claude(std::vector<std::pair<std::string, std::string>>{{"effort", "ludicrous"}});
  REQUIRE(run_handlers_until(claude.io, [&] { return claude.count_starting("error") == 1 && !claude.sink.options.empty(); }));
  INFO(nlohmann::json(claude.sink.lines).dump(1));
  const auto error = std::find_if(claude.sink.lines.begin(), claude.sink.lines.end(), [](const std::string& line) { return line.starts_with("error"); });
  CHECK(error->starts_with("error recoverable "));
  CHECK(error->find("ludicrous") != std::string::npos);
  // The option as it is in force: the default.
  const auto& offered = claude.sink.options.back().options;
  const auto effort = std::find_if(offered.begin(), offered.end(), [](const protocol::SessionOption& option) { return option.id == "effort"; });
  REQUIRE(effort != offered.end());
  CHECK(effort->current_value == std::string(kDefaultEffort));
  // And the session works.
  claude.adapter->send(TurnInput{"t1", "hello", {}, std::nullopt});
  REQUIRE(run_handlers_until(claude.io, [&] { return claude.count_starting("turn_end") == 1; }));
}

}  // namespace claude_code_adapter_tests
