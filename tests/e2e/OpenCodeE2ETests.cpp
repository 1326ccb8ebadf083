#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"

// End to end with the real OpenCode (`opencode serve`, one server for every session): the shared scenarios
// (Conformance.h) with OpenCode's profile, against the project's OpenAI mock speaking Chat Completions, the API
// of OpenCode's openai-compatible providers. The provider is the test's own OpenCode configuration
// (OPENCODE_CONFIG_CONTENT, as a user's opencode.json would be); the adapter never writes OpenCode's files.

namespace opencode_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;

Json reply_when(Json match, const std::string& text) { return Json{{"match", std::move(match)}, {"text", text}}; }

// What a user's opencode.json would say to use the mock: one openai-compatible provider, its one model.
std::string provider_config(const std::string& mock_url) {
  const Json model{{"name", "Mock"}, {"tool_call", true}, {"limit", {{"context", 32000}, {"output", 4096}}}};
  return Json{{"provider", {{"mock", {{"npm", "@ai-sdk/openai-compatible"},
                                      {"name", "Mock"},
                                      {"options", {{"baseURL", mock_url + "/v1"}, {"apiKey", "sk-mock"}}},
                                      {"models", {{"mock-model", model}}}}}}},
              {"enabled_providers", Json::array({"mock"})},
              {"model", "mock/mock-model"},
              {"small_model", "mock/mock-model"},
              {"autoupdate", false},
              {"share", "disabled"}}
      .dump();
}

const e2e::AgentProfile& opencode() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p;
    p.agent = "opencode";
    p.cli_name = "opencode";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_OPENCODE_BIN";
    p.cli_marker = "serve --hostname 127.0.0.1";
    p.asking_mode = "ask";
    p.shell_tool = "bash";
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      std::vector<std::string> env{"HOME=" + home.string(), "SWITCHBOARD_OPENCODE_BIN=" + cli,
                                   "OPENCODE_CONFIG_CONTENT=" + provider_config(mock_url),
                                   "XDG_DATA_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME="};
      // OpenCode installs its plugin package into its config directory at every boot unless it is there: the
      // tests share one, filled by scripts/install-agents next to the CLI (<prefix>/config), instead of
      // downloading it into every test's HOME.
      const auto prefix = fs::path(cli).parent_path().parent_path().parent_path();
      env.push_back("XDG_CONFIG_HOME=" + (prefix / "config").string());
      return env;
    };
    p.script = [](Json turns) { return Json{{"turns", std::move(turns)}}; };
    p.text = [](const std::string& text, int chunks, int delay_ms) {
      Json reply{{"text", text}, {"chunks", chunks}};
      if (delay_ms > 0) reply["delay_ms"] = delay_ms;
      return reply;
    };
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"function_call", {{"name", "bash"}, {"arguments", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return reply_when({{"last_input_is_tool_output", true}}, text); };
    p.after_refused_tool = [](const std::string& text) {
      return reply_when({{"last_input_is_tool_output", true}, {"tool_output_contains", "rejected"}}, text);
    };
    p.when_last_prompt_contains = [](const std::string& needle, const std::string& text) {
      return reply_when({{"last_user_text_contains", needle}}, text);
    };
    p.when_any_prompt_contains = [](const std::string& needle, const std::string& text) {
      return reply_when({{"any_user_text_contains", needle}}, text);
    };
    // OpenCode keeps its sessions in $XDG_DATA_HOME/opencode/opencode.db (SQLite).
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / ".local" / "share" / "opencode"); };
    return p;
  }();
  return profile;
}

