#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AcpScenarios.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"

// End to end with the real Codex CLI (`codex app-server`): the shared scenarios (Conformance.h) with Codex's
// profile. The daemon is pointed at the project's OpenAI Responses mock through SWITCHBOARD_CODEX_BASE_URL, so it
// gives Codex a private CODEX_HOME with its own config.toml (docs/agents/codex.md). The CLI is installed by
// scripts/install-agents; without it these tests are skipped visibly, except under CI, where they fail.

namespace codex_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& codex() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "codex";
    p.forks = true;
    p.cli_name = "codex";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_CODEX_BIN";
    p.cli_marker = "app-server";
    // Codex's `untrusted` policy asks before any command that is not known to be read-only.
    p.asking_mode = "untrusted";
    p.modes = {"auto", "read-only", "untrusted", "full-access"};
    p.shell_tool = "shell";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_CODEX_BIN=" + cli,
                                      "SWITCHBOARD_CODEX_BASE_URL=" + mock_url + "/v1",
                                      "SWITCHBOARD_CODEX_API_KEY=sk-mock", "SWITCHBOARD_CODEX_MODEL=mock-model"};
    };
    p.script = [](Json turns) { return Json{{"turns", std::move(turns)}}; };
    // Codex's exec_command returns to the model after yield_time_ms even if the command still runs; a long
    // yield keeps a slow command inside its tool call, as a Bash tool call is for Claude.
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."}, {"exec", command}, {"yield_time_ms", 60000}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    // A declined command comes back to the model as its output, saying the user rejected it.
    p.after_refused_tool = [](const std::string& text) {
      return mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "rejected"}}, text);
    };
    // Codex keeps its threads (rollout files) under the daemon's private CODEX_HOME, in the data directory.
    p.forget_conversations = [](const fs::path&, const fs::path& data_dir) { fs::remove_all(data_dir / "codex-home" / "sessions"); };
    return p;
  }();
  return profile;
}

TEST_CASE("codex e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][codex]") {
  e2e::scenario_streamed_turn(codex());
}

TEST_CASE("codex e2e: an approved command runs and its output reaches the client", "[e2e][codex]") {
  e2e::scenario_permission_allowed(codex());
}

TEST_CASE("codex e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][codex]") {
  e2e::scenario_permission_denied_and_late_answer(codex());
}

TEST_CASE("codex e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][codex]") {
  e2e::scenario_interrupt_mid_command(codex());
}

TEST_CASE("codex e2e: a prompt sent while busy is queued and then runs", "[e2e][codex]") {
  e2e::scenario_queued_prompt(codex());
}

TEST_CASE("codex e2e: after a daemon restart the cold session resumes its thread", "[e2e][codex]") {
  e2e::scenario_restart_and_resume(codex());
}

TEST_CASE("codex e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][codex]") {
  e2e::scenario_shutdown_right_after_turn(codex());
}

TEST_CASE("codex e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][codex]") {
  e2e::scenario_sigterm_right_after_turn(codex());
}

TEST_CASE("codex e2e: a session whose Codex thread was deleted goes on in a new one seeded with the stored transcript", "[e2e][codex]") {
  e2e::scenario_conversation_gone(codex());
}

TEST_CASE("codex e2e: a CLI killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][codex]") {
  e2e::scenario_killed_cli(codex());
}

TEST_CASE("codex e2e: a thread from Codex's own history is listed and imported and resumed", "[e2e][codex]") {
  e2e::scenario_history_import(codex());
}

TEST_CASE("codex e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][codex]") {
  e2e::scenario_import_live_conversation(codex());
}

TEST_CASE("codex: a missing CLI is reported by agents.list and refused by session.create", "[e2e][codex]") {
  e2e::scenario_missing_cli(codex());
}

TEST_CASE("codex e2e: switchboard run calls a tool and prints the final text", "[e2e][codex][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(codex());
}

TEST_CASE("codex e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][codex][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(codex());
}

TEST_CASE("codex e2e: switchboard acp streams a prompt's answer as chunks and ends with end_turn", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_streamed_prompt(codex());
}

TEST_CASE("codex e2e: switchboard acp offers the agent's models as a config option and the model the editor picks is used", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_model_chosen_by_the_editor(codex());
}

TEST_CASE("codex e2e: switchboard acp asks the editor for a permission and the allowed tool runs", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_permission_allowed(codex());
}

TEST_CASE("codex e2e: switchboard acp asks the editor for a permission and the rejected tool does not run", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_permission_rejected(codex());
}

TEST_CASE("codex e2e: switchboard acp session/cancel mid-turn ends the prompt with cancelled", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_cancel_mid_turn(codex());
}

TEST_CASE("codex e2e: switchboard acp lists and loads a session after the daemon restarted and continues it", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_load_after_restart(codex());
}

TEST_CASE("codex e2e: switchboard acp gives the agent a prompt's file link and embedded text and image", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_prompt_with_resources(codex());
}

TEST_CASE("codex e2e: switchboard acp queues a prompt sent while busy and closes and resumes a session", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_queued_prompts_close_and_resume(codex());
}

TEST_CASE("codex e2e: switchboard acp attached to serve: a session loaded while its turn waits on a permission asks the editor", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_load_asks_an_open_permission(codex());
}

TEST_CASE("codex e2e: switchboard acp attached to serve: an SSE client sees the session and its answer withdraws the editor's request", "[e2e][codex][acp-server]") {
  e2e::scenario_acp_attached_permission_answered_elsewhere(codex());
}

}  // namespace codex_e2e_tests
