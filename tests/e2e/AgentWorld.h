#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "MockReplies.h"
#include "support/DaemonClient.h"
#include "support/Eventually.h"
#include "support/MockProvider.h"
#include "support/TempDir.h"

// What an end-to-end test against a real agent CLI needs, whatever the agent: a profile that says how to run the
// agent and how to script its mock provider (AgentProfile), and one test's world (AgentWorld): a temporary HOME
// and working directory, the mock with the test's script, and a daemon over stdio (optionally with HTTP too) on a
// data directory that survives restart(). The scenarios in Conformance.h are written against these only, so every
// adapter runs the same ones.

namespace switchboard::testing::e2e {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// One change the model asks an agent's own file tools to make, in the session's working directory: a new file
// whose one line is `after` (when `before` is empty), or the line `before` of an existing file replaced by `after`.
struct FileChange {
  std::string path;  // relative to the session's working directory
  std::string before;
  std::string after;
};

// How to run one agent in the tests and how to say things to its mock provider. Every scripted reply is built
// here, because each provider API (and each CLI's way of asking for a tool) differs.
struct AgentProfile {
  std::string agent;        // the daemon's agent name (session.create)
  std::string cli_name;     // the name in scripts/agents.list (scripts/agent-path)
  std::string mock_server;  // tests/mock_provider/<mock_server>
  std::string cli_variable; // the daemon's environment variable naming the CLI's executable
  // A word of the CLI's own command line that tells its process apart from the tools it runs.
  std::string cli_marker;
  // The session mode in which running a shell command asks the client first.
  std::string asking_mode;
  // The tool name a shell command's permission request and tool events carry.
  std::string shell_tool;
  // The modes agents.list offers for the agent (checked when not empty).
  std::vector<std::string> modes;
  // A deny ends the agent's turn at once, without asking the model again (Grok Build, and OpenCode over ACP):
  // the denied-command scenario then expects the turn to end there instead of the model's reaction to the refusal.
  bool deny_ends_turn = false;
  // The agent forks a conversation (agents.list's capability `fork`): importing a conversation a session of ours
  // continues then makes a fork; without it the import is refused. Stated here so that a capability lost by
  // mistake fails the scenario instead of turning it into the refusal path.
  bool forks = false;
  // A model request the CLI makes on its own beside the conversation (Grok's forced session title), left out where
  // a scenario counts the conversation's requests; unset: none.
  std::function<bool(const Json& request)> side_request;

  // The daemon's environment (beyond the test's own) for this agent: the CLI's path, the mock's address, a HOME.
  std::function<std::vector<std::string>(const fs::path& home, const std::string& mock_base_url, const std::string& cli)>
      environment;
  // The mock's whole script around the test's turns (rules for side requests the CLI makes, say).
  std::function<Json(Json turns)> script;

  // Replies, one model request each. Those every mock says the same way default to MockReplies.h.
  std::function<Json(const std::string& text, int chunks, int delay_ms)> text = &mock_reply::text;
  std::function<Json(const std::string& command)> run_command;          // a reply that runs `command` in a shell
  std::function<Json(const std::string& text)> after_tool_output;       // answers the request carrying tool output
  std::function<Json(const std::string& text)> after_refused_tool;      // answers the request after a denied tool
  // The replies, one tool call each, that make the agent apply `change` with its own file tools (a read first where
  // the agent edits only files it has read). Unset: the agent cannot be made to write files against the mock.
  std::function<std::vector<Json>(const FileChange& change)> change_file;
  std::function<Json(const std::string& needle, const std::string& text)> when_last_prompt_contains =
      &mock_reply::when_last_prompt_contains;
  std::function<Json(const std::string& needle, const std::string& text)> when_any_prompt_contains =
      &mock_reply::when_any_prompt_contains;
  // The daemon that hosts the agent: the real switchboard unless the agent exists only in the tests' own daemon.
  std::string daemon_binary = SWITCHBOARD_BINARY;
  // Where the agent's executable is; by default scripts/agent-path's answer for cli_name (installed_cli).
  std::function<std::string()> locate_cli;
  // Deletes the agent's own record of its conversations (what a user clearing the CLI's history does), given the
  // test's HOME and the daemon's data directory.
  std::function<void(const fs::path& home, const fs::path& data_dir)> forget_conversations;
};

// The CLI's path from scripts/agent-path (which honours SWITCHBOARD_<NAME>_BIN), or "" when it is not installed.
std::string installed_cli(const std::string& name);

// True when the test must stop here because the CLI is missing: a failure under CI (CI set), a visible skip
// elsewhere.
bool cli_missing(const AgentProfile& profile, const std::string& binary);

// Live processes whose command line contains `needle`.
std::vector<pid_t> processes_matching(const std::string& needle);
// Live processes whose working directory is `dir` (agent CLIs and the tools they run work there).
std::vector<pid_t> processes_working_in(const fs::path& dir);

// How long and how often the scenarios poll for what the CLI does in its own time (scanning /proc costs).
inline constexpr std::chrono::seconds kCliPatience{30};
inline constexpr std::chrono::milliseconds kProcessScanInterval{50};

class AgentWorld {
 public:
  // `turns` are the model's replies in order; `rules` answer whichever request they match, in any order (the
  // mock's script, tests/mock_provider/README.md).
  AgentWorld(const AgentProfile& profile, const Json& turns, bool with_http = false, const Json& rules = Json::array());
  ~AgentWorld();  // validates every event the client saw against the schema

  const AgentProfile& profile;
  TempDir tmp{"e2e"};
  std::string binary;
  std::unique_ptr<MockProvider> mock;
  std::unique_ptr<DaemonClient> client;
  fs::path work = tmp.path() / "work";
  bool http = false;

  // False when the test should stop (the CLI is not installed; see cli_missing).
  bool ready() const;
  void start_daemon();
  // `switchboard serve` (HTTP only, an ephemeral port) on the test's data directory, with the agent's
  // environment; its runtime file (runtime()) says where it listens.
  std::unique_ptr<SpawnedDaemon> spawn_serve() const;
  // Stops the daemon by EOF on stdin, checks that nothing it started outlives it, and starts a new one on the same
  // data directory.
  void restart();
  std::string create_session(const std::string& mode = "");
  // The HTTP side's port and bearer token, from the daemon's runtime file (only with_http).
  Json runtime() const;
  // What the client saw, for failure messages.
  std::string transcript() const;
  void validate_events() const;
  // The agent CLI the daemon runs for this test: the group leader working in `work` whose command line has the
  // profile's marker (the CLI's wrappers and tools are in its group or groups of their own).
  std::vector<pid_t> cli_processes() const;
};

}  // namespace switchboard::testing::e2e
