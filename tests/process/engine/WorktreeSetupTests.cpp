// A repository's set-up command in a new worktree session (setting worktrees.setup, docs/worktrees.md), through
// the engine with the scripted agent and the real store: it runs in the session's first turn before the prompt
// reaches the agent, as the turn's "setup" tool call; a failure ends the turn with SetupFailed and the next turn
// runs it again; once it succeeded it never runs again, a restart included.

#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "engine/Engine.h"
#include "support/EngineCalls.h"
#include "support/GitRepository.h"
#include "support/SchemaValidator.h"
#include "support/ScriptedAdapter.h"
#include "support/StoredEngineRun.h"
#include "support/TextFile.h"
#include "support/WorktreeEngineRun.h"
#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/Egress.h"
#include "worktree/SetupCommands.h"

namespace worktree_setup_tests {

using namespace switchboard;
using switchboard::testing::make_repository_with_one_commit;
using switchboard::testing::read_text_file;
using switchboard::testing::ScriptedAdapter;
using switchboard::testing::StoredEngineRun;
using switchboard::testing::WorktreeEngineRun;
using switchboard::testing::write_text_file;
namespace fs = std::filesystem;
namespace p = protocol;
using engine::EngineError;
using engine::Outcome;

engine::EngineConfig with_setup(const fs::path& repository, const std::string& command,
                                std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  engine::EngineConfig config;
  config.worktree_setup = worktree::SetupCommands({{repository.string(), command}}, limit);
  return config;
}

p::SessionInfo create(WorktreeEngineRun& w, const fs::path& cwd, const std::string& branch) {
  const auto outcome = w.create(cwd, p::WorktreeRequest{branch, std::nullopt});
  if (const auto* error = std::get_if<EngineError>(&*outcome)) FAIL(error->message);
  return std::get<p::SessionInfo>(*outcome);
}

// Sends a prompt the scripted agent answers with one message; waits for the turn's end unless `wait` is false.
std::optional<Outcome<p::SessionSendResult>> send(StoredEngineRun& run, const std::string& session, bool wait = true) {
  run.control->turns.push_back({ScriptedAdapter::Message{"done"}, ScriptedAdapter::End{}});
  p::SessionSendParams params;
  params.session_id = session;
  params.text = "go";
  params.wait = wait;
  std::optional<Outcome<p::SessionSendResult>> outcome;
  run.engine->send(params, [&](Outcome<p::SessionSendResult> result) { outcome = std::move(result); });
  REQUIRE(run.run_until([&] { return outcome.has_value(); }));
  return outcome;
}

template <class Event>
std::vector<Event> events_of(const StoredEngineRun& run) {
  std::vector<Event> found;
  for (const auto& event : run.events)
    if (const auto* data = std::get_if<Event>(&event.payload)) found.push_back(*data);
  return found;
}

std::vector<p::ToolStartedEvent> setup_calls(const StoredEngineRun& run) {
  std::vector<p::ToolStartedEvent> calls;
  for (const auto& started : events_of<p::ToolStartedEvent>(run))
    if (started.tool == "setup") calls.push_back(started);
  return calls;
}

std::optional<p::WorktreeSetup> last_announced_setup(const StoredEngineRun& run) {
  std::optional<p::WorktreeSetup> setup;
  for (const auto& updated : events_of<p::SessionUpdatedEvent>(run))
    if (updated.session.worktree) setup = updated.session.worktree->setup;
  return setup;
}

// Every event the session published, as clients get it, is valid against the schema.
void check_against_schema(const StoredEngineRun& run) {
  testing::SchemaValidator validator;
  for (const auto& event : run.events) {
    const auto wire = bus::bridge(event);
    if (!wire) continue;
    std::string text;
    bus::Egress::encode(*wire, 1, 0, text);
    INFO(text);
    CHECK(validator.validate_event(nlohmann::json::parse(text)).empty());
  }
}

TEST_CASE("worktree setup: the command runs in the first turn before the prompt reaches the agent, its output as "
          "the turn's setup tool call, and never again",
          "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup", {{"app.txt", "one\n"}}};
  const auto release = w.temp.path() / "release";
  auto& run = w.start(with_setup(w.repo, "echo preparing; echo on-stderr >&2\n"
                                         "while [ ! -f '" + release.string() + "' ]; do sleep 0.02; done\n"
                                         "pwd > made-by-setup.txt; echo ready"));
  const auto session = create(w, w.repo, "with-setup");
  REQUIRE(session.worktree);
  CHECK(session.worktree->setup == p::WorktreeSetup::Pending);
  const fs::path tree = session.worktree->path;

