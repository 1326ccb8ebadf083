#include <catch2/catch.hpp>

#include <dirent.h>
#include <signal.h>

#include <cerrno>
#include <cstdlib>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <boost/beast/core/detail/base64.hpp>
#include <nlohmann/json.hpp>

#include "e2e/AgentProfiles.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "e2e/RunScenarios.h"
#include "support/RawHttpClient.h"

// End to end with the real OpenCode (`opencode serve`, one server for every session): the shared scenarios
// (Conformance.h) with OpenCode's profile, against the project's OpenAI mock speaking Chat Completions, the API
// of OpenCode's openai-compatible providers. The provider is the test's own OpenCode configuration
// (OPENCODE_CONFIG_CONTENT, as a user's opencode.json would be); the adapter never writes OpenCode's files.

namespace opencode_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
namespace mock_reply = switchboard::testing::e2e::mock_reply;

// What a user's opencode.json would say to use the mock: one openai-compatible provider, its one model.
// `reasoning`: the model reasons, so OpenCode offers its variants (low, medium, high) as reasoning efforts.
std::string provider_config(const std::string& mock_url, bool reasoning = false) {
  Json model{{"name", "Mock"}, {"tool_call", true}, {"limit", {{"context", 32000}, {"output", 4096}}}};
  if (reasoning) model["reasoning"] = true;
  // A second model, for choosing one; the configured `model` stays the default.
  const Json other_model{{"name", "Other Mock"}, {"tool_call", true}, {"limit", {{"context", 32000}, {"output", 4096}}}};
  return Json{{"provider", {{"mock", {{"npm", "@ai-sdk/openai-compatible"},
                                      {"name", "Mock"},
                                      {"options", {{"baseURL", mock_url + "/v1"}, {"apiKey", "sk-mock"}}},
                                      {"models", {{"mock-model", model}, {"other-model", other_model}}}}}}},
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
    p.forks = true;
    p.cli_name = "opencode";
    p.mock_server = "openai_mock.py";
    p.cli_variable = "SWITCHBOARD_OPENCODE_BIN";
    p.cli_marker = "serve --hostname 127.0.0.1";
    p.asking_mode = "ask";
    p.modes = {"ask", "accept-edits", "full-access"};
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
    p.run_command = [](const std::string& command) {
      return Json{{"text", "Running it."},
                  {"function_call", {{"name", "bash"}, {"arguments", {{"command", command}, {"description", "test command"}}}}}};
    };
    p.after_tool_output = [](const std::string& text) { return mock_reply::when({{"last_input_is_tool_output", true}}, text); };
    p.after_refused_tool = [](const std::string& text) {
      return mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "rejected"}}, text);
    };
    // write makes a file; edit changes only a file the session has read, so a read comes first.
    p.change_file = [](const e2e::FileChange& change) {
      const auto call = [](const std::string& tool, Json arguments) {
        return Json{{"function_call", {{"name", tool}, {"arguments", std::move(arguments)}}}};
      };
      if (change.before.empty()) return std::vector<Json>{call("write", {{"filePath", change.path}, {"content", change.after + "\n"}})};
      return std::vector<Json>{call("read", {{"filePath", change.path}}),
                               call("edit", {{"filePath", change.path}, {"oldString", change.before}, {"newString", change.after}})};
    };
    // OpenCode keeps its sessions in $XDG_DATA_HOME/opencode/opencode.db (SQLite).
    p.forget_conversations = [](const fs::path& home, const fs::path&) { fs::remove_all(home / ".local" / "share" / "opencode"); };
    return p;
  }();
  return profile;
}

// `opencode acp` as an ACP agent of the daemon's configuration (docs/agents/acp.md): the same CLI, mock and
// replies as above, run through the generic ACP adapter. The daemon's config file names the command line and the
// environment, either as the one agent `acp` ([agents.acp]) or as an agent the user names ([acp_agents.<name>]);
// OpenCode's configuration there makes it ask before every command and edit (it allows bash by default).
e2e::AgentProfile opencode_as_acp_agent(const std::string& agent, const std::string& table) {
  e2e::AgentProfile p = opencode();
  p.agent = agent;
  // A variable only the one agent `acp` has; a named agent's command is in the config file alone, and the
  // missing-CLI scenario (the only user of this) is not run for it.
  p.cli_variable = "SWITCHBOARD_ACP_BIN";
  p.cli_marker = "opencode acp";
  p.shell_tool = "execute";  // the ACP kind of OpenCode's bash tool
  p.deny_ends_turn = true;   // OpenCode's reject ends its turn
  // Over ACP nobody gives the session a title, so OpenCode asks the model for one first: a rule answers it.
  p.script = [](Json turns) {
    const Json title{{"match", {{"developer_contains", "You are a title generator"}}}, {"reply", {{"text", "Mock title"}}}};
    return Json{{"rules", Json::array({title})}, {"turns", std::move(turns)}};
  };
  p.environment = [table](const fs::path& home, const std::string& mock_url, const std::string& cli) {
    auto config = Json::parse(provider_config(mock_url));
    config["permission"] = {{"bash", "ask"}, {"edit", "ask"}};
    const auto file = home / "switchboard.toml";
    std::ofstream out(file);
    // JSON strings are TOML basic strings.
    out << "[" << table << "]\n"
        << "name = \"OpenCode (ACP)\"\n"
        << "bin = " << Json(cli).dump() << "\n"
        << "args = [\"acp\"]\n"
        << "env = [" << Json("OPENCODE_CONFIG_CONTENT=" + config.dump()).dump() << "]\n";
    const auto prefix = fs::path(cli).parent_path().parent_path().parent_path();
    return std::vector<std::string>{"HOME=" + home.string(), "SWITCHBOARD_CONFIG=" + file.string(), "XDG_DATA_HOME=",
                                    "XDG_STATE_HOME=", "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=" + (prefix / "config").string()};
  };
  return p;
}

const e2e::AgentProfile& opencode_over_acp() {
  static const e2e::AgentProfile profile = opencode_as_acp_agent("acp", "agents.acp");
  return profile;
}

// The same, under a name of the user's: what a user does to add an ACP agent of their own.
const e2e::AgentProfile& opencode_as_named_acp_agent() {
  static const e2e::AgentProfile profile = opencode_as_acp_agent("opencode-acp", "acp_agents.opencode-acp");
  return profile;
}

TEST_CASE("opencode e2e: the shared fork scenario: a fork at a turn holds that turn and not the next, and both sessions answer", "[e2e][opencode][fork]") {
  e2e::scenario_fork_at_turn(opencode());
}

