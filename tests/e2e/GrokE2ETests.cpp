#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"

// End to end with the real Grok Build (`grok agent --no-leader stdio`, the ACP adapter): the shared scenarios
// (Conformance.h) with Grok's profile, against the project's Chat Completions mock. The daemon is pointed at the
// mock through SWITCHBOARD_GROK_BASE_URL, so it gives Grok a private GROK_HOME in its data directory with a config
// of its own (docs/agents/grok-build.md). The CLI is installed by scripts/install-agents; without it these tests
// are skipped visibly, except under CI, where they fail.

namespace grok_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& grok() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "grok";
    p.cli_name = "grok";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_GROK_BIN";
    p.cli_marker = "agent --no-leader stdio";
    p.asking_mode = "ask";
    p.modes = {"ask", "accept-edits", "full-access"};
    p.shell_tool = "execute";
    p.deny_ends_turn = true;
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_GROK_BIN=" + cli,
                                      "SWITCHBOARD_GROK_BASE_URL=" + mock_url + "/v1", "SWITCHBOARD_GROK_API_KEY=sk-mock",
                                      "SWITCHBOARD_GROK_MODEL=mock-model"};
    };
    // Grok names a new session in a side request that forces its `session_title` tool: a rule, so it does not
    // take a scripted turn.
    p.script = [](Json turns) {
      const Json title{{"match", {{"forced_tool", "session_title"}}},
                       {"reply", {{"function_call", {{"name", "session_title"}, {"arguments", {{"session_title", "Mock session title"}}}}}}}};
      return Json{{"rules", Json::array({title})}, {"turns", std::move(turns)}};
    };
    // Grok's shell tool wants a description besides the command.
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"function_call", {{"name", "run_terminal_command"}, {"arguments", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // Never asked: a deny ends Grok's turn (deny_ends_turn).
    p.after_refused_tool = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // Grok keeps its sessions under the daemon's private GROK_HOME, in the data directory.
    p.forget_conversations = [](const fs::path&, const fs::path& data_dir) { fs::remove_all(data_dir / "grok-home" / "sessions"); };
    return p;
  }();
  return profile;
}

TEST_CASE("grok e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][grok]") {
  e2e::scenario_streamed_turn(grok());
}

TEST_CASE("grok e2e: switchboard run calls a tool and prints the final text", "[e2e][grok][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(grok());
}

TEST_CASE("grok e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][grok][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(grok());
}

TEST_CASE("grok e2e: an approved command runs and its output reaches the client", "[e2e][grok]") {
  e2e::scenario_permission_allowed(grok());
}

TEST_CASE("grok e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][grok]") {
  e2e::scenario_permission_denied_and_late_answer(grok());
}

TEST_CASE("grok e2e: a cancel while a permission is open resolves it cancelled for every client", "[e2e][grok]") {
  e2e::scenario_cancel_while_permission_open(grok());
}

TEST_CASE("grok e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][grok]") {
  e2e::scenario_interrupt_mid_command(grok());
}

TEST_CASE("grok e2e: a prompt sent while busy is queued and then runs", "[e2e][grok]") {
  e2e::scenario_queued_prompt(grok());
}

TEST_CASE("grok e2e: after a daemon restart the cold session loads its conversation in a new process", "[e2e][grok]") {
  e2e::scenario_restart_and_resume(grok());
}

TEST_CASE("grok e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][grok]") {
  e2e::scenario_shutdown_right_after_turn(grok());
}

TEST_CASE("grok e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][grok]") {
  e2e::scenario_sigterm_right_after_turn(grok());
}

TEST_CASE("grok e2e: a session whose Grok conversation was deleted goes on in a new one seeded with the stored transcript", "[e2e][grok]") {
  e2e::scenario_conversation_gone(grok());
}

TEST_CASE("grok e2e: the ACP process killed mid-turn gives error then stopped and the next send works", "[e2e][grok]") {
  e2e::scenario_killed_cli(grok());
}

TEST_CASE("grok e2e: a session from Grok's own history is listed and imported and resumed", "[e2e][grok]") {
  e2e::scenario_history_import(grok());
}

TEST_CASE("grok e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][grok]") {
  e2e::scenario_import_live_conversation(grok());
}

TEST_CASE("grok: a missing CLI is reported by agents.list and refused by session.create", "[e2e][grok]") {
  e2e::scenario_missing_cli(grok());
}

}  // namespace grok_e2e_tests
