#include <catch2/catch.hpp>

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "claude-code/ClaudeCodeAdapter.h"
#include "e2e/AgentWorld.h"
#include "support/ClaudeRecordingSink.h"
#include "support/MockProvider.h"
#include "support/RunHandlersUntil.h"
#include "support/SourceTree.h"
#include "support/TempDir.h"

// The Claude Code adapter's controls (plans, context usage, commands, effort, MCP servers, fork, rewind, compact)
// with the real CLI against the mock provider, driven at the adapter: what the adapter reports, and what reached
// the model (the mock's request log). Skipped visibly without the CLI, failed under CI.

namespace claude_code_controls_e2e_tests {

namespace fs = std::filesystem;
using namespace switchboard;
using namespace switchboard::adapters;
using namespace switchboard::adapters::claude;
using Json = nlohmann::json;
using switchboard::testing::run_handlers_until;
namespace e2e = switchboard::testing::e2e;
namespace p = protocol;

constexpr auto kPatience = std::chrono::seconds(60);

struct LiveSink : testing::ClaudeRecordingSink {
  std::vector<std::vector<p::PlanEntry>> plans;
  std::vector<p::ContextUsage> usages;
  std::vector<std::vector<p::AgentCommand>> commands;
  std::vector<std::vector<p::SessionOption>> options;
  std::vector<std::vector<p::McpServerState>> mcp;
  std::vector<std::string> provider_sessions;
  void on_plan(PlanUpdate event) override { plans.push_back(std::move(event.entries)); }
  void on_usage(UsageUpdate event) override { usages.push_back(std::move(event.usage)); }
  void on_commands(CommandsOffered event) override { commands.push_back(std::move(event.commands)); }
  void on_options(OptionsOffered event) override { options.push_back(std::move(event.options)); }
  void on_mcp_status(McpStatusReport event) override { mcp.push_back(std::move(event.servers)); }
  void on_provider_session(ProviderSession event) override {
    provider_sessions.push_back(event.provider_session_id);
    testing::ClaudeRecordingSink::on_provider_session(std::move(event));
  }
};

const e2e::AgentProfile& profile() {
  static const e2e::AgentProfile claude = [] {
    e2e::AgentProfile p;
    p.agent = "claude";
    p.cli_name = "claude";
    p.cli_variable = "SWITCHBOARD_CLAUDE_BIN";
    return p;
  }();
  return claude;
}

Json script(Json turns) {
  return Json{{"rules", Json::array({Json{{"match", {{"system_contains", "sentence-case title"}}}, {"reply", {{"text", R"({"title": "Test"})"}}}}})},
              {"turns", std::move(turns)}};
}

// One test's world: a HOME, a working directory, the mock with the test's script, and the real CLI driven by one
// adapter at a time.
struct Live {
  testing::TempDir tmp{"claude-controls"};
  fs::path work = tmp.path() / "work";
  std::string cli = e2e::installed_cli("claude");
  std::unique_ptr<testing::MockProvider> mock;
  boost::asio::io_context io{1};
  LiveSink sink;
  std::unique_ptr<ClaudeCodeAdapter> adapter;

  explicit Live(const Json& turns) {
    fs::create_directories(work);
    mock = std::make_unique<testing::MockProvider>(tmp.path(), script(turns));
  }
  ~Live() { stop(); }

  bool ready() const { return !e2e::cli_missing(profile(), cli); }

  ClaudeCodeConfig config() const {
    ClaudeCodeConfig config;
    config.executable = cli;
    config.endpoint.base_url = mock->base_url();
    config.endpoint.api_key = "sk-mock";
    config.endpoint.config_dir = (tmp.path() / "home" / ".claude").string();
    config.timeouts.stop_grace = std::chrono::milliseconds(5000);
    return config;
  }

  void start(StartOptions options) {
    options.session_id = "s-controls";
    options.cwd = work.string();
    adapter = std::make_unique<ClaudeCodeAdapter>(io, sink, config());
    std::optional<std::optional<AdapterError>> started;
    adapter->start(options, [&](std::optional<AdapterError> error) { started = error; });
    REQUIRE(run_handlers_until(io, [&] { return started.has_value(); }, kPatience));
    INFO((*started ? (*started)->message : std::string()));
    REQUIRE_FALSE(started->has_value());
  }

  // One turn; its result.
  TurnResult turn(const std::string& text, std::optional<SlashCommand> command = std::nullopt) {
    const auto before = sink.turns.size();
    adapter->send(TurnInput{"t" + std::to_string(before + 1), text, {}, std::nullopt, std::move(command)});
    INFO(Json(sink.lines).dump(1));
    REQUIRE(run_handlers_until(io, [&] { return sink.turns.size() > before; }, kPatience));
    return sink.turns.back();
  }