TEST_CASE("opencode e2e: a fork of a conversation OpenCode no longer has goes on seeded with the source's turns through the fork point", "[e2e][opencode][fork]") {
  e2e::scenario_fork_of_lost_conversation(opencode());
}

TEST_CASE("opencode e2e: the shared rewind scenario: a rewind drops a turn and later ones, also after a daemon restart", "[e2e][opencode][rewind]") {
  e2e::scenario_rewind_past_turn(opencode());
}

TEST_CASE("opencode e2e: the shared file scenario: write and edit changes are diffed per turn and rewound from the checkpoints", "[e2e][opencode][rewind]") {
  e2e::scenario_file_rewind_and_diff(opencode());
}

TEST_CASE("opencode e2e: session.search finds a prompt, an answer and a tool output of OpenCode and of Pi, respects the agent and cwd filters, and forgets a deleted session",
          "[e2e][opencode][search]") {
  e2e::scenario_search_two_agents(opencode(), pi_e2e_tests::pi());
}

TEST_CASE("opencode e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][opencode]") {
  e2e::scenario_streamed_turn(opencode());
}

TEST_CASE("opencode e2e: switchboard run calls a tool and prints the final text", "[e2e][opencode][run]") {
  e2e::scenario_run_calls_tool_and_prints_final_text(opencode());
}

TEST_CASE("opencode e2e: switchboard run attached to serve: an SSE client sees its events and answers its permission", "[e2e][opencode][run]") {
  e2e::scenario_run_attached_to_serve_delegates_its_permission(opencode());
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

TEST_CASE("opencode e2e: a session from OpenCode's own database is listed and read and imported and resumed", "[e2e][opencode]") {
  e2e::scenario_history_import(opencode());
}

TEST_CASE("opencode e2e: importing a conversation a live session continues forks it (or is refused), and both sessions answer with only their own events", "[e2e][opencode]") {
  e2e::scenario_import_live_conversation(opencode());
}

TEST_CASE("opencode: a missing CLI is reported by agents.list and refused by session.create", "[e2e][opencode]") {
  e2e::scenario_missing_cli(opencode());
}

TEST_CASE("opencode over acp e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][opencode][acp]") {
  e2e::scenario_streamed_turn(opencode_over_acp());
}

TEST_CASE("opencode as a named acp agent e2e: a streamed turn reaches stdio and SSE clients with identical events", "[e2e][opencode][acp]") {
  e2e::scenario_streamed_turn(opencode_as_named_acp_agent());
}

TEST_CASE("opencode as a named acp agent e2e: an approved command runs and its output reaches the client", "[e2e][opencode][acp]") {
  e2e::scenario_permission_allowed(opencode_as_named_acp_agent());
}

TEST_CASE("opencode as a named acp agent e2e: a declined command does not run and a second client's late answer gets -32002", "[e2e][opencode][acp]") {
  e2e::scenario_permission_denied_and_late_answer(opencode_as_named_acp_agent());
}

TEST_CASE("opencode as a named acp agent e2e: a cancel while a permission is open resolves it cancelled for every client", "[e2e][opencode][acp]") {
  e2e::scenario_cancel_while_permission_open(opencode_as_named_acp_agent());
}

// ---- What only OpenCode's shape (one server for every session) needs proving ------------------------------

std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// NUL-separated /proc records (environ, cmdline) as entries.
std::vector<std::string> proc_entries(const fs::path& file) {
  std::vector<std::string> entries;
  std::string text = file_text(file);
  for (std::size_t start = 0; start < text.size();) {
    const auto end = text.find('\0', start);
    entries.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return entries;
}

// The `opencode serve` processes of this test's daemon: the server marker on the command line, and this test's HOME
// in the environment (other tests may run servers at the same time).
std::vector<pid_t> servers_of(const e2e::AgentWorld& world) {
  const std::string home = "HOME=" + (world.tmp.path() / "home").string();
  std::vector<pid_t> servers;
  for (const pid_t pid : e2e::processes_matching(world.profile.cli_marker)) {
    const auto environment = proc_entries("/proc/" + std::to_string(pid) + "/environ");
    if (std::find(environment.begin(), environment.end(), home) != environment.end()) servers.push_back(pid);
  }
  return servers;
}

std::string environment_value(pid_t pid, const std::string& name) {
  for (const auto& entry : proc_entries("/proc/" + std::to_string(pid) + "/environ")) {
    if (entry.rfind(name + "=", 0) == 0) return entry.substr(name.size() + 1);
  }
  return {};
}

// The TCP ports `pid` listens on: its socket inodes, looked up in /proc/net/tcp's LISTEN (0A) rows.
std::vector<std::uint16_t> listening_ports(pid_t pid) {
  std::set<std::string> sockets;
  const fs::path fds = "/proc/" + std::to_string(pid) + "/fd";
  std::error_code error;
  for (const auto& fd : fs::directory_iterator(fds, error)) {
    const auto target = fs::read_symlink(fd.path(), error).string();
    if (target.rfind("socket:[", 0) == 0) sockets.insert(target.substr(8, target.size() - 9));
  }
  std::vector<std::uint16_t> ports;
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
    if (state == "0A" && sockets.count(inode) != 0) {
      ports.push_back(static_cast<std::uint16_t>(std::stoul(local.substr(local.find(':') + 1), nullptr, 16)));
    }
  }
  return ports;
}

std::string basic_authorization(const std::string& user, const std::string& password) {
  const std::string plain = user + ":" + password;
  std::string encoded(boost::beast::detail::base64::encoded_size(plain.size()), '\0');
  encoded.resize(boost::beast::detail::base64::encode(encoded.data(), plain.data(), plain.size()));
  return "Authorization: Basic " + encoded;
}

TEST_CASE("opencode e2e: the models OpenCode offers reach the session, its default marked, and a chosen one is used", "[e2e][opencode]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.text("First answer.", 1, 0), profile.text("Second answer.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto created = world.client->call("session.create", {{"agent", "opencode"}, {"cwd", world.work.string()}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string session = created["result"]["session"]["sessionId"];
  const auto first = world.client->call("session.send", {{"sessionId", session}, {"text", "first prompt"}});
  INFO(first.dump());
  REQUIRE(first["result"]["text"] == "First answer.");
  Json models;
  CHECK(switchboard::testing::eventually([&] {
    models = world.client->call("session.get", {{"sessionId", session}})["result"]["session"].value("models", Json());
    return models.is_array() && models.size() == 2;
  }, std::chrono::seconds(10)));
  INFO(models.dump());
  REQUIRE(models.size() == 2);
  CHECK(models[0] == Json{{"id", "mock/mock-model"}, {"name", "Mock"}, {"description", "Mock"}, {"isDefault", true}});
  CHECK(models[1] == Json{{"id", "mock/other-model"}, {"name", "Other Mock"}, {"description", "Mock"}});
  // agents.list remembers the offer for the agent's next sessions.
  const auto agents = world.client->call("agents.list");
  Json listed;
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent["agent"] == "opencode") listed = agent;
  }
  INFO(agents.dump());
  REQUIRE(listed.is_object());
  CHECK(listed.value("models", Json()) == models);
  REQUIRE(world.client->call("session.setModel", {{"sessionId", session}, {"model", "mock/other-model"}}).contains("result"));
  const auto second = world.client->call("session.send", {{"sessionId", session}, {"text", "second-prompt-marker"}});
  INFO(second.dump());
  REQUIRE(second["result"]["text"] == "Second answer.");
  std::string sent;
  for (const auto& request : world.mock->message_requests()) {
    if (request["body"].dump().find("second-prompt-marker") != std::string::npos) sent = request["body"].value("model", "");
  }
  CHECK(sent == "other-model");
}

TEST_CASE("opencode: two sessions in two directories stream at once on one server and each keeps its own events", "[e2e][opencode]") {
  e2e::AgentProfile profile = opencode();
  // Both answers are picked by what was asked (rules), not by the order the two requests reach the mock. Each
  // stream stops halfway (after its role chunk and 6 of its 12 deltas) until the other got as far, so the two
  // overlap however late the second request comes (a loaded machine once started it after the first had ended).
  // The second half is slow enough (6 × 250 ms) for OpenCode to relay the other stream's first half meanwhile:
  // under ASan with the other suite job busy, 100 ms deltas once let it deliver one stream whole before the other.
  profile.script = [](Json rules) { return Json{{"rules", std::move(rules)}}; };
  const auto slow = [](const std::string& text) {
    return Json{{"text", text}, {"chunks", 12}, {"delay_ms", 250}, {"barrier", {{"name", "halfway"}, {"parties", 2}, {"at_event", 7}}}};
  };
  const std::string alpha = "alpha one two three four five six seven";
  const std::string beta = "beta eight nine ten eleven twelve thirteen fourteen";
  e2e::AgentWorld world(profile, Json::array({Json{{"match", {{"last_user_text_contains", "alpha"}}}, {"reply", slow(alpha)}},
                                              Json{{"match", {{"last_user_text_contains", "beta"}}}, {"reply", slow(beta)}}}));
  if (!world.ready()) return;
  world.start_daemon();
  const fs::path dir_a = world.work / "a";
  const fs::path dir_b = world.work / "b";
  fs::create_directories(dir_a);
  fs::create_directories(dir_b);
  const auto create = [&](const fs::path& dir) {
    const auto created = world.client->call("session.create", {{"agent", "opencode"}, {"cwd", dir.string()}});
    INFO(created.dump());
    REQUIRE(created.contains("result"));
    return created["result"]["session"]["sessionId"].get<std::string>();
  };
  const std::string a = create(dir_a);
  const std::string b = create(dir_b);
  const auto send_a = world.client->send("session.send", {{"sessionId", a}, {"text", "say alpha"}});
  const auto send_b = world.client->send("session.send", {{"sessionId", b}, {"text", "say beta"}});
  const auto done_a = world.client->response(send_a);
  const auto done_b = world.client->response(send_b);
  INFO(done_a.dump() << "\n" << done_b.dump() << "\n" << world.transcript());
  REQUIRE(done_a.contains("result"));
  REQUIRE(done_b.contains("result"));
  CHECK(done_a["result"]["text"] == alpha);
  CHECK(done_b["result"]["text"] == beta);
  CHECK(servers_of(world).size() == 1);

  // Each session's deltas, in the order the client saw them, spell its own answer and nothing of the other's;
  // and the two streams overlapped (each had a delta before the other's last).
  std::map<std::string, std::string> streamed;
  std::map<std::string, std::vector<std::size_t>> positions;
  const auto events = world.client->events();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& event = events[i];
    if (event.value("type", "") != "message.delta" || event["data"].value("kind", "text") != "text") continue;
    const std::string session = event.value("sessionId", "");
    streamed[session] += event["data"]["text"].get<std::string>();
    positions[session].push_back(i);
  }
  CHECK(streamed[a] == alpha);
  CHECK(streamed[b] == beta);
  REQUIRE(positions[a].size() >= 2);
  REQUIRE(positions[b].size() >= 2);
  CHECK(positions[a].front() < positions[b].back());
  CHECK(positions[b].front() < positions[a].back());
}

