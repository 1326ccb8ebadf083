#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/McpServerList.h"
#include "run/McpConfigFile.h"
#include "run/PromptSource.h"
#include "run/RuleText.h"
#include "run/RunCommandLine.h"
#include "run/RunRecorder.h"
#include "support/Pipe.h"
#include "support/TempDir.h"

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

// The run learns that the daemon took its answer from the reply to permission.respond, which may come after the
// request's resolution; an ask a rule decided first (the run's answer then refused) stays the rule's.
TEST_CASE("run recorder: the run's answer is named once the daemon took it, before or after the resolution", "[run]") {
  RunRecorder recorder("claude", /*attached=*/false);
  recorder.set_session("s-1", "claude");
  recorder.set_turn("t-1");
  recorder.on_event(event("turn.started", {{"turnId", "t-1"}, {"text", "x"}}));
  for (const auto* id : {"r-late", "r-rule"}) {
    recorder.on_event(event("permission.requested", {{"request", {{"requestId", id}, {"sessionId", "s-1"}, {"turnId", "t-1"}, {"tool", "Bash"}, {"input", json::object()}, {"description", "d"}, {"reason", "r"}, {"state", "open"}, {"openedAt", 1}}}}));
  }
  recorder.on_event(event("permission.resolved", {{"requestId", "r-late"}, {"outcome", "denied"}, {"resolvedBy", "client"}, {"resolvedAt", 2}}));
  recorder.answered_by_run("r-late");  // the reply came after the resolution
  recorder.on_event(event("permission.resolved", {{"requestId", "r-rule"}, {"outcome", "allowed"}, {"resolvedBy", "rule"}, {"resolvedAt", 2}}));
  const auto result = recorder.result(kRunCompleted, std::chrono::milliseconds(1));
  REQUIRE(result.permissions.size() == 2);
  CHECK(result.permissions[0].resolved_by == std::optional<std::string>("run"));
  CHECK(result.permissions[1].resolved_by == std::optional<std::string>("rule"));
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

TEST_CASE("run recorder: the context usage is the last usage.updated of the run's turn", "[run]") {
  RunRecorder recorder("claude", false);
  recorder.set_session("s-1", "claude");
  // Before the send's reply: held, then counted once the turn is known.
  recorder.on_event(event("usage.updated", {{"turnId", "t-1"}, {"usage", {{"usedTokens", 100}}}}));
  recorder.set_turn("t-1");
  CHECK(recorder.result(kRunCompleted, {}).context_usage.value_or(p::ContextUsage{}).used_tokens == 100);
  recorder.on_event(event("usage.updated", {{"turnId", "t-1"}, {"usage", {{"usedTokens", 1500}, {"windowTokens", 200000}, {"costUsd", 0.25}}}}));
  recorder.on_event(event("usage.updated", {{"turnId", "t-other"}, {"usage", {{"usedTokens", 9}}}}));  // another turn
  recorder.on_event(event("usage.updated", {{"usage", {{"usedTokens", 1700}, {"windowTokens", 200000}}}}));  // no turn: this one's
  recorder.on_event(event("turn.stopped", {{"turnId", "t-1"}, {"stopReason", "end_turn"}, {"text", "x"}}));
  recorder.on_event(event("usage.updated", {{"usage", {{"usedTokens", 5}}}}));  // after the run's turn
  const auto usage = recorder.result(kRunCompleted, {}).context_usage;
  REQUIRE(usage);
  CHECK(usage->used_tokens == 1700);
  CHECK(usage->window_tokens == std::optional<std::int64_t>(200000));
  CHECK_FALSE(usage->cost_usd);

  RunRecorder none("claude", false);  // an agent that reports none: no contextUsage at all
  none.set_session("s-1", "claude");
  none.set_turn("t-1");
  none.on_event(event("turn.stopped", {{"turnId", "t-1"}, {"stopReason", "end_turn"}, {"text", "x"}}));
  CHECK_FALSE(none.result(kRunCompleted, {}).context_usage);
}

TEST_CASE("run --mcp-config: the common mcpServers form, stdio and http, into session.create's list", "[run]") {
  const auto parsed = parse_mcp_config(R"({"mcpServers": {
      "files": {"command": "npx", "args": ["-y", "server-files", "/tmp"], "env": {"TOKEN": "t"}},
      "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
      "plain": {"type": "stdio", "command": "mcp-plain"},
      "hinted": {"url": "http://127.0.0.1:9/other"}}})");
  REQUIRE(parsed.index() == 0);
  const auto param = switchboard::client::mcp_servers_param(std::get<0>(parsed));
  CHECK(param == json::parse(R"([
      {"name": "docs", "transport": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}},
      {"name": "files", "transport": "stdio", "command": "npx", "args": ["-y", "server-files", "/tmp"], "env": {"TOKEN": "t"}},
      {"name": "hinted", "transport": "http", "url": "http://127.0.0.1:9/other"},
      {"name": "plain", "transport": "stdio", "command": "mcp-plain"}])"));

  const auto why = [](const std::string& text) {
    const auto outcome = parse_mcp_config(text);
    REQUIRE(outcome.index() == 1);
    return std::get<1>(outcome);
  };
  CHECK(why("{nope") == "it is not JSON");
  CHECK(why(R"({"servers": {}})").find("\"mcpServers\"") != std::string::npos);
  CHECK(why(R"({"mcpServers": {}})") == "mcpServers names no server");
  CHECK(why(R"({"mcpServers": {"a": {"args": ["x"]}}})") == "mcpServers.a.command: a stdio server needs a command");
  CHECK(why(R"({"mcpServers": {"a": {"type": "http"}}})") == "mcpServers.a.url: an http server needs a url");
  CHECK(why(R"({"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}})") == "mcpServers.a.env.N: expected a string");
  CHECK(why(R"({"mcpServers": {"a": {"command": "x", "args": "-v"}}})").starts_with("mcpServers.a.args: expected array"));
  CHECK(why(R"({"mcpServers": {"a": {"command": "x", "args": ["-v", 2]}}})").starts_with("mcpServers.a.args.1: expected string"));
  CHECK(why(R"({"mcpServers": {"a": {"type": 7, "command": "x"}}})").starts_with("mcpServers.a.type: expected one of"));
  CHECK(why(R"({"mcpServers": {"a": {"type": "sse", "url": "u"}}})").find("stdio and http") != std::string::npos);
  CHECK(why(R"({"mcpServers": {"a": {"command": "x", "url": "http://127.0.0.1:9/mcp"}}})") ==
        "mcpServers.a.url: a stdio server takes command, args and env");
  // Fields the wire does not know (an editor's own settings) are left behind, not refused.
  CHECK(parse_mcp_config(R"({"mcpServers": {"a": {"command": "x", "disabled": false}}})").index() == 0);
}