  std::optional<AdapterError> await(const std::function<void(Completion)>& operation) {
    std::optional<std::optional<AdapterError>> outcome;
    operation([&](std::optional<AdapterError> error) { outcome = std::move(error); });
    REQUIRE(run_handlers_until(io, [&] { return outcome.has_value(); }, kPatience));
    return *outcome;
  }

  // A graceful stop (the CLI writes its conversation and exits).
  void stop() {
    if (!adapter) return;
    adapter->stop();
    run_handlers_until(io, [&] { return !sink.lines.empty() && sink.lines.back().starts_with("stopped"); }, std::chrono::seconds(20));
    adapter.reset();
  }

  Json last_request() const {
    const auto requests = mock->message_requests();
    REQUIRE_FALSE(requests.empty());
    return requests.back().at("body");
  }
};

bool mentions(const Json& body, const std::string& text) { return body.at("messages").dump().find(text) != std::string::npos; }

std::vector<int> pids_in(const fs::path& file) {
  std::vector<int> pids;
  std::ifstream in(file);
  int pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

bool alive(int pid) { return ::kill(pid, 0) == 0; }

TEST_CASE("claude controls e2e: the task list arrives as a plan each time it changes, usage rises with the right window, the effort set at start and later reaches the model", "[e2e][claude][controls]") {
  Live live(Json::array({
      Json{{"text", "Planning."}, {"tool_use", {{"name", "TaskCreate"}, {"input", {{"subject", "first step"}, {"description", "do the first"}}}}}},
      Json{{"match", {{"last_user_has_tool_result", true}}}, {"tool_use", {{"name", "TaskCreate"}, {"input", {{"subject", "second step"}, {"description", "do the second"}}}}}},
      Json{{"match", {{"last_user_has_tool_result", true}}}, {"tool_use", {{"name", "TaskUpdate"}, {"input", {{"taskId", "1"}, {"status", "in_progress"}}}}}},
      Json{{"match", {{"last_user_has_tool_result", true}}}, {"text", "Planned."}},
      Json{{"match", {{"last_user_text_contains", "effort please"}}}, {"text", "Less effort."}},
  }));
  if (!live.ready()) return;
  StartOptions options;
  options.options = {{"effort", "medium"}};
  live.start(options);

  // Offered at start: the effort option, in force as set, and the commands.
  REQUIRE_FALSE(live.sink.options.empty());
  REQUIRE(live.sink.options.back().size() == 1);
  CHECK(live.sink.options.back()[0].id == "effort");
  CHECK(live.sink.options.back()[0].current_value == "medium");
  REQUIRE_FALSE(live.sink.commands.empty());
  CHECK_FALSE(live.sink.commands.back().empty());

  const auto usages_before = live.sink.usages.size();
  const auto planned = live.turn("make a plan");
  CHECK(planned.text == "Planned.");
  INFO(Json(live.sink.lines).dump(1));
  REQUIRE(live.sink.plans.size() == 3);
  const auto names = [](const std::vector<p::PlanEntry>& plan) {
    std::vector<std::string> out;
    for (const auto& entry : plan) out.push_back(entry.content + "=" + std::string(p::to_string(entry.status)));
    return out;
  };
  CHECK(names(live.sink.plans[1]) == std::vector<std::string>{"first step=pending", "second step=pending"});
  CHECK(names(live.sink.plans[2]) == std::vector<std::string>{"first step=in_progress", "second step=pending"});

  // One usage per model request of the turn (4), rising as the conversation grows, then the turn's totals.
  std::vector<p::ContextUsage> during(live.sink.usages.begin() + static_cast<std::ptrdiff_t>(usages_before), live.sink.usages.end());
  REQUIRE(during.size() >= 5);
  for (std::size_t i = 1; i + 1 < during.size(); ++i) CHECK(during[i].used_tokens > during[i - 1].used_tokens);
  for (const auto& usage : during) CHECK(usage.window_tokens == 1000000);  // the default model, claude-opus-4-8[1m]
  CHECK(during.back().cost_usd.has_value());

  auto requests = live.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.front().at("body").at("output_config").at("effort") == "medium");

  CHECK_FALSE(live.await([&](Completion done) { live.adapter->set_option("effort", "low", std::move(done)); }));
  CHECK(live.sink.options.back()[0].current_value == "low");
  live.turn("effort please");
  CHECK(live.last_request().at("output_config").at("effort") == "low");
  // A value the CLI does not have is refused before it is sent.
  const auto refused = live.await([&](Completion done) { live.adapter->set_option("effort", "extreme", std::move(done)); });
  REQUIRE(refused);
  CHECK(refused->code == p::ErrorCode::Unsupported);
}

TEST_CASE("claude controls e2e: a project command is offered and /name reaches the model as the command, not as text", "[e2e][claude][controls]") {
  Live live(Json::array({Json{{"match", {{"last_user_text_contains", "Say hello to Bob loudly."}}}, {"text", "HELLO BOB"}}}));
  if (!live.ready()) return;
  fs::create_directories(live.work / ".claude" / "commands");
  std::ofstream(live.work / ".claude" / "commands" / "greet.md") << "---\ndescription: Greets someone\nargument-hint: <name>\n---\nSay hello to $ARGUMENTS loudly.\n";
  live.start(StartOptions{});
  REQUIRE_FALSE(live.sink.commands.empty());
  const auto& commands = live.sink.commands.back();
  const auto greet = std::find_if(commands.begin(), commands.end(), [](const p::AgentCommand& c) { return c.name == "greet"; });
  REQUIRE(greet != commands.end());
  CHECK(greet->argument_hint == "<name>");
  CHECK(std::none_of(commands.begin(), commands.end(), [](const p::AgentCommand& c) { return c.name == "clear" || c.name == "heapdump"; }));

  const auto result = live.turn("/greet Bob", SlashCommand{"greet", "Bob"});
  CHECK(result.text == "HELLO BOB");
  const auto body = live.last_request();
  // The CLI expanded its command: the model sees the command's body, marked as the command it came from.
  CHECK(mentions(body, "<command-name>/greet</command-name>"));
  CHECK(mentions(body, "Say hello to Bob loudly."));
}

TEST_CASE("claude controls e2e: an MCP server's tool reaches the model, a broken one is reported failed, and the server ends with the CLI", "[e2e][claude][controls]") {
  Live live(Json::array({Json{{"text", "Tools listed."}}}));
  if (!live.ready()) return;
  ::setenv("SWITCHBOARD_CONTROLS_SECRET", "never-passed-on", 1);
  const auto pid_file = live.tmp.path() / "mcp.pids";
  const auto env_file = live.tmp.path() / "mcp.env.json";
  p::McpServer echo;
  echo.name = "echoer";
  echo.transport = p::McpTransport::Stdio;
  echo.command = "python3";
  echo.args = std::vector<std::string>{testing::source_path("tests/support/mcp_stdio_server.py"), "--pid-file", pid_file.string(),
                                       "--env-file", env_file.string()};
  echo.env = Json{{"SB_MCP_GIVEN", "given"}};
  p::McpServer broken;
  broken.name = "broken";
  broken.transport = p::McpTransport::Stdio;
  broken.command = (live.tmp.path() / "no-such-server").string();
  StartOptions options;
  options.mcp_servers = {echo, broken};
  live.start(options);
  ::unsetenv("SWITCHBOARD_CONTROLS_SECRET");
  live.turn("which tools");

  const auto tools = live.last_request().at("tools").dump();
  CHECK(tools.find("mcp__echoer__sb_echo") != std::string::npos);
  INFO(Json(live.sink.lines).dump(1));
  REQUIRE(run_handlers_until(live.io, [&] {
    if (live.sink.mcp.empty()) return false;
    const auto& last = live.sink.mcp.back();
    return last.size() == 2 && last[0].status == p::McpServerStatusKind::Connected && last[1].status == p::McpServerStatusKind::Failed;
  }, kPatience));
  CHECK(live.sink.mcp.front()[0].status == p::McpServerStatusKind::Pending);
  const auto& failed = live.sink.mcp.back()[1];
  REQUIRE(failed.error);
  CHECK(failed.error->find("no-such-server") != std::string::npos);

  // What reached the server: the variables it was given, none of the daemon's own.
  const auto environment = Json::parse(std::ifstream(env_file), nullptr, false);
  REQUIRE(environment.is_object());
  CHECK(environment.value("SB_MCP_GIVEN", "") == "given");
  CHECK_FALSE(environment.contains("SWITCHBOARD_CONTROLS_SECRET"));
  // The configuration file (it may hold secrets) is gone once the CLI read it.
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path())) {
    if (!entry.path().filename().string().starts_with("switchboard-claude-mcp-")) continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find(pid_file.string()) == std::string::npos);
  }

  const auto pids = pids_in(pid_file);
  REQUIRE_FALSE(pids.empty());
  live.stop();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::any_of(pids.begin(), pids.end(), alive) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const int pid : pids) CHECK_FALSE(alive(pid));
}

