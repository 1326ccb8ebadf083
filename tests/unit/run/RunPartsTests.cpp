#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/PromptSource.h"
#include "run/RuleText.h"
#include "run/RunCommandLine.h"
#include "run/RunRecorder.h"
#include "support/Pipe.h"

// The parts of `switchboard run` that do no I/O of their own: the rule spelling, the limits, reading the prompt,
// and the recorder that turns the session's events into the result.

namespace run_parts_tests {

using nlohmann::json;
using namespace switchboard::run;
namespace p = switchboard::protocol;

TEST_CASE("run rules: Tool or Tool(glob), anything else refused with a reason", "[run]") {
  const auto tool = parse_rule("Bash");
  REQUIRE(std::holds_alternative<p::PermissionRule>(tool));
  CHECK(std::get<p::PermissionRule>(tool).tool == "Bash");
  CHECK_FALSE(std::get<p::PermissionRule>(tool).pattern);
  const auto glob = parse_rule("Bash(git push *)");
  REQUIRE(std::holds_alternative<p::PermissionRule>(glob));
  CHECK(std::get<p::PermissionRule>(glob).tool == "Bash");
  CHECK(std::get<p::PermissionRule>(glob).pattern == std::optional<std::string>("git push *"));
  // A glob may hold parentheses of its own: the rule's closes last.
  const auto nested = parse_rule("Bash(echo (a))");
  REQUIRE(std::holds_alternative<p::PermissionRule>(nested));
  CHECK(std::get<p::PermissionRule>(nested).pattern == std::optional<std::string>("echo (a)"));
  for (const char* bad : {"", "(ls)", "Bash(", "Bash()", "Bash)x", "Bash(ls) x"}) {
    INFO(bad);
    CHECK(std::holds_alternative<std::string>(parse_rule(bad)));
  }
}

TEST_CASE("run limits: plain seconds or a duration with its unit, above zero", "[run]") {
  CHECK(parse_limit("30") == std::chrono::milliseconds(30000));
  CHECK(parse_limit("500ms") == std::chrono::milliseconds(500));
  CHECK(parse_limit("90s") == std::chrono::milliseconds(90000));
  CHECK(parse_limit("2m") == std::chrono::milliseconds(120000));
  CHECK(parse_limit("1h") == std::chrono::milliseconds(3600000));
  for (const char* bad : {"", "0", "0s", "-1", "soon", "1.5", "10 s", "99999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_limit(bad));
  }
}

TEST_CASE("run prompt: standard input is read only for `-`", "[run]") {
  switchboard::testing::Pipe input;
  const std::string waiting = "not for the run\n";
  REQUIRE(::write(input.write_end(), waiting.data(), waiting.size()) == static_cast<ssize_t>(waiting.size()));
  SECTION("an argument, a file, or nothing: stdin stays unread") {
    auto argument = read_prompt(PromptSource{std::string("hello"), std::nullopt}, input.read_end());
    REQUIRE(argument.index() == 0);
    CHECK(std::get<0>(argument) == "hello");
    CHECK(read_prompt(PromptSource{}, input.read_end()).index() == 1);
    CHECK(read_prompt(PromptSource{std::nullopt, std::string("/nonexistent/prompt")}, input.read_end()).index() == 1);
    CHECK(read_prompt(PromptSource{std::string("a"), std::string("b")}, input.read_end()).index() == 1);
    // Everything the test wrote is still there.
    input.close_write();
    char buffer[64];
    CHECK(::read(input.read_end(), buffer, sizeof buffer) == static_cast<ssize_t>(waiting.size()));
  }
  SECTION("`-` reads it to its end") {
    input.close_write();
    auto read = read_prompt(PromptSource{std::string("-"), std::nullopt}, input.read_end());
    REQUIRE(read.index() == 0);
    CHECK(std::get<0>(read) == waiting);
  }
}

TEST_CASE("run flags: a usage error is found before standard input is read", "[run]") {
  switchboard::testing::Pipe input;  // the write end stays open: reading it would never end
  RunFlags flags;
  flags.prompt = {"-"};
  flags.on_ask = "sometimes";
  const auto checked = check_run_flags(flags, input.read_end());
  REQUIRE(std::holds_alternative<std::string>(checked));
  CHECK(std::get<std::string>(checked).find("--on-ask") != std::string::npos);
}

json event(const std::string& type, json data, const std::string& session = "s-1") {
  static std::int64_t seq = 0;
  return json{{"seq", ++seq}, {"type", type}, {"ts", 1}, {"sessionId", session}, {"data", std::move(data)}};
}

TEST_CASE("run recorder: the result holds the run's turn only, including what came before the send's reply", "[run]") {
  RunRecorder recorder("claude", /*attached=*/true);
  CHECK_FALSE(recorder.on_event(event("turn.started", {{"turnId", "t-1"}, {"text", "x"}})));  // no session yet
  recorder.set_session("s-1", "claude");
  CHECK(recorder.on_event(event("turn.started", {{"turnId", "t-1"}, {"text", "x"}})));
  CHECK(recorder.on_event(event("tool.started", {{"turnId", "t-1"}, {"toolCallId", "c-1"}, {"tool", "Bash"}, {"input", json::object()}})));
  CHECK_FALSE(recorder.on_event(event("tool.started", {{"turnId", "t-9"}, {"toolCallId", "c-9"}, {"tool", "Read"}, {"input", json::object()}}, "s-2")));
  recorder.set_turn("t-1");  // the reply: the held events now count
  recorder.on_event(event("tool.started", {{"turnId", "t-0"}, {"toolCallId", "c-0"}, {"tool", "Edit"}, {"input", json::object()}}));  // another turn
  recorder.on_event(event("tool.completed", {{"turnId", "t-1"}, {"toolCallId", "c-1"}, {"output", "x"}, {"isError", true}}));
  recorder.on_event(event("permission.requested", {{"request", {{"requestId", "r-1"}, {"sessionId", "s-1"}, {"turnId", "t-1"}, {"tool", "Bash"}, {"input", json::object()}, {"description", "d"}, {"reason", "r"}, {"state", "open"}, {"openedAt", 1}}}}));
  CHECK(recorder.is_open("r-1"));
  recorder.answered_by_run("r-1");
  recorder.on_event(event("permission.resolved", {{"requestId", "r-1"}, {"outcome", "denied"}, {"resolvedBy", "client"}, {"resolvedAt", 2}}));
  CHECK_FALSE(recorder.is_open("r-1"));
  CHECK(recorder.any_denied());
  CHECK_FALSE(recorder.turn_ended());
  recorder.on_event(event("turn.stopped", {{"turnId", "t-1"}, {"stopReason", "end_turn"}, {"text", "final"}, {"usage", {{"outputTokens", 3}}}}));
  CHECK(recorder.turn_ended());
  recorder.on_event(event("tool.started", {{"turnId", "t-1"}, {"toolCallId", "c-late"}, {"tool", "Bash"}, {"input", json::object()}}));
  const auto result = recorder.result(kRunBlocked, std::chrono::milliseconds(42));
  CHECK(result.status == p::RunStatus::Blocked);
  CHECK(result.exit_code == 4);
  CHECK(result.text == "final");
  CHECK(result.duration_ms == 42);
  CHECK(result.attached);
  REQUIRE(result.tools.size() == 1);
  CHECK(result.tools[0].tool_call_id == "c-1");
  CHECK(result.tools[0].is_error == std::optional<bool>(true));
  REQUIRE(result.permissions.size() == 1);
  CHECK(result.permissions[0].resolved_by == std::optional<std::string>("run"));
  CHECK(result.permissions[0].outcome == p::RunPermissionOutcome::Denied);
}

TEST_CASE("run recorder: a queued prompt's turn is the one whose turn.started names its queue id", "[run]") {
  RunRecorder recorder("claude", false);
  recorder.set_session("s-1", "claude");
  recorder.set_queue_id("q-7");
  recorder.on_event(event("turn.stopped", {{"turnId", "t-other"}, {"stopReason", "end_turn"}, {"text", "not ours"}}));
  CHECK_FALSE(recorder.turn_ended());
  recorder.on_event(event("turn.started", {{"turnId", "t-mine"}, {"text", "x"}, {"queueId", "q-7"}}));
  CHECK(recorder.turn_id() == std::optional<std::string>("t-mine"));
  recorder.on_event(event("turn.stopped", {{"turnId", "t-mine"}, {"stopReason", "end_turn"}, {"text", "ours"}}));
  CHECK(recorder.turn_ended());
  CHECK(recorder.result(kRunCompleted, {}).text == "ours");
}

TEST_CASE("run exit codes: each stands for one status", "[run]") {
  CHECK(status_of(kRunCompleted) == p::RunStatus::Completed);
  CHECK(status_of(kRunFailed) == p::RunStatus::Failed);
  CHECK(status_of(kRunInvalid) == p::RunStatus::Invalid);
  CHECK(status_of(kRunUnavailable) == p::RunStatus::Unavailable);
  CHECK(status_of(kRunBlocked) == p::RunStatus::Blocked);
  CHECK(status_of(kRunTimedOut) == p::RunStatus::Timeout);
  CHECK(status_of(kRunInterrupted) == p::RunStatus::Interrupted);
  CHECK(status_of(kRunTerminated) == p::RunStatus::Interrupted);
}

}  // namespace run_parts_tests