  send(run, session.session_id, /*wait=*/false);
  // The command waits for the test: meanwhile its output is out, and the agent has nothing.
  REQUIRE(run.run_until([&] {
    for (const auto& output : events_of<p::ToolOutputEvent>(run))
      if (output.text.find("on-stderr") != std::string::npos) return true;
    return false;
  }));
  CHECK(run.control->inputs.empty());
  CHECK(run.control->starts == 0);
  CHECK(!fs::exists(tree / "made-by-setup.txt"));
  write_text_file(release, "");
  REQUIRE(run.run_until([&] { return !events_of<p::TurnStoppedEvent>(run).empty(); }));

  REQUIRE(run.control->inputs.size() == 1);
  CHECK(run.control->inputs[0].text == "go");
  // made in the worktree's top, before the agent had the prompt
  CHECK(read_text_file(tree / "made-by-setup.txt") == fs::canonical(tree).string() + "\n");
  CHECK(!fs::exists(w.repo / "made-by-setup.txt"));
  const auto calls = setup_calls(run);
  REQUIRE(calls.size() == 1);
  const auto turn_id = events_of<p::TurnStartedEvent>(run).at(0).turn_id;
  CHECK(calls[0].turn_id == turn_id);
  CHECK(calls[0].input.at("command").get<std::string>().find("echo preparing") == 0);
  const auto completed = events_of<p::ToolCompletedEvent>(run);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0].tool_call_id == calls[0].tool_call_id);
  CHECK_FALSE(completed[0].is_error);
  CHECK(completed[0].output == "preparing\non-stderr\nready\n");
  CHECK(events_of<p::TurnStoppedEvent>(run).at(0).stop_reason == p::StopReason::EndTurn);
  CHECK(last_announced_setup(run) == p::WorktreeSetup::Done);

  // The second turn goes straight to the agent.
  const auto second = send(run, session.session_id);
  CHECK(std::get<p::SessionSendResult>(*second).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(run).size() == 1);
  CHECK(run.control->inputs.size() == 2);
  check_against_schema(run);
}

TEST_CASE("worktree setup: a failure ends the turn with SetupFailed before the agent has the prompt, leaves the "
          "worktree, and the next turn runs the command again",
          "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-fails", {{"app.txt", "one\n"}}};
  // Fails the first time (leaving a file behind), succeeds the second.
  auto& run = w.start(with_setup(w.repo, "if [ -f half-done ]; then echo second try; exit 0; fi\n"
                                         "touch half-done; echo broken; exit 3"));
  const auto session = create(w, w.repo, "failing-setup");
  const fs::path tree = session.worktree->path;

  const auto first = send(run, session.session_id);
  CHECK(std::get<p::SessionSendResult>(*first).stop_reason == p::StopReason::Error);
  CHECK(run.control->inputs.empty());
  CHECK(run.control->starts == 0);
  const auto errors = events_of<p::AgentErrorEvent>(run);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == static_cast<std::int64_t>(p::ErrorCode::SetupFailed));
  CHECK(errors[0].message.find("exited with code 3") != std::string::npos);
  const auto completed = events_of<p::ToolCompletedEvent>(run);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0].is_error);
  CHECK(completed[0].output == "broken\n[exited with code 3]");
  CHECK(events_of<p::TurnStoppedEvent>(run).at(0).error == errors[0].message);
  CHECK(last_announced_setup(run) == p::WorktreeSetup::Failed);
  CHECK(fs::exists(tree / "half-done"));  // left for the user to look at

  const auto second = send(run, session.session_id);
  CHECK(std::get<p::SessionSendResult>(*second).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(run).size() == 2);
  REQUIRE(run.control->inputs.size() == 1);
  CHECK(last_announced_setup(run) == p::WorktreeSetup::Done);
  check_against_schema(run);
}