// `opencode acp` as the ACP agent of the daemon's configuration (agent "acp", docs/agents/acp.md): the same CLI,
// mock and replies as above, run through the generic ACP adapter. The daemon's config file names the command
// line and the environment; OpenCode's configuration there makes it ask before every command and edit (it allows
// bash by default).
const e2e::AgentProfile& opencode_over_acp() {
  static const e2e::AgentProfile profile = [] {
    e2e::AgentProfile p = opencode();
    p.agent = "acp";
    p.cli_variable = "SWITCHBOARD_ACP_BIN";
    p.cli_marker = "opencode acp";
    p.shell_tool = "execute";  // the ACP kind of OpenCode's bash tool
    p.deny_ends_turn = true;   // OpenCode's reject ends its turn
    // Over ACP nobody gives the session a title, so OpenCode asks the model for one first: a rule answers it.
    p.script = [](Json turns) {
      const Json title{{"match", {{"developer_contains", "You are a title generator"}}}, {"reply", {{"text", "Mock title"}}}};
      return Json{{"rules", Json::array({title})}, {"turns", std::move(turns)}};
    };
    p.environment = [](const fs::path& home, const std::string& mock_url, const std::string& cli) {
      auto config = Json::parse(provider_config(mock_url));
      config["permission"] = {{"bash", "ask"}, {"edit", "ask"}};
      const auto file = home / "switchboard.toml";
      std::ofstream out(file);
      // JSON strings are TOML basic strings.
      out << "[agents.acp]\n"
          << "name = \"OpenCode (ACP)\"\n"
          << "bin = " << Json(cli).dump() << "\n"
          << "args = [\"acp\"]\n"
          << "env = [" << Json("OPENCODE_CONFIG_CONTENT=" + config.dump()).dump() << "]\n";
      const auto prefix = fs::path(cli).parent_path().parent_path().parent_path();
      return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_CONFIG=" + file.string(), "XDG_DATA_HOME=",
                                      "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=" + (prefix / "config").string()};
    };
    return p;
  }();
  return profile;
}

TEST_CASE("opencode e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][opencode]") {
  e2e::scenario_streamed_turn(opencode());
}

TEST_CASE("opencode e2e: an approved command runs and its output reaches the client", "[e2e][opencode]") {
  e2e::scenario_permission_allowed(opencode());
}

TEST_CASE("opencode e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][opencode]") {
  e2e::scenario_permission_denied_and_late_answer(opencode());
}

TEST_CASE("opencode e2e: interrupt mid-command ends the turn cancelled and the command's process is gone", "[e2e][opencode]") {
  e2e::scenario_interrupt_mid_command(opencode());
}

TEST_CASE("opencode e2e: a prompt sent while busy is queued and then runs", "[e2e][opencode]") {
  e2e::scenario_queued_prompt(opencode());
}

TEST_CASE("opencode e2e: after a daemon restart the cold session resumes on a new server", "[e2e][opencode]") {
  e2e::scenario_restart_and_resume(opencode());
}

TEST_CASE("opencode e2e: a client that quits right after a turn loses nothing, and the restarted session resumes", "[e2e][opencode]") {
  e2e::scenario_shutdown_right_after_turn(opencode());
}

TEST_CASE("opencode e2e: serve stopped by SIGTERM right after a turn loses nothing, and the restarted session resumes", "[e2e][opencode]") {
  e2e::scenario_sigterm_right_after_turn(opencode());
}

TEST_CASE("opencode e2e: a session OpenCode lost goes on in a new one seeded with the stored transcript", "[e2e][opencode]") {
  e2e::scenario_conversation_gone(opencode());
}

TEST_CASE("opencode e2e: a server killed mid-turn gives error then stopped and the daemon keeps serving", "[e2e][opencode]") {
  e2e::scenario_killed_cli(opencode());
}

TEST_CASE("opencode: a missing CLI is reported by agents.list and refused by session.create", "[e2e][opencode]") {
  e2e::scenario_missing_cli(opencode());
}

TEST_CASE("opencode over acp e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][opencode][acp]") {
  e2e::scenario_streamed_turn(opencode_over_acp());
}

TEST_CASE("opencode over acp e2e: an approved command runs and its output reaches the client", "[e2e][opencode][acp]") {
  e2e::scenario_permission_allowed(opencode_over_acp());
}

TEST_CASE("opencode over acp e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][opencode][acp]") {
  e2e::scenario_permission_denied_and_late_answer(opencode_over_acp());
}

TEST_CASE("opencode over acp e2e: a cancel while a permission is open resolves it cancelled for every client", "[e2e][opencode][acp]") {
  e2e::scenario_cancel_while_permission_open(opencode_over_acp());
}

}  // namespace opencode_e2e_tests