TEST_CASE("opencode: the server's secret is on no command line and in no log line, and a request without it is refused", "[e2e][opencode]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.text("Hi.", 1, 0)}));
  if (!world.ready()) return;
  // The daemon logs everything it can (debug) to a file of its own, for the search below.
  const fs::path log = world.tmp.path() / "daemon.log";
  auto environment = profile.environment(world.tmp.path() / "home", world.mock->base_url(), world.binary);
  environment.push_back("SWITCHBOARD_LOG_FILE=" + log.string());
  world.client = std::make_unique<switchboard::testing::DaemonClient>(
      std::vector<std::string>{"--log-level", "debug", "stdio", "--data-dir", (world.tmp.path() / "data").string()}, environment);
  REQUIRE(world.client->call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "e2e"}}}}).contains("result"));
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello"}})["result"]["text"] == "Hi.");

  const auto servers = servers_of(world);
  REQUIRE(servers.size() == 1);
  const std::string secret = environment_value(servers[0], "OPENCODE_SERVER_PASSWORD");
  REQUIRE(secret.size() >= 16);
  const std::string authorization = basic_authorization("opencode", secret);

  // No process's command line shows it (what `ps` prints).
  std::vector<std::string> showing;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    for (const auto& argument : proc_entries(entry.path() / "cmdline")) {
      if (argument.find(secret) != std::string::npos) showing.push_back(name);
    }
  }
  CHECK(showing.empty());

  // The server answers only with the secret: the check above names the right server and port.
  const auto ports = listening_ports(servers[0]);
  REQUIRE(ports.size() == 1);
  switchboard::testing::RawHttpClient without(ports[0]);
  CHECK(without.request("GET", "/session", {}).status == 401);
  switchboard::testing::RawHttpClient wrong(ports[0]);
  CHECK(wrong.request("GET", "/session", {basic_authorization("opencode", secret + "x")}).status == 401);
  switchboard::testing::RawHttpClient with(ports[0]);
  CHECK(with.request("GET", "/session", {authorization}).status == 200);

  world.client->close_stdin();
  REQUIRE(world.client->daemon().wait(std::chrono::seconds(30)) == 0);
  const std::string logged = file_text(log);
  CHECK(logged.find("opencode") != std::string::npos);  // the log is there and speaks of the server
  CHECK(logged.find(secret) == std::string::npos);
  CHECK(logged.find(authorization.substr(authorization.rfind(' ') + 1)) == std::string::npos);
}

