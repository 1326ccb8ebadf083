#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "support/SourceTree.h"

// The shared scenarios (Conformance.h) with the fake server agent (tests/fake_server_agent): an adapter built
// from the kit alone, for an agent that is one local HTTP+SSE server hosting every session, as OpenCode is. It
// runs in the tests' own daemon (switchboard_test_daemon) against the Anthropic mock; nothing to install.

namespace fake_server_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

const e2e::AgentProfile& fake_server() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "fakeserver";
    p.cli_name = "fakeserver";
    p.mock_server = "anthropic_mock.py";
    p.cli_variable = "SWITCHBOARD_FAKESERVER_BIN";
    p.cli_marker = "fake_server_agent.py serve";
    p.asking_mode = "ask";
    p.shell_tool = "shell";
    p.daemon_binary = SWITCHBOARD_TEST_DAEMON;
    p.locate_cli = [] { return switchboard::testing::source_path("tests/fake_server_agent/fake_server_agent.py"); };
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_FAKESERVER_BIN=" + cli,
                                      "FAKE_SERVER_AGENT_BASE_URL=" + mock_url, "FAKE_SERVER_AGENT_HOME="};
    };
    p.script = [](Json turns) { return Json{{"turns", std::move(turns)}}; };
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."}, {"tool_use", {{"name", "shell"}, {"input", {{"command", command}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_user_has_tool_result", true}}, text); };
    // A denied command comes back to the model as an error result saying the user rejected it.
    p.after_refused_tool = [](const std::string& text) { return mock_reply::when({{"tool_result_contains", "rejected"}}, text); };
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / ".fake-server-agent" / "sessions"); };
    return p;
  }();
  return profile;
}

TEST_CASE("fake server e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][fakeserver]") {
  e2e::scenario_streamed_turn(fake_server());
}

TEST_CASE("fake server e2e: an allowed command runs and its output reaches the client", "[e2e][fakeserver]") {
  e2e::scenario_permission_allowed(fake_server());
}

TEST_CASE("fake server e2e: a denied command does not run and a second client's late answer gets -32002", "[e2e][fakeserver]") {
  e2e::scenario_permission_denied_and_late_answer(fake_server());
}

TEST_CASE("fake server e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][fakeserver]") {
  e2e::scenario_interrupt_mid_command(fake_server());
}

TEST_CASE("fake server e2e: a prompt sent while busy is queued and then runs", "[e2e][fakeserver]") {
  e2e::scenario_queued_prompt(fake_server());
}

TEST_CASE("fake server e2e: after a daemon restart the cold session resumes on a new server", "[e2e][fakeserver]") {
  e2e::scenario_restart_and_resume(fake_server());
}

TEST_CASE("fake server e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][fakeserver]") {
  e2e::scenario_shutdown_right_after_turn(fake_server());
}

TEST_CASE("fake server e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][fakeserver]") {
  e2e::scenario_sigterm_right_after_turn(fake_server());
}

TEST_CASE("fake server e2e: a session the server forgot goes on in a new one seeded with the stored transcript", "[e2e][fakeserver]") {
  e2e::scenario_conversation_gone(fake_server());
}

TEST_CASE("fake server e2e: a server killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][fakeserver]") {
  e2e::scenario_killed_cli(fake_server());
}

TEST_CASE("fake server e2e: a session from the server's own history is listed and imported and resumed", "[e2e][fakeserver]") {
  e2e::scenario_history_import(fake_server());
}

TEST_CASE("fake server e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][fakeserver]") {
  e2e::scenario_import_live_conversation(fake_server());
}

TEST_CASE("fake server: a missing executable is reported by agents.list and refused by session.create", "[e2e][fakeserver]") {
  e2e::scenario_missing_cli(fake_server());
}

}  // namespace fake_server_e2e_tests