TEST_CASE("worktree setup: cancelling the turn kills the command, and the next turn runs it again", "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-cancel", {{"app.txt", "one\n"}}};
  const auto pid_file = w.temp.path() / "setup.pid";
  auto& run = w.start(with_setup(w.repo, "if [ -f second ]; then exit 0; fi; touch second\n"
                                         "echo $$ > '" + pid_file.string() + "'; echo waiting; exec sleep 30"));
  const auto session = create(w, w.repo, "cancelled-setup");
  send(run, session.session_id, /*wait=*/false);
  REQUIRE(run.run_until([&] { return !events_of<p::ToolOutputEvent>(run).empty(); }));
  const auto pid = std::stoi(read_text_file(pid_file));
  REQUIRE(::kill(pid, 0) == 0);

  std::optional<Outcome<bool>> cancelled;
  run.engine->cancel(session.session_id, [&](Outcome<bool> result) { cancelled = std::move(result); });
  REQUIRE(run.run_until([&] { return !events_of<p::TurnStoppedEvent>(run).empty(); }));
  REQUIRE(cancelled.has_value());
  CHECK(std::get<bool>(*cancelled));
  CHECK(events_of<p::TurnStoppedEvent>(run).at(0).stop_reason == p::StopReason::Cancelled);
  const auto completed = events_of<p::ToolCompletedEvent>(run);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0].is_error);
  CHECK(run.control->inputs.empty());
  CHECK(run.run_until([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(10)));  // killed and reaped

  const auto second = send(run, session.session_id);
  CHECK(std::get<p::SessionSendResult>(*second).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(run).size() == 2);
  CHECK(run.control->inputs.size() == 1);
}