TEST_CASE("opencode: an idle server is stopped to free its memory and the session resumes on a new one", "[e2e][opencode]") {
  e2e::AgentProfile profile = opencode();
  const auto environment = profile.environment;
  profile.environment = [environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
    auto variables = environment(home, mock_url, cli);
    variables.push_back("SWITCHBOARD_OPENCODE_IDLE_STOP=2s");
    return variables;
  };
  e2e::AgentWorld world(profile, Json::array({profile.text("Noted: the colour is teal.", 1, 0),
                                              profile.when_any_prompt_contains("the colour is teal", "It was teal.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "remember: the colour is teal"}})["result"]["text"] ==
          "Noted: the colour is teal.");
  REQUIRE(servers_of(world).size() == 1);
  // Two seconds without a turn: the server is gone (its memory with it), the session reports stopped, no error.
  CHECK(switchboard::testing::eventually([&] { return servers_of(world).empty(); }, std::chrono::seconds(20), e2e::kProcessScanInterval));
  std::size_t at = 0;
  const auto stopped = world.client->wait_event(
      [&](const Json& e) {
        return e.value("type", "") == "session.state" && e.value("sessionId", "") == id && e["data"].value("state", "") == "stopped";
      },
      at, std::chrono::seconds(10));
  CHECK_FALSE(stopped.is_null());
  for (const auto& event : world.client->events()) CHECK(event.value("type", "") != "agent.error");

  // The next prompt brings up a new server, and the conversation goes on there.
  auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "which colour?"}});
  INFO(resumed.dump() << "\n" << world.transcript());
  REQUIRE(resumed.contains("result"));
  CHECK(resumed["result"]["text"] == "It was teal.");
  CHECK(servers_of(world).size() == 1);
}

TEST_CASE("opencode: a question of OpenCode's question tool is ours to answer and the model hears the answer", "[e2e][opencode]") {
  const e2e::AgentProfile& profile = opencode();
  const Json options = Json::array({Json{{"label", "Red"}, {"description", "warm"}}, Json{{"label", "Blue"}, {"description", "cool"}}});
  const Json ask{{"text", "Let me ask."},
                 {"function_call",
                  {{"name", "question"},
                   {"arguments", {{"questions", Json::array({Json{{"question", "Which colour?"}, {"header", "Colour"}, {"options", options}}})}}}}}};
  e2e::AgentWorld world(profile, Json::array({ask, mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "Blue"}},
                                                                     "You picked blue.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  world.client->send("session.send", {{"sessionId", id}, {"text", "ask me a colour"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("question.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  const auto& request = asked["data"]["request"];
  REQUIRE(request["questions"].size() == 1);
  CHECK(request["questions"][0]["question"] == "Which colour?");
  CHECK(request["questions"][0]["header"] == "Colour");
  CHECK(request["questions"][0]["options"] == Json::array({"Red", "Blue"}));
  const auto answered = world.client->call("question.respond", {{"requestId", request["requestId"]}, {"answers", Json::array({"Blue"})}});
  INFO(answered.dump());
  CHECK(answered.contains("result"));
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "end_turn");
  CHECK(stopped["data"]["text"] == "You picked blue.");
}

TEST_CASE("opencode: a multiple-choice question's answer reaches OpenCode as its labels", "[e2e][opencode]") {
  const e2e::AgentProfile& profile = opencode();
  const Json options = Json::array({Json{{"label", "Red"}, {"description", "warm"}}, Json{{"label", "Blue"}, {"description", "cool"}},
                                    Json{{"label", "Green"}, {"description", "calm"}}});
  const Json ask{{"text", "Let me ask."},
                 {"function_call",
                  {{"name", "question"},
                   {"arguments", {{"questions", Json::array({Json{{"question", "Which colours?"}, {"header", "Colours"},
                                                                   {"options", options}, {"multiple", true}}})}}}}}};
  e2e::AgentWorld world(profile, Json::array({ask, profile.after_tool_output("Noted.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  world.client->send("session.send", {{"sessionId", id}, {"text", "ask me colours"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("question.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  CHECK(asked["data"]["request"]["questions"][0]["multiSelect"] == true);
  // As the console sends a multiple choice: the labels joined by ", ".
  const auto answered = world.client->call("question.respond", {{"requestId", asked["data"]["request"]["requestId"]}, {"answers", Json::array({"Red, Green"})}});
  CHECK(answered.contains("result"));
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "end_turn");
  // What the model was told: OpenCode's rendering of the labels (it joins them with ", " itself, so the split is
  // proven by the unit test of question_reply, not here).
  std::string told;
  for (const auto& request : world.mock->message_requests()) told += request.dump();
  INFO(told.substr(told.size() > 3000 ? told.size() - 3000 : 0));
  CHECK(told.find("Red") != std::string::npos);
  CHECK(told.find("Green") != std::string::npos);
  CHECK(told.find("\\\"Which colours?\\\"=\\\"Red, Green\\\"") != std::string::npos);
}

// The first event of `type` whose data has `key` == `value`, or null.
Json event_where(const std::vector<Json>& events, const std::string& type, const std::string& key, const Json& value) {
  for (const auto& event : events) {
    if (event.value("type", "") == type && event["data"].contains(key) && event["data"][key] == value) return event;
  }
  return nullptr;
}

TEST_CASE("opencode: an edit's change reaches the client as a diff on its tool.started, and the file is edited", "[e2e][opencode]") {
  const e2e::AgentProfile& profile = opencode();
  // OpenCode edits only a file it has read in the session. Relative paths: OpenCode takes them from the
  // session's directory (the test's working directory is not known when the script is written).
  const Json read{{"text", "Reading it."}, {"function_call", {{"name", "read"}, {"arguments", {{"filePath", "notes.txt"}}}}}};
  const Json edit{{"text", "Editing it."},
                  {"function_call", {{"name", "edit"}, {"arguments", {{"filePath", "notes.txt"}, {"oldString", "beta"}, {"newString", "BETA"}}}}}};
  Json edit_after_read = edit;
  edit_after_read["match"] = {{"last_input_is_tool_output", true}};
  e2e::AgentWorld world(profile, Json::array({read, edit_after_read,
                                              mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "applied"}}, "Edited.")}));
  if (!world.ready()) return;
  fs::create_directories(world.work);
  std::ofstream(world.work / "notes.txt") << "alpha\nbeta\ngamma\n";
  world.start_daemon();
  // accept-edits: the adapter answers the edit's permission itself, so the turn runs through.
  const auto id = world.create_session("accept-edits");
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "edit the notes"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent.contains("result"));
  CHECK(sent["result"]["text"] == "Edited.");
  CHECK(file_text(world.work / "notes.txt") == "alpha\nBETA\ngamma\n");
  const auto events = world.client->events();
  const auto started = event_where(events, "tool.started", "tool", "edit");
  REQUIRE_FALSE(started.is_null());
  REQUIRE(started["data"].contains("diffs"));
  CHECK(started["data"]["diffs"] == Json::array({Json{{"path", "notes.txt"}, {"oldText", "beta"}, {"newText", "BETA"}}}));
  // The read before it changes nothing: no diffs.
  const auto read_started = event_where(events, "tool.started", "tool", "read");
  REQUIRE_FALSE(read_started.is_null());
  CHECK_FALSE(read_started["data"].contains("diffs"));
}