TEST_CASE("run --mcp-config: the schema's limits are the file's, and what the file cannot be is said as it is", "[run]") {
  const auto why = [](const std::string& text) {
    const auto outcome = parse_mcp_config(text);
    REQUIRE(outcome.index() == 1);
    return std::get<1>(outcome);
  };
  const std::string long_name(65, 'n');
  CHECK(why(R"({"mcpServers": {")" + long_name + R"(": {"command": "x"}}})") ==
        "mcpServers." + long_name + ": its name: expected string of at most 64 characters, not string of 65 bytes");
  CHECK(parse_mcp_config(R"({"mcpServers": {")" + std::string(64, 'n') + R"(": {"command": "x"}}})").index() == 0);

  const auto servers = [](int count) {
    json file{{"mcpServers", json::object()}};
    for (int i = 0; i < count; ++i) file["mcpServers"]["s" + std::to_string(i)] = json{{"command", "x"}};
    return file.dump();
  };
  CHECK(why(servers(33)) == "mcpServers: at most 32 MCP servers, not 33");
  CHECK(parse_mcp_config(servers(32)).index() == 0);

  switchboard::testing::TempDir tmp{"mcp-config"};
  const auto read_why = [](const std::filesystem::path& file) {
    const auto outcome = read_mcp_config(file);
    REQUIRE(outcome.index() == 1);
    return std::get<1>(outcome);
  };
  CHECK(read_why(tmp.path() / "absent.json") == "No such file or directory");
  CHECK(read_why(tmp.path()) == "it is a directory");
  std::ofstream(tmp.path() / "file.json") << R"({"mcpServers": {"a": {"command": "x"}}})";
  CHECK(read_mcp_config(tmp.path() / "file.json").index() == 0);
  CHECK(read_why(tmp.path() / "file.json" / "below") == "Not a directory");
  std::ofstream(tmp.path() / "big.json") << std::string(1024 * 1024 + 1, ' ');
  CHECK(read_why(tmp.path() / "big.json") == "it is over 1 MiB");
  // Without read permission (root reads any file, so only another user sees this refusal).
  std::filesystem::permissions(tmp.path() / "file.json", std::filesystem::perms::none);
  if (::geteuid() != 0) CHECK(read_why(tmp.path() / "file.json") == "Permission denied");
}

TEST_CASE("run flags: --mcp-config and --fork are checked before anything starts", "[run]") {
  switchboard::testing::TempDir tmp{"run-flags"};
  const auto check = [&](RunFlags flags) {
    flags.prompt = {"go"};
    flags.cwd = tmp.path().string();
    return check_run_flags(flags, -1);
  };
  const auto config = tmp.path() / "mcp.json";
  std::ofstream(config) << R"({"mcpServers": {"echo": {"command": "python3", "args": ["server.py"]}}})";
  RunFlags with_config;
  with_config.mcp_config = config.string();
  const auto good = check(with_config);
  REQUIRE(std::holds_alternative<RunOptions>(good));
  REQUIRE(std::get<RunOptions>(good).mcp_servers.size() == 1);
  CHECK(std::get<RunOptions>(good).mcp_servers[0].command == std::optional<std::string>("python3"));

  const auto error = [&](RunFlags flags) {
    const auto checked = check(std::move(flags));
    REQUIRE(std::holds_alternative<std::string>(checked));
    return std::get<std::string>(checked);
  };
  RunFlags missing;
  missing.mcp_config = (tmp.path() / "absent.json").string();
  CHECK(error(missing).find("No such file or directory") != std::string::npos);
  RunFlags broken = with_config;
  std::ofstream(tmp.path() / "broken.json") << R"({"mcpServers": {"x": {}}})";
  broken.mcp_config = (tmp.path() / "broken.json").string();
  CHECK(error(broken).find("mcpServers.x.command: a stdio server needs a command") != std::string::npos);
  RunFlags continued = with_config;
  continued.session = "s-1";
  CHECK(error(continued).find("--mcp-config is for a new session") != std::string::npos);

  RunFlags fork;
  fork.fork = "s-1";
  REQUIRE(std::holds_alternative<RunOptions>(check(fork)));
  CHECK(std::get<RunOptions>(check(fork)).fork_of == std::optional<std::string>("s-1"));
  RunFlags fork_and_continue = fork;
  fork_and_continue.continue_newest = true;
  CHECK(error(fork_and_continue).find("--fork") != std::string::npos);
  RunFlags fork_ephemeral = fork;
  fork_ephemeral.ephemeral = true;
  CHECK(error(fork_ephemeral).find("--ephemeral") != std::string::npos);
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
