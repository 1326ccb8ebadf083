#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "codex/CodexAdapter.h"
#include "codex/CodexHistory.h"
#include "switchboard/process/ChildProcess.h"
#include "support/CodexRecording.h"
#include "support/ProcessTestSupport.h"
#include "support/SourceTree.h"

namespace codex_adapter_tests {

using namespace switchboard;
using namespace switchboard::adapters;
using namespace switchboard::adapters::codex;
namespace fs = std::filesystem;

// The plumbing against the real `codex app-server` (scripts/install-agents codex) and the mock provider
// (tests/mock_provider/openai_mock.py). Skipped, with a warning, where Codex is not installed.

std::optional<std::string> installed_codex() {
  const std::string command = switchboard::testing::source_path("scripts/agent-path") + " codex 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  char buffer[4096];
  std::string out;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  if (::pclose(pipe) != 0) return std::nullopt;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (out.empty() || !fs::exists(out)) return std::nullopt;
  return out;
}

// The engine's side: records everything, and answers each permission request with `allow` on the reactor.
class Engine : public testing::CodexRecordingSink {
 public:
  Engine(boost::asio::io_context& io, bool allow) : m_io(io), m_allow(allow) {}
  AgentAdapter* adapter = nullptr;

  void on_permission_request(PermissionAsk ask) override {
    const std::string native_id = ask.native_id;
    CodexRecordingSink::on_permission_request(std::move(ask));
    boost::asio::post(m_io, [this, native_id] {
      PermissionAnswer answer;
      answer.allow = m_allow;
      if (adapter != nullptr) adapter->answer_permission(native_id, answer, [this](std::optional<AdapterError> error) { answer_errors.push_back(error); });
    });
  }
  std::vector<std::optional<AdapterError>> answer_errors;  // how each answer completed

 private:
  boost::asio::io_context& m_io;
  bool m_allow;
};

struct Mock {
  std::unique_ptr<process::ChildProcess> process;
  int port = 0;
  fs::path log;
};

Mock start_mock(boost::asio::io_context& io, const fs::path& dir, const nlohmann::json& script) {
  Mock mock;
  mock.log = dir / "mock.requests.ndjson";
  std::ofstream(dir / "mock.script.json") << script.dump();
  process::SpawnSpec spec;
  spec.program = "python3";
  spec.args = {switchboard::testing::source_path("tests/mock_provider/openai_mock.py"), "--script",
               (dir / "mock.script.json").string(), "--log", mock.log.string()};
  process::ChildProcess::Handlers handlers;
  auto port = std::make_shared<int>(0);
  handlers.on_stdout_line = [port](std::string_view line) { *port = std::stoi(std::string(line)); };
  auto spawned = process::ChildProcess::spawn(io, std::move(spec), std::move(handlers));
  REQUIRE(spawned);
  mock.process = std::move(*spawned);
  REQUIRE(testing::run_until(io, [&] { return *port != 0; }));
  mock.port = *port;
  return mock;
}

bool has_line_starting(const std::vector<std::string>& lines, const std::string& prefix) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) { return line.rfind(prefix, 0) == 0; });
}