TEST_CASE("opencode: a task's sub-agent asks before its command and its activity nests inside the task call", "[e2e][opencode]") {
  const e2e::AgentProfile& profile = opencode();
  const Json task{{"text", "Delegating."},
                  {"function_call", {{"name", "task"}, {"arguments", {{"description", "say sub hello"}, {"prompt", "Run echo sub and report."},
                                                                      {"subagent_type", "general"}}}}}};
  const Json child_command{{"text", "Child running."},
                           {"function_call", {{"name", "bash"}, {"arguments", {{"command", "echo sub"}, {"description", "child command"}}}}}};
  Json child_request = child_command;
  child_request["match"] = {{"last_user_text_contains", "Run echo sub"}};
  e2e::AgentWorld world(profile, Json::array({task, child_request,
                                              mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "sub"}}, "sub done"),
                                              mock_reply::when({{"last_input_is_tool_output", true}, {"tool_output_contains", "sub done"}}, "Parent done.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  world.client->send("session.send", {{"sessionId", id}, {"text", "delegate please"}, {"wait", false}});
  std::size_t at = 0;
  // OpenCode gives a sub-agent's session rules of its own: the server's OPENCODE_PERMISSION makes it ask too.
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  CHECK(asked["data"]["request"]["tool"] == "bash");
  CHECK(world.client->call("permission.respond", {{"requestId", asked["data"]["request"]["requestId"]}, {"decision", "allow_once"}}).contains("result"));
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "end_turn");
  CHECK(stopped["data"]["text"] == "Parent done.");

  const auto events = world.client->events();
  const auto task_started = event_where(events, "tool.started", "tool", "task");
  REQUIRE_FALSE(task_started.is_null());
  CHECK_FALSE(task_started["data"].contains("parentToolCallId"));
  const Json task_call = task_started["data"]["toolCallId"];
  const auto child_started = event_where(events, "tool.started", "tool", "bash");
  REQUIRE_FALSE(child_started.is_null());
  CHECK(child_started["data"]["parentToolCallId"] == task_call);
  CHECK(child_started["data"]["input"]["command"] == "echo sub");
  const auto child_done = event_where(events, "tool.completed", "toolCallId", child_started["data"]["toolCallId"]);
  REQUIRE_FALSE(child_done.is_null());
  CHECK(child_done["data"]["output"] == "sub\n");
  const auto child_text = event_where(events, "message.completed", "text", "sub done");
  REQUIRE_FALSE(child_text.is_null());
  CHECK(child_text["data"]["parentToolCallId"] == task_call);
  const auto parent_text = event_where(events, "message.completed", "text", "Parent done.");
  REQUIRE_FALSE(parent_text.is_null());
  CHECK_FALSE(parent_text["data"].contains("parentToolCallId"));
  // One turn: the sub-agent's idle did not end it.
  std::size_t turns_stopped = 0;
  for (const auto& event : events) turns_stopped += event.value("type", "") == "turn.stopped" ? 1 : 0;
  CHECK(turns_stopped == 1);

  // OpenCode's own history of the session nests the sub-agent's work the same way, in the order it ran.
  // The sub-agent's session is not listed: it is part of its parent's.
  const auto listed = world.client->call("history.list", {{"agent", "opencode"}, {"cwd", world.work.string()}});
  INFO(listed.dump());
  REQUIRE(listed["result"]["sessions"].size() == 1);
  const std::string provider_id = listed["result"]["sessions"][0]["providerSessionId"];
  const auto read = world.client->call("history.read", {{"agent", "opencode"}, {"cwd", world.work.string()}, {"providerSessionId", provider_id}});
  INFO(read.dump());
  REQUIRE(read.contains("result"));
  CHECK(read["result"]["skippedLines"] == 0);
  const auto& replayed = read["result"]["events"];
  std::vector<std::string> order;
  for (const auto& event : replayed) {
    const std::string type = event["type"];
    const auto& data = event["data"];
    if (type == "tool.started") order.push_back("started " + data.value("tool", "") + (data.contains("parentToolCallId") ? " nested" : ""));
    if (type == "tool.completed") order.push_back("completed");  // its call's tool.started says where it nests
    if (type == "message.completed") order.push_back("text " + data.value("text", "") + (data.contains("parentToolCallId") ? " nested" : ""));
  }
  CHECK(order == std::vector<std::string>{"text Delegating.", "started task", "text Child running. nested", "started bash nested",
                                          "completed", "text sub done nested", "completed", "text Parent done."});
  const std::vector<Json> replayed_list(replayed.begin(), replayed.end());
  const auto replayed_child = event_where(replayed_list, "tool.started", "tool", "bash");
  const auto replayed_task = event_where(replayed_list, "tool.started", "tool", "task");
  REQUIRE_FALSE(replayed_child.is_null());
  CHECK(replayed_child["data"]["parentToolCallId"] == replayed_task["data"]["toolCallId"]);
}


// ---- Controls: plans, context usage, commands, options, MCP servers, fork, rewind, compact --------------------

// Every event of `type` the client saw, in order.
std::vector<Json> events_of(const std::vector<Json>& events, const std::string& type) {
  std::vector<Json> found;
  for (const auto& event : events) {
    if (event.value("type", "") == type) found.push_back(event);
  }
  return found;
}

