#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AcpScenarios.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"

// End to end with the real Claude Code CLI: the shared scenarios (Conformance.h) with Claude's profile, plus what
// only Claude has. The CLI is installed by scripts/install-agents; without it these tests are skipped visibly,
// except under CI (CI set), where a missing CLI fails them.

namespace claude_code_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& claude() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "claude";
    p.forks = true;
    p.cli_name = "claude";
    p.mock_server = "anthropic_mock.py";
    p.cli_variable = "SWITCHBOARD_CLAUDE_BIN";
    p.cli_marker = "--permission-prompt-tool stdio";
    p.asking_mode = "default";
    p.modes = {"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"};
    p.shell_tool = "Bash";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "CLAUDE_CONFIG_DIR=" + (home / ".claude").string(),
                                      "ANTHROPIC_BASE_URL=" + mock_url, "ANTHROPIC_API_KEY=sk-mock",
                                      "ANTHROPIC_AUTH_TOKEN=", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
                                      "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                                      "CLAUDE_CODE_MAX_RETRIES=2", "SWITCHBOARD_CLAUDE_BIN=" + cli};
    };
    // The session title is a side request; a rule answers it, so it never eats the scripted turns.
    p.script = [](Json turns) {
      return Json{{"rules", Json::array({Json{{"match", {{"system_contains", "sentence-case title"}}},
                                             {"reply", {{"text", R"({"title": "Test"})"}}}}})},
                  {"turns", std::move(turns)}};
    };
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"tool_use", {{"name", "Bash"}, {"input", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_user_has_tool_result", true}}, text); };
    p.after_refused_tool = [](const std::string& text) { return mock_reply::when({{"tool_result_is_error", true}}, text); };
    // The CLI's conversations: <CLAUDE_CONFIG_DIR>/projects/<project>/<session id>.jsonl.
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / ".claude" / "projects"); };
    return p;
  }();
  return profile;
}

TEST_CASE("claude e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][claude]") {
  e2e::scenario_streamed_turn(claude());
}

TEST_CASE("claude e2e: a permission allowed by the client runs the tool and its output reaches the client", "[e2e][claude]") {
  e2e::scenario_permission_allowed(claude());
}

TEST_CASE("claude e2e: a denied permission stops the tool and a second client's late answer gets -32002", "[e2e][claude]") {
  e2e::scenario_permission_denied_and_late_answer(claude());
}

TEST_CASE("claude e2e: interrupt mid-tool ends the turn cancelled and the tool's process is gone", "[e2e][claude]") {
  e2e::scenario_interrupt_mid_command(claude());
}

TEST_CASE("claude e2e: a prompt sent while busy is queued and then runs", "[e2e][claude]") {
  e2e::scenario_queued_prompt(claude());
}

TEST_CASE("claude e2e: after a daemon restart the cold session resumes with its history", "[e2e][claude]") {
  e2e::scenario_restart_and_resume(claude());
}

TEST_CASE("claude e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][claude]") {
  e2e::scenario_shutdown_right_after_turn(claude());
}

TEST_CASE("claude e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][claude]") {
  e2e::scenario_sigterm_right_after_turn(claude());
}

TEST_CASE("claude e2e: a session whose Claude conversation was deleted goes on in a new one seeded with the stored transcript", "[e2e][claude]") {
  e2e::scenario_conversation_gone(claude());
}

TEST_CASE("claude e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][claude]") {
  e2e::scenario_killed_cli(claude());
}

TEST_CASE("claude e2e: a conversation from the CLI's own history is listed and imported and resumed", "[e2e][claude]") {
  e2e::scenario_history_import(claude());
}

TEST_CASE("claude e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][claude]") {
  e2e::scenario_import_live_conversation(claude());
}

TEST_CASE("claude: a missing CLI is reported by agents.list and refused by session.create", "[e2e][claude]") {
  e2e::scenario_missing_cli(claude());
}

TEST_CASE("claude e2e: switchboard run calls a tool and prints the final text", "[e2e][claude][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(claude());
}

TEST_CASE("claude e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][claude][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(claude());
}

TEST_CASE("claude e2e: switchboard acp streams a prompt's answer as chunks and ends with end_turn", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_streamed_prompt(claude());
}

TEST_CASE("claude e2e: switchboard acp offers the agent's models as a config option and the model the editor picks is used", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_model_chosen_by_the_editor(claude());
}

TEST_CASE("claude e2e: switchboard acp asks the editor for a permission and the allowed tool runs", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_permission_allowed(claude());
}

TEST_CASE("claude e2e: switchboard acp asks the editor for a permission and the rejected tool does not run", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_permission_rejected(claude());
}

TEST_CASE("claude e2e: switchboard acp session/cancel mid-turn ends the prompt with cancelled", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_cancel_mid_turn(claude());
}

TEST_CASE("claude e2e: switchboard acp lists and loads a session after the daemon restarted and continues it", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_load_after_restart(claude());
}

TEST_CASE("claude e2e: switchboard acp gives the agent a prompt's file link and embedded text and image", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_prompt_with_resources(claude());
}

TEST_CASE("claude e2e: switchboard acp queues a prompt sent while busy and closes and resumes a session", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_queued_prompts_close_and_resume(claude());
}

TEST_CASE("claude e2e: switchboard acp attached to serve: a session loaded while its turn waits on a permission asks the editor", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_load_asks_an_open_permission(claude());
}

TEST_CASE("claude e2e: switchboard acp attached to serve: an SSE client sees the session and its answer withdraws the editor's request", "[e2e][claude][acp-server]") {
  e2e::scenario_acp_attached_permission_answered_elsewhere(claude());
}

}  // namespace claude_code_e2e_tests