TEST_CASE("worktree setup: a shutdown while the command runs ends the turn for clients and for the waiting send, "
          "and the prompt comes back interrupted after the restart",
          "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-shutdown", {{"app.txt", "one\n"}}};
  const auto release = w.temp.path() / "release";
  const auto pid_file = w.temp.path() / "setup.pid";
  const auto runs = w.temp.path() / "runs.txt";
  // Waits for the test the first time; the run after the restart goes straight through.
  const auto config = with_setup(w.repo, "echo ran >> '" + runs.string() + "'\n"
                                         "if [ -f second ]; then exit 0; fi; touch second\n"
                                         "echo $$ > '" + pid_file.string() + "'; echo waiting\n"
                                         "while [ ! -f '" + release.string() + "' ]; do sleep 0.02; done");
  std::string session_id;
  {
    auto& run = w.start(config);
    session_id = create(w, w.repo, "shut-down-in-setup").session_id;
    p::SessionSendParams params;
    params.session_id = session_id;
    params.text = "go";
    params.wait = true;
    std::optional<Outcome<p::SessionSendResult>> sent;
    run.engine->send(params, [&](Outcome<p::SessionSendResult> result) { sent = std::move(result); });
    REQUIRE(run.run_until([&] { return !events_of<p::ToolOutputEvent>(run).empty(); }));
    const auto pid = std::stoi(read_text_file(pid_file));
    REQUIRE(!sent.has_value());

    bool done = false;
    bool answered_before_done = false;
    std::size_t published_before_done = 0;
    run.engine->shut_down(std::chrono::seconds(5), [&] {
      done = true;
      answered_before_done = sent.has_value();
      published_before_done = run.events.size();
    });
    REQUIRE(run.run_until([&] { return done; }, std::chrono::seconds(10)));
    // The waiting send had its turn's end, before the daemon went on to close its transports.
    CHECK(answered_before_done);
    REQUIRE(sent.has_value());
    REQUIRE(std::holds_alternative<p::SessionSendResult>(*sent));
    CHECK(std::get<p::SessionSendResult>(*sent).stop_reason == p::StopReason::Error);
    // Clients saw the set-up's tool call and the turn end before the shutdown was over.
    const std::vector<bus::BusEvent> before(run.events.begin(), run.events.begin() + static_cast<std::ptrdiff_t>(published_before_done));
    std::optional<p::ToolCompletedEvent> completed;
    std::optional<p::TurnStoppedEvent> stopped;
    for (const auto& event : before) {
      if (const auto* data = std::get_if<p::ToolCompletedEvent>(&event.payload)) completed = *data;
      if (const auto* data = std::get_if<p::TurnStoppedEvent>(&event.payload)) stopped = *data;
    }
    REQUIRE(completed.has_value());
    CHECK(completed->tool_call_id == setup_calls(run).at(0).tool_call_id);
    CHECK(completed->is_error);
    CHECK(completed->output == "[the daemon shut down]");
    REQUIRE(stopped.has_value());
    CHECK(stopped->stop_reason == p::StopReason::Error);
    CHECK(stopped->error == std::optional<std::string>("the daemon shut down before the turn ended"));
    CHECK(run.control->inputs.empty());
    CHECK(run.control->starts == 0);
    CHECK(run.run_until([&] { return ::kill(pid, 0) != 0; }, std::chrono::seconds(10)));  // killed and reaped
    check_against_schema(run);
  }
  auto& restarted = w.start(config);
  const auto attached = testing::attach(*restarted.engine, restarted.io, session_id);
  REQUIRE(std::holds_alternative<p::SessionAttachResult>(attached));
  const auto& snapshot = std::get<p::SessionAttachResult>(attached);
  CHECK(snapshot.session.state == p::SessionState::Interrupted);
  REQUIRE(snapshot.interrupted);
  CHECK(snapshot.interrupted->text == "go");
  REQUIRE(snapshot.session.worktree);
  CHECK(snapshot.session.worktree->setup != p::WorktreeSetup::Done);

  // Resumed, the prompt runs the set-up again first, then reaches the agent.
  restarted.control->turns.push_back({ScriptedAdapter::Message{"done"}, ScriptedAdapter::End{}});
  p::SessionResumeParams resume;
  resume.session_id = session_id;
  std::optional<Outcome<p::SessionSendResult>> resumed;
  restarted.engine->resume(resume, [&](Outcome<p::SessionSendResult> result) { resumed = std::move(result); });
  REQUIRE(restarted.run_until([&] { return resumed.has_value(); }));
  REQUIRE(std::holds_alternative<p::SessionSendResult>(*resumed));
  CHECK(std::get<p::SessionSendResult>(*resumed).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(restarted).size() == 1);
  CHECK(read_text_file(runs) == "ran\nran\n");
  REQUIRE(restarted.control->inputs.size() == 1);
  CHECK(restarted.control->inputs[0].text == "go");
}

// Calls `seen` with each message logged while it lives (the default logger's, from debug on), then puts the
// daemon's logger back.
class LogWatch {
 public:
  explicit LogWatch(std::function<void(const std::string&)> seen) : m_previous(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("watched", std::make_shared<Sink>(std::move(seen)));
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogWatch() { spdlog::set_default_logger(m_previous); }
  LogWatch(const LogWatch&) = delete;
  LogWatch& operator=(const LogWatch&) = delete;

 private:
  class Sink : public spdlog::sinks::base_sink<std::mutex> {
   public:
    explicit Sink(std::function<void(const std::string&)> seen) : m_seen(std::move(seen)) {}

   protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
      m_seen(std::string(message.payload.data(), message.payload.size()));
    }
    void flush_() override {}

   private:
    std::function<void(const std::string&)> m_seen;
  };
  std::shared_ptr<spdlog::logger> m_previous;
};