// The text of the user messages of a Chat Completions request, in order.
std::vector<std::string> user_texts(const Json& request) {
  std::vector<std::string> texts;
  for (const auto& message : request["body"].value("messages", Json::array())) {
    if (message.value("role", "") != "user") continue;
    const auto& content = message["content"];
    if (content.is_string()) {
      texts.push_back(content.get<std::string>());
      continue;
    }
    std::string text;
    for (const auto& part : content) text += part.value("text", "");
    texts.push_back(text);
  }
  return texts;
}

// The mock's requests of the session's turns (OpenCode's title and compaction requests have no tools).
std::vector<Json> turn_requests(const e2e::AgentWorld& world) {
  std::vector<Json> requests;
  for (auto& request : world.mock->message_requests()) {
    if (request["body"].contains("tools")) requests.push_back(std::move(request));
  }
  return requests;
}

Json todo(const std::string& content, const std::string& status, const std::string& priority) {
  return Json{{"content", content}, {"status", status}, {"priority", priority}};
}

TEST_CASE("opencode: a plan created then updated arrives twice, whole, and usage rises during the turn against the model's window", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  const Json plan{{"text", "Planning."},
                  {"function_call", {{"name", "todowrite"}, {"arguments", {{"todos", Json::array({todo("Write code", "in_progress", "high"),
                                                                                                  todo("Test it", "pending", "medium")})}}}}}};
  Json update{{"text", "Updating."},
              {"function_call", {{"name", "todowrite"}, {"arguments", {{"todos", Json::array({todo("Write code", "completed", "high"),
                                                                                              todo("Test it", "cancelled", "low")})}}}}}};
  update["match"] = {{"last_input_is_tool_output", true}};
  Json done = profile.after_tool_output("Planned.");
  done["usage"] = {{"input_tokens", 20000}, {"output_tokens", 30}};
  e2e::AgentWorld world(profile, Json::array({plan, update, done}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto agents = world.client->call("agents.list");
  Json capabilities;
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent.value("agent", "") == "opencode") capabilities = agent["capabilities"];
  }
  INFO(capabilities.dump());
  CHECK(capabilities["plans"] == true);
  CHECK(capabilities["contextUsage"] == true);
  const auto id = world.create_session();
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "make a plan"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent["result"]["text"] == "Planned.");

  const auto events = world.client->events();
  const auto plans = events_of(events, "plan.updated");
  REQUIRE(plans.size() == 2);
  CHECK(plans[0]["data"]["entries"] == Json::array({Json{{"content", "Write code"}, {"status", "in_progress"}, {"priority", "high"}},
                                                     Json{{"content", "Test it"}, {"status", "pending"}, {"priority", "medium"}}}));
  // OpenCode's `cancelled` is closed: completed.
  const Json final_plan = Json::array({Json{{"content", "Write code"}, {"status", "completed"}, {"priority", "high"}},
                                       Json{{"content", "Test it"}, {"status", "completed"}, {"priority", "low"}}});
  CHECK(plans[1]["data"]["entries"] == final_plan);
  CHECK(plans[1]["data"]["turnId"] == sent["result"]["turnId"]);

  // One usage report per model request, each inside the turn, rising; the window is the configured limit.context.
  const auto usages = events_of(events, "usage.updated");
  REQUIRE(usages.size() == 3);
  std::int64_t previous = 0;
  for (const auto& usage : usages) {
    CHECK(usage["data"]["turnId"] == sent["result"]["turnId"]);
    CHECK(usage["data"]["usage"]["windowTokens"] == 32000);
    const std::int64_t used = usage["data"]["usage"]["usedTokens"];
    CHECK(used > previous);
    previous = used;
  }
  CHECK(usages.back()["data"]["usage"]["usedTokens"] == 20030);
  const auto info = world.client->call("session.get", {{"sessionId", id}})["result"]["session"];
  CHECK(info["plan"] == final_plan);
  CHECK(info["usage"]["usedTokens"] == 20030);
  CHECK(e2e::lifecycle_violations(events).empty());
}