TEST_CASE("claude controls e2e: a fork through a turn carries the conversation up to it and nothing after", "[e2e][claude][controls]") {
  Live live(Json::array({Json{{"text", "answer alpha"}}, Json{{"text", "answer beta"}}, Json{{"text", "answer gamma"}},
                         Json{{"match", {{"last_user_text_contains", "prompt delta"}}}, {"text", "answer delta"}}}));
  if (!live.ready()) return;
  live.start(StartOptions{});
  live.turn("prompt alpha");
  const auto beta = live.turn("prompt beta");
  live.turn("prompt gamma");
  REQUIRE(beta.native_turn_ref);
  REQUIRE(live.sink.turns[0].native_turn_ref);
  CHECK(*beta.native_turn_ref != *live.sink.turns[0].native_turn_ref);
  const auto original = live.sink.provider_sessions.back();
  live.stop();

  StartOptions fork;
  fork.resume_provider_session_id = original;
  fork.fork = true;
  fork.fork_through_turn_ref = beta.native_turn_ref;
  live.start(fork);
  CHECK(live.turn("prompt delta").text == "answer delta");
  const auto body = live.last_request();
  CHECK(mentions(body, "prompt alpha"));
  CHECK(mentions(body, "answer beta"));
  CHECK_FALSE(mentions(body, "prompt gamma"));
  CHECK_FALSE(mentions(body, "answer gamma"));
  CHECK(live.sink.provider_sessions.back() != original);
}