TEST_CASE("worktree setup: a cancel that arrives after the command succeeded, before its end was handled, keeps the "
          "success",
          "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-cancel-after-success", {{"app.txt", "one\n"}}};
  const auto runs = w.temp.path() / "runs.txt";
  auto& run = w.start(with_setup(w.repo, "echo ran >> '" + runs.string() + "'; echo ready"));
  const auto session = create(w, w.repo, "cancel-after-success");

  // The child's end is logged in the handler that hands it to the set-up run, which posts its report: a cancel
  // posted from that log line is queued before the report, so it runs in between, every time.
  bool posted = false;
  std::optional<Outcome<bool>> cancelled;
  {
    LogWatch watch([&](const std::string& line) {
      if (line != "worktree setup: exited with code 0" || posted) return;
      posted = true;
      boost::asio::post(run.io, [&] {
        run.engine->cancel(session.session_id, [&](Outcome<bool> result) { cancelled = std::move(result); });
      });
    });
    send(run, session.session_id, /*wait=*/false);
    REQUIRE(run.run_until([&] { return !events_of<p::TurnStoppedEvent>(run).empty(); }));
  }
  REQUIRE(posted);
  REQUIRE(cancelled.has_value());
  CHECK(std::get<bool>(*cancelled));
  CHECK(events_of<p::TurnStoppedEvent>(run).at(0).stop_reason == p::StopReason::Cancelled);
  CHECK(run.control->inputs.empty());
  // The command's success is what its tool call says and what the worktree remembers.
  const auto completed = events_of<p::ToolCompletedEvent>(run);
  REQUIRE(completed.size() == 1);
  CHECK_FALSE(completed[0].is_error);
  CHECK(completed[0].output == "ready\n");
  CHECK(last_announced_setup(run) == p::WorktreeSetup::Done);

  // So the next turn does not run it again.
  run.control->turns.clear();
  const auto second = send(run, session.session_id);
  CHECK(std::get<p::SessionSendResult>(*second).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(run).size() == 1);
  CHECK(read_text_file(runs) == "ran\n");
  REQUIRE(run.control->inputs.size() == 1);
}

TEST_CASE("worktree setup: a command past its time limit is killed and fails the turn", "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-limit", {{"app.txt", "one\n"}}};
  auto& run = w.start(with_setup(w.repo, "echo slow; sleep 30", std::chrono::milliseconds(300)));
  const auto session = create(w, w.repo, "slow-setup");
  const auto started = std::chrono::steady_clock::now();
  const auto first = send(run, session.session_id);
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(std::get<p::SessionSendResult>(*first).stop_reason == p::StopReason::Error);
  CHECK(run.control->inputs.empty());
  const auto errors = events_of<p::AgentErrorEvent>(run);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].code == static_cast<std::int64_t>(p::ErrorCode::SetupFailed));
  CHECK(errors[0].message.find("time limit") != std::string::npos);
}

TEST_CASE("worktree setup: a worktree of a repository without a command runs none, and one that succeeded does not run "
          "again after a restart",
          "[engine][worktree]") {
  WorktreeEngineRun w{"worktree-setup-restart", {{"app.txt", "one\n"}}};
  const auto other = w.temp.path() / "other";
  make_repository_with_one_commit(other, {{"other.txt", "one\n"}});
  const auto runs = w.temp.path() / "runs.txt";
  const auto config = with_setup(w.repo, "echo ran >> '" + runs.string() + "'");
  std::string session_id;
  {
    auto& run = w.start(config);
    const auto plain = create(w, other, "no-setup");
    CHECK(!plain.worktree->setup);
    CHECK(std::get<p::SessionSendResult>(*send(run, plain.session_id)).stop_reason == p::StopReason::EndTurn);
    CHECK(setup_calls(run).empty());
    CHECK(run.control->inputs.size() == 1);

    session_id = create(w, w.repo, "set-up-once").session_id;
    CHECK(std::get<p::SessionSendResult>(*send(run, session_id)).stop_reason == p::StopReason::EndTurn);
    CHECK(setup_calls(run).size() == 1);
    CHECK(read_text_file(runs) == "ran\n");
  }
  auto& restarted = w.start(config);
  CHECK(std::get<p::SessionSendResult>(*send(restarted, session_id)).stop_reason == p::StopReason::EndTurn);
  CHECK(setup_calls(restarted).empty());
  CHECK(restarted.control->inputs.size() == 1);
  CHECK(read_text_file(runs) == "ran\n");
}

}  // namespace worktree_setup_tests