TEST_CASE("opencode: the commands OpenCode offers are listed, and /name runs as OpenCode's command, not as text", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  // OpenCode's built-in `init` expands its template, with the arguments in place of $ARGUMENTS.
  e2e::AgentWorld world(profile, Json::array({profile.text("Started.", 1, 0),
                                              profile.when_last_prompt_contains("Create or update `AGENTS.md`", "Initialized.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  // The agent starts with the first prompt; the commands come once it has.
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello"}})["result"]["text"] == "Started.");
  Json commands;
  CHECK(switchboard::testing::eventually([&] {
    commands = world.client->call("session.get", {{"sessionId", id}})["result"]["session"].value("commands", Json());
    return commands.is_array() && !commands.empty();
  }, std::chrono::seconds(20)));
  INFO(commands.dump());
  Json init;
  for (const auto& command : commands) {
    if (command["name"] == "init") init = command;
  }
  REQUIRE(init.is_object());
  CHECK(init["description"].get<std::string>().find("AGENTS.md") != std::string::npos);
  CHECK(init["argumentHint"] == "<arguments>");
  CHECK_FALSE(events_of(world.client->events(), "commands.updated").empty());

  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "/init focus on the tests"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent.contains("result"));
  CHECK(sent["result"]["stopReason"] == "end_turn");
  CHECK(sent["result"]["text"] == "Initialized.");
  const auto requests = turn_requests(world);
  REQUIRE(requests.size() == 2);
  const auto texts = user_texts(requests[1]);
  REQUIRE_FALSE(texts.empty());
  CHECK(texts.back().find("focus on the tests") != std::string::npos);
  CHECK(texts.back().find("/init") == std::string::npos);
}

TEST_CASE("opencode: reasoning effort is the model's variants, and a change reaches the next model request", "[e2e][opencode][controls]") {
  e2e::AgentProfile profile = opencode();
  const auto environment = profile.environment;
  profile.environment = [environment](const fs::path& home, const std::string& mock_url, const std::string& cli) {
    auto variables = environment(home, mock_url, cli);
    for (auto& variable : variables) {
      if (variable.rfind("OPENCODE_CONFIG_CONTENT=", 0) == 0) variable = "OPENCODE_CONFIG_CONTENT=" + provider_config(mock_url, true);
    }
    return variables;
  };
  e2e::AgentWorld world(profile, Json::array({profile.text("One.", 1, 0), profile.text("Two.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "first"}})["result"]["text"] == "One.");
  Json options;
  CHECK(switchboard::testing::eventually([&] {
    options = world.client->call("session.get", {{"sessionId", id}})["result"]["session"].value("options", Json());
    return options.is_array() && !options.empty();
  }, std::chrono::seconds(10)));
  INFO(options.dump());
  REQUIRE(options.size() == 1);
  CHECK(options[0]["id"] == "effort");
  CHECK(options[0]["kind"] == "select");
  CHECK(options[0]["currentValue"] == "default");
  std::vector<std::string> values;
  for (const auto& value : options[0]["values"]) values.push_back(value["value"]);
  CHECK(values == std::vector<std::string>{"default", "low", "medium", "high"});

  const auto set = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "high"}});
  INFO(set.dump());
  REQUIRE(set.contains("result"));
  CHECK(world.client->call("session.send", {{"sessionId", id}, {"text", "second"}})["result"]["text"] == "Two.");
  const auto requests = turn_requests(world);
  REQUIRE(requests.size() == 2);
  CHECK_FALSE(requests[0]["body"].contains("reasoning_effort"));
  CHECK(requests[1]["body"].value("reasoning_effort", "") == "high");
  const auto after = world.client->call("session.get", {{"sessionId", id}})["result"]["session"]["options"];
  CHECK(after[0]["currentValue"] == "high");
  // A value the model does not have is refused, naming the field.
  const auto bad = world.client->call("session.setOption", {{"sessionId", id}, {"optionId", "effort"}, {"value", "extreme"}});
  INFO(bad.dump());
  CHECK(bad["error"]["code"] == -32602);
}

bool process_alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> pids;
  std::ifstream in(file);
  pid_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

Json mcp_server(const std::string& name, const fs::path& pid_file, const fs::path& env_file) {
  return Json{{"name", name},
              {"transport", "stdio"},
              {"command", "python3"},
              {"args", Json::array({switchboard::testing::source_path("tests/support/mcp_stdio_server.py"), "--pid-file", pid_file.string(),
                                    "--env-file", env_file.string()})},
              {"env", {{"SB_TEST_MARK", "given"}}}};
}

TEST_CASE("opencode: a session's MCP server reaches the model's tools, keeps no secret of ours, and ends with the session and with the daemon", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.text("With tools.", 1, 0), profile.text("Without them.", 1, 0),
                                              profile.text("Second server.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto env = world.tmp.path() / "mcp.env";
  fs::create_directories(world.work);
  const auto created = world.client->call("session.create", {{"agent", "opencode"}, {"cwd", world.work.string()},
                                                             {"mcpServers", Json::array({mcp_server("sbtest", pids, env)})}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  // Another session in the same directory, without MCP servers: OpenCode's MCP servers are per directory, and
  // the first session's must not show in its tools.
  const auto other = world.create_session();
  const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", "use the tool"}});
  INFO(sent.dump() << "\n" << world.transcript());
  REQUIRE(sent["result"]["text"] == "With tools.");
  REQUIRE(world.client->call("session.send", {{"sessionId", other}, {"text", "no tools"}})["result"]["text"] == "Without them.");
  const auto requests = turn_requests(world);
  REQUIRE(requests.size() == 2);
  auto tools_of = [](const Json& request) {
    std::set<std::string> names;
    for (const auto& tool : request["body"]["tools"]) names.insert(tool["function"]["name"].get<std::string>());
    return names;
  };
  CHECK(tools_of(requests[0]).count("sbtest_sb_echo") == 1);
  CHECK(tools_of(requests[1]).count("sbtest_sb_echo") == 0);
  CHECK(tools_of(requests[1]).count("bash") == 1);

  const auto statuses = events_of(world.client->events(), "mcp.status");
  REQUIRE_FALSE(statuses.empty());
  CHECK(statuses.back()["data"]["servers"] == Json::array({Json{{"name", "sbtest"}, {"transport", "stdio"}, {"status", "connected"}}}));
  // Its environment: the variable given, none of the daemon's secrets (OpenCode's server password included;
  // SWITCHBOARD_ORIGIN only marks what the session started, so the daemon can end it).
  const auto environment = Json::parse(file_text(env));
  CHECK(environment.value("SB_TEST_MARK", "") == "given");
  std::vector<std::string> secrets;
  for (const auto& [name, value] : environment.items()) {
    if (name == "OPENCODE_SERVER_PASSWORD" || (name != "SWITCHBOARD_ORIGIN" && name.rfind("SWITCHBOARD_", 0) == 0)) secrets.push_back(name);
  }
  CHECK(secrets == std::vector<std::string>{});
  const auto started = pids_in(pids);
  REQUIRE(started.size() == 1);
  CHECK(process_alive(started[0]));
  const auto deleted = world.client->call("session.delete", {{"sessionId", id}});
  INFO(deleted.dump());
  CHECK(switchboard::testing::eventually([&] { return !process_alive(started[0]); }, std::chrono::seconds(20), e2e::kProcessScanInterval));

  // A second session's server ends with the daemon.
  const auto pids2 = world.tmp.path() / "mcp2.pids";
  const auto again = world.client->call("session.create", {{"agent", "opencode"}, {"cwd", world.work.string()},
                                                           {"mcpServers", Json::array({mcp_server("sbtest", pids2, env)})}});
  REQUIRE(again.contains("result"));
  const std::string second = again["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", second}, {"text", "again"}})["result"]["text"] == "Second server.");
  const auto running = pids_in(pids2);
  REQUIRE(running.size() == 1);
  world.client->close_stdin();
  REQUIRE(world.client->daemon().wait(std::chrono::seconds(30)) == 0);
  CHECK(switchboard::testing::eventually([&] { return !process_alive(running[0]); }, std::chrono::seconds(10), e2e::kProcessScanInterval));
}

TEST_CASE("opencode: an MCP server slow to connect holds up no other session's prompt on the same server", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.when_last_prompt_contains("other one", "Other first."),
                                              profile.when_last_prompt_contains("other two", "Other again."),
                                              profile.when_last_prompt_contains("slow one", "Slow answer.")}));
  if (!world.ready()) return;
  world.start_daemon();
  fs::create_directories(world.work);
  // The other session runs first, so the OpenCode server both share is up.
  const auto other = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", other}, {"text", "other one"}})["result"]["text"] == "Other first.");

  // OpenCode answers POST /mcp only once the server has connected: this one takes 8 s to start.
  const auto pids = world.tmp.path() / "mcp.pids";
  const auto env = world.tmp.path() / "mcp.env";
  Json slow = mcp_server("slowsrv", pids, env);
  slow["command"] = "sh";
  slow["args"] = Json::array({"-c", "sleep 8; exec python3 \"$0\" \"$@\"", switchboard::testing::source_path("tests/support/mcp_stdio_server.py"),
                              "--pid-file", pids.string(), "--env-file", env.string()});
  const auto created = world.client->call("session.create", {{"agent", "opencode"}, {"cwd", world.work.string()}, {"mcpServers", Json::array({slow})}});
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  const std::string id = created["result"]["session"]["sessionId"];
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "slow one"}, {"wait", false}}).contains("result"));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // its start is registering the server by now

  // The other session's prompt is answered while OpenCode still registers the slow server (it has not answered
  // POST /mcp: the slow session has no final status for it yet).
  auto settled = [&] {
    for (const auto& status : events_of(world.client->events(), "mcp.status")) {
      if (status.value("sessionId", "") != id) continue;
      for (const auto& server : status["data"]["servers"]) {
        if (server["status"] != "pending") return true;
      }
    }
    return false;
  };
  const auto again = world.client->call("session.send", {{"sessionId", other}, {"text", "other two"}});
  INFO(again.dump() << "\n" << world.transcript());
  REQUIRE(again["result"]["text"] == "Other again.");
  CHECK_FALSE(settled());

  // The slow session goes on once OpenCode has answered for its server.
  CHECK(switchboard::testing::eventually([&] {
    for (const auto& stopped : events_of(world.client->events(), "turn.stopped")) {
      if (stopped.value("sessionId", "") == id) return true;
    }
    return false;
  }, std::chrono::seconds(60), std::chrono::milliseconds(200)));
  CHECK(settled());
}