TEST_CASE("claude controls e2e: rewinding past a turn drops it and every later one from the next model request", "[e2e][claude][controls]") {
  Live live(Json::array({Json{{"text", "answer alpha"}}, Json{{"text", "answer beta"}}, Json{{"text", "answer gamma"}},
                         Json{{"match", {{"last_user_text_contains", "prompt delta"}}}, {"text", "answer delta"}}}));
  if (!live.ready()) return;
  live.start(StartOptions{});
  const auto alpha = live.turn("prompt alpha");
  const auto beta = live.turn("prompt beta");
  live.turn("prompt gamma");
  REQUIRE(beta.native_turn_ref);
  CHECK_FALSE(live.await([&](Completion done) { live.adapter->rewind(*beta.native_turn_ref, std::move(done)); }));
  live.turn("prompt delta");
  const auto body = live.last_request();
  CHECK(mentions(body, "prompt alpha"));
  CHECK(mentions(body, "answer alpha"));
  CHECK_FALSE(mentions(body, "prompt beta"));
  CHECK_FALSE(mentions(body, "prompt gamma"));
  // A turn that was rewound is gone: rewinding to it again is refused, as is a reference of no turn.
  const auto again = live.await([&](Completion done) { live.adapter->rewind(*beta.native_turn_ref, std::move(done)); });
  REQUIRE(again);
  CHECK(again->code == p::ErrorCode::UnknownTurn);
  REQUIRE(alpha.native_turn_ref);
}

TEST_CASE("claude controls e2e: compact reaches the agent, which summarizes and goes on from the summary", "[e2e][claude][controls]") {
  Live live(Json::array({Json{{"text", "answer alpha"}}, Json{{"text", "answer alpha two"}},
                         Json{{"text", "<summary>The user said alpha.</summary>"}},
                         Json{{"match", {{"last_user_text_contains", "prompt beta"}}}, {"text", "answer beta"}}}));
  if (!live.ready()) return;
  live.start(StartOptions{});
  live.turn("prompt alpha");
  // With too little to summarize the CLI refuses, and says why.
  const auto refused = live.await([&](Completion done) { live.adapter->compact(std::move(done)); });
  REQUIRE(refused);
  CHECK(refused->code == p::ErrorCode::Unsupported);
  CHECK(refused->message.find("Not enough messages") != std::string::npos);
  CHECK(live.sink.turns.size() == 1);
  live.turn("prompt alpha again");
  const auto turns_before = live.sink.turns.size();
  CHECK_FALSE(live.await([&](Completion done) { live.adapter->compact(std::move(done)); }));
  INFO(Json(live.sink.lines).dump(1));
  CHECK(live.sink.turns.size() == turns_before);  // no turn of the session's
  CHECK(std::any_of(live.sink.statuses.begin(), live.sink.statuses.end(), [](const AgentStatus& s) { return s.status == p::AgentStatusKind::Compacted; }));
  live.turn("prompt beta");
  const auto body = live.last_request();
  CHECK(mentions(body, "The user said alpha."));
}

}  // namespace claude_code_controls_e2e_tests