TEST_CASE("Codex adapter runs approved commands and resumes a thread in a new process", "[codex][live]") {
  const auto codex = installed_codex();
  if (!codex) {
    WARN("codex is not installed (scripts/install-agents codex); skipped");
    return;
  }
  boost::asio::io_context io;
  const fs::path dir = fs::temp_directory_path() / ("sb-codex-adapter-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "work");
  const nlohmann::json script = {
      {"turns",
       {{{"match", {{"last_user_text_contains", "PINEAPPLE"}}}, {"exec", "touch made_by_codex.txt && echo created"}},
        {{"match", {{"last_input_is_tool_output", true}, {"tool_output_contains", "created"}}}, {"text", "Made it."}},
        {{"match", {{"any_user_text_contains", "PINEAPPLE"}, {"last_user_text_contains", "which word"}}},
         {"text", "It was PINEAPPLE."}}}}};
  auto mock = start_mock(io, dir, script);

  CodexConfig config;
  config.executable = *codex;
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:" + std::to_string(mock.port) + "/v1";
  endpoint.api_key = "sk-mock";
  endpoint.model = "mock-model";
  endpoint.codex_home = dir / "codex-home";
  config.endpoint = endpoint;

  StartOptions options;
  options.session_id = "s1";
  options.cwd = (dir / "work").string();
  options.mode = "untrusted";

  std::string thread;
  {
    Engine engine(io, /*allow=*/true);
    CodexAdapter adapter(io, engine, config);
    engine.adapter = &adapter;
    std::optional<std::optional<AdapterError>> started;
    adapter.start(options, [&](std::optional<AdapterError> error) { started = std::move(error); });
    REQUIRE(testing::run_until(io, [&] { return started.has_value(); }, std::chrono::seconds(60)));
    REQUIRE_FALSE(*started);
    REQUIRE(has_line_starting(engine.lines, "provider_session "));
    thread = engine.lines.front().substr(std::string("provider_session ").size());

    adapter.send(TurnInput{"t1", "remember the word PINEAPPLE and make a file", {}, std::nullopt});
    REQUIRE(testing::run_until(io, [&] { return !engine.turns.empty(); }, std::chrono::seconds(60)));
    INFO(nlohmann::json(engine.lines).dump(1));
    CHECK(engine.turns[0].stop_reason == protocol::StopReason::EndTurn);
    CHECK(engine.turns[0].text == "Made it.");
    REQUIRE(engine.permissions.size() == 1);
    CHECK(engine.permissions[0].second.subject == "touch made_by_codex.txt && echo created");
    CHECK(has_line_starting(engine.lines, "tool_started "));
    CHECK(has_line_starting(engine.lines, "tool_completed ") );
    CHECK(fs::exists(dir / "work" / "made_by_codex.txt"));
    CHECK(fs::exists(dir / "codex-home" / "config.toml"));

    adapter.stop();
    REQUIRE(testing::run_until(io, [&] { return has_line_starting(engine.lines, "stopped"); }, std::chrono::seconds(30)));
  }
  {
    Engine engine(io, /*allow=*/false);
    CodexAdapter adapter(io, engine, config);
    engine.adapter = &adapter;
    options.resume_provider_session_id = thread;
    std::optional<std::optional<AdapterError>> started;
    adapter.start(options, [&](std::optional<AdapterError> error) { started = std::move(error); });
    REQUIRE(testing::run_until(io, [&] { return started.has_value(); }, std::chrono::seconds(60)));
    REQUIRE_FALSE(*started);
    adapter.send(TurnInput{"t2", "which word did I ask you to remember?", {}, std::nullopt});
    REQUIRE(testing::run_until(io, [&] { return !engine.turns.empty(); }, std::chrono::seconds(60)));
    INFO(nlohmann::json(engine.lines).dump(1));
    CHECK(engine.turns[0].text == "It was PINEAPPLE.");
    CHECK(engine.lines.front() == "provider_session " + thread);
    adapter.stop();
    REQUIRE(testing::run_until(io, [&] { return has_line_starting(engine.lines, "stopped"); }, std::chrono::seconds(30)));
  }
  // The rollout the CLI wrote for both processes is Codex's history of the directory: listed and replayed.
  {
    const auto listed = list_history(dir / "codex-home", options.cwd);
    REQUIRE(listed.sessions.size() == 1);
    CHECK(listed.sessions[0].provider_session_id == thread);
    CHECK(listed.sessions[0].title == "remember the word PINEAPPLE and make a file");
    CHECK(listed.sessions[0].prompts == std::optional<std::int64_t>(2));
    const auto rollout = find_rollout(dir / "codex-home", thread, options.cwd);
    REQUIRE(rollout);
    testing::CodexRecordingSink history;
    const auto stats = read_history(*rollout, history);
    INFO(nlohmann::json(history.lines).dump(1));
    CHECK(stats.malformed == 0);
    CHECK(history.lines.front() == "provider_session " + thread);
    const auto count = [&](const std::string& part) {
      return std::count_if(history.lines.begin(), history.lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
    };
    CHECK(count("prompt ") == 2);
    CHECK(count(R"( shell {"command":"touch made_by_codex.txt && echo created")") == 1);
    // The command's whole output, as live: a shell profile's noise (pyenv here) may come before "created".
    CHECK(std::count_if(history.lines.begin(), history.lines.end(), [](const std::string& l) {
            return l.starts_with("tool_completed ") && l.find(" ok \"") != std::string::npos && l.ends_with("created\\n\"");
          }) == 1);
    CHECK(count(R"(turn_end end_turn "Made it.")") == 1);
    CHECK(count(R"(turn_end end_turn "It was PINEAPPLE.")") == 1);
  }
  mock.process->kill();
  testing::run_until(io, [&] { return mock.process->finished(); });
  fs::remove_all(dir);
}

TEST_CASE("Codex adapter cancels a running command and takes the next turn", "[codex][live]") {
  const auto codex = installed_codex();
  if (!codex) {
    WARN("codex is not installed (scripts/install-agents codex); skipped");
    return;
  }
  boost::asio::io_context io;
  const fs::path dir = fs::temp_directory_path() / ("sb-codex-cancel-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "work");
  const nlohmann::json script = {
      {"turns", {{{"exec", "sleep 30; echo never"}, {"yield_time_ms", 20000}},
                 {{"match", {{"last_user_text_contains", "again"}}}, {"text", "Back."}}}}};
  auto mock = start_mock(io, dir, script);
  CodexConfig config;
  config.executable = *codex;
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:" + std::to_string(mock.port) + "/v1";
  endpoint.model = "mock-model";  // and no key: no env_key in the config
  endpoint.codex_home = dir / "codex-home";
  config.endpoint = endpoint;
  StartOptions options;
  options.session_id = "s2";
  options.cwd = (dir / "work").string();
  options.mode = "full-access";

  Engine engine(io, /*allow=*/true);
  CodexAdapter adapter(io, engine, config);
  engine.adapter = &adapter;
  std::optional<std::optional<AdapterError>> started;
  adapter.start(options, [&](std::optional<AdapterError> error) { started = std::move(error); });
  REQUIRE(testing::run_until(io, [&] { return started.has_value(); }, std::chrono::seconds(60)));
  REQUIRE_FALSE(*started);
  adapter.send(TurnInput{"t1", "sleep", {}, std::nullopt});
  REQUIRE(testing::run_until(io, [&] { return has_line_starting(engine.lines, "tool_started "); }, std::chrono::seconds(60)));
  adapter.cancel();
  REQUIRE(testing::run_until(io, [&] { return !engine.turns.empty(); }, std::chrono::seconds(20)));
  CHECK(engine.turns[0].stop_reason == protocol::StopReason::Cancelled);
  adapter.send(TurnInput{"t2", "again", {}, std::nullopt});
  REQUIRE(testing::run_until(io, [&] { return engine.turns.size() == 2; }, std::chrono::seconds(60)));
  INFO(nlohmann::json(engine.lines).dump(1));
  CHECK(engine.turns[1].text == "Back.");
  std::vector<std::optional<AdapterError>> modes;
  adapter.set_mode("yolo", [&](std::optional<AdapterError> error) { modes.push_back(error); });
  adapter.set_mode("read-only", [&](std::optional<AdapterError> error) { modes.push_back(error); });
  REQUIRE(modes.size() == 2);
  REQUIRE(modes[0]);
  CHECK(modes[0]->code == protocol::ErrorCode::Unsupported);
  CHECK_FALSE(modes[1]);
  // Codex asks no questions through the adapter: an answer to one is refused, never silently dropped.
  std::optional<std::optional<AdapterError>> question;
  adapter.answer_question("q-1", QuestionAnswer{false, {"yes"}}, [&](std::optional<AdapterError> error) { question = error; });
  REQUIRE(question);
  REQUIRE(*question);
  CHECK((*question)->code == protocol::ErrorCode::Unsupported);
  adapter.stop();
  REQUIRE(testing::run_until(io, [&] { return has_line_starting(engine.lines, "stopped"); }, std::chrono::seconds(30)));
  mock.process->kill();
  testing::run_until(io, [&] { return mock.process->finished(); });
  fs::remove_all(dir);
}

}  // namespace codex_adapter_tests