// The turns' prompts, as the mock saw them in its latest turn request.
std::vector<std::string> last_request_prompts(const e2e::AgentWorld& world) {
  const auto requests = turn_requests(world);
  return requests.empty() ? std::vector<std::string>{} : user_texts(requests.back());
}

TEST_CASE("opencode: a fork at a turn carries the conversation up to it and nothing after, and both sessions answer", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.text("A1.", 1, 0), profile.text("A2.", 1, 0), profile.text("A3.", 1, 0),
                                              profile.text("Fork answer.", 1, 0), profile.text("Original answer.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  std::vector<std::string> turns;
  for (const std::string prompt : {"prompt one", "prompt two", "prompt three"}) {
    const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", prompt}});
    INFO(sent.dump());
    REQUIRE(sent.contains("result"));
    turns.push_back(sent["result"]["turnId"]);
  }
  const auto forked = world.client->call("session.fork", {{"sessionId", id}, {"turnId", turns[1]}});
  INFO(forked.dump() << "\n" << world.transcript());
  REQUIRE(forked.contains("result"));
  const std::string fork = forked["result"]["session"]["sessionId"];
  CHECK(forked["result"]["session"]["forkedFrom"] == Json{{"sessionId", id}, {"turnId", turns[1]}});
  REQUIRE(world.client->call("session.send", {{"sessionId", fork}, {"text", "in the fork"}})["result"]["text"] == "Fork answer.");
  INFO(Json(turn_requests(world)).dump().substr(0, 4000));
  CHECK(last_request_prompts(world) == std::vector<std::string>{"prompt one", "prompt two", "in the fork"});
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "in the original"}})["result"]["text"] == "Original answer.");
  CHECK(last_request_prompts(world) == std::vector<std::string>{"prompt one", "prompt two", "prompt three", "in the original"});
}

TEST_CASE("opencode: a rewind drops the turn and later ones from the next model request, and leaves the files alone", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  e2e::AgentWorld world(profile, Json::array({profile.text("A1.", 1, 0), profile.run_command("echo kept > made.txt"),
                                              profile.after_tool_output("A2."), profile.text("A3.", 1, 0), profile.text("After.", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  // A git repository: there OpenCode's own revert would also undo the command's file.
  fs::create_directories(world.work);
  REQUIRE(std::system(("git -C '" + world.work.string() + "' init -q").c_str()) == 0);
  const auto id = world.create_session("full-access");
  std::vector<std::string> turns;
  for (const std::string prompt : {"prompt one", "prompt two", "prompt three"}) {
    const auto sent = world.client->call("session.send", {{"sessionId", id}, {"text", prompt}});
    INFO(sent.dump() << "\n" << world.transcript());
    REQUIRE(sent.contains("result"));
    turns.push_back(sent["result"]["turnId"]);
  }
  REQUIRE(fs::exists(world.work / "made.txt"));
  const auto rewound = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", turns[1]}, {"conversation", true}, {"files", false}});
  INFO(rewound.dump() << "\n" << world.transcript());
  REQUIRE(rewound.contains("result"));
  CHECK(fs::exists(world.work / "made.txt"));
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "after the rewind"}})["result"]["text"] == "After.");
  CHECK(last_request_prompts(world) == std::vector<std::string>{"prompt one", "after the rewind"});
}

TEST_CASE("opencode: compact reaches OpenCode's summarize, and the next request starts from the summary", "[e2e][opencode][controls]") {
  const auto& profile = opencode();
  // OpenCode's summary request has no tools; a rule answers it.
  const Json summary{{"match", {{"developer_contains", "context summarization agent"}}},
                     {"reply", {{"text", "SUMMARY: the user said hello."}}},
                     {"times", 1}};
  e2e::AgentWorld world(profile, Json::array({profile.text("Hello back.", 1, 0), profile.text("After compact.", 1, 0)}), false,
                        Json::array({summary}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "hello there"}})["result"]["text"] == "Hello back.");
  const auto compacted = world.client->call("session.compact", {{"sessionId", id}});
  INFO(compacted.dump() << "\n" << world.transcript());
  REQUIRE(compacted.contains("result"));
  std::size_t at = 0;
  const auto status = world.client->wait_event(
      [](const Json& e) { return e.value("type", "") == "agent.status" && e["data"].value("status", "") == "compacted"; }, at,
      std::chrono::seconds(30));
  CHECK_FALSE(status.is_null());
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "go on"}})["result"]["text"] == "After compact.");
  const auto requests = turn_requests(world);
  REQUIRE_FALSE(requests.empty());
  const auto text = requests.back()["body"]["messages"].dump();
  INFO(text);
  // The conversation before the summary is gone from the request, the summary in its place.
  CHECK(text.find("hello there") == std::string::npos);
  CHECK(text.find("SUMMARY: the user said hello.") != std::string::npos);
  CHECK(e2e::lifecycle_violations(world.client->events()).empty());
}

}  // namespace opencode_e2e_tests
