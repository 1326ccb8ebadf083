#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "common/SharedServer.h"
#include "common/VersionProbe.h"
#include "switchboard/adapters/AgentRuntime.h"

namespace switchboard::adapters::opencode {

class OpenCodeSession;

// How the daemon runs OpenCode.
struct OpenCodeConfig {
  std::string executable = "opencode";  // a path, or a name looked up on PATH
  CliTimeouts timeouts;
  // With no turn in progress for this long the server is stopped (0: never).
  std::chrono::milliseconds idle_stop{std::chrono::minutes(10)};
};

// What OpenCode's sessions share: one `opencode serve` for all of them (it hosts any number of sessions in any
// number of directories and reports all of them on one event stream), started when the first session needs it.
// It listens on 127.0.0.1 at a port it picks, and only with the password this runtime made for it: a fresh
// random secret per server, given to it in its environment and sent by us as HTTP basic auth, never logged,
// never on a command line, never given to anyone else. Its events go to the session they name; when it dies,
// every session hears it, and the next start brings up a new server.
class OpenCodeRuntime final : public AgentRuntime {
 public:
  OpenCodeRuntime(boost::asio::io_context& io, OpenCodeConfig config);
  ~OpenCodeRuntime() override;

  protocol::AgentInfo info() const override { return m_probe->info(); }
  void begin_discovery() override { m_probe->run(); }
  std::unique_ptr<AgentAdapter> create(AdapterListener& listener) override;
  void stop(std::function<void()> done) override;

  // `ready` once the server takes requests (at once when it runs), or why it cannot.
  void when_running(const std::string& cwd, Completion ready);
  SharedServer& server() { return m_server; }
  void attach(const std::string& opencode_session_id, OpenCodeSession& session);
  void detach(const std::string& opencode_session_id);
  // A session did something (a prompt, an answer, an event of its own): the idle clock starts again.
  void note_activity();

  // MCP servers. OpenCode keeps them per directory (every session working there sees their tools), not per
  // session: the runtime adds a session's servers to the server in the session's directory (POST /mcp), shares
  // one between sessions there that name it with the same configuration, refuses one named the same but
  // configured differently, and disconnects it (which ends its process) when the last session holding it lets
  // go. `done` gets the server's status.
  void add_mcp_server(const std::string& cwd, const protocol::McpServer& server, const OpenCodeSession& holder,
                      std::function<void(protocol::McpServerState)> done);
  void release_mcp_servers(const OpenCodeSession& holder);
  // The MCP servers other sessions run in `cwd`: their tools are hidden from `holder`'s model.
  std::vector<std::string> foreign_mcp_servers(const std::string& cwd, const OpenCodeSession& holder) const;

 private:
  SharedServer::Spec server_spec(const std::string& cwd);
  void on_event(const SseEvent& event);
  void server_gone(const std::string& reason);
  void arm_idle_timer(std::chrono::milliseconds after);
  void on_idle_timer();
  // The server is gone, and the MCP servers it ran with it: whoever waits for one hears it failed.
  void forget_mcp_servers();

  boost::asio::io_context& m_io;
  OpenCodeConfig m_config;
  std::shared_ptr<VersionProbe> m_probe;
  SharedServer m_server;
  std::map<std::string, OpenCodeSession*> m_sessions;  // by OpenCode's session id
  // Sub-agent sessions (OpenCode's `task` tool runs one as a child session, whose events come under its own id):
  // child id -> the id in m_sessions whose session hears them, learnt from session.created's parentID.
  std::map<std::string, std::string> m_children;
  // The idle stop: an OpenCode server holds hundreds of MB whether or not anyone uses it.
  boost::asio::steady_timer m_idle_timer;
  std::chrono::steady_clock::time_point m_last_activity = std::chrono::steady_clock::now();
  // While an idle server is stopping, sessions asking for one wait for its exit, then get a new one.
  bool m_idle_stopping = false;
  bool m_stopping = false;  // the daemon is stopping: the idle timer stays disarmed
  struct McpHolding {
    nlohmann::json config;                       // as OpenCode takes it
    std::set<const OpenCodeSession*> holders;
    std::optional<protocol::McpServerState> state;  // unset while OpenCode connects it
    std::vector<std::function<void(protocol::McpServerState)>> waiting;
    std::uint64_t registration = 0;  // which POST /mcp its state comes from (a later one may hold the same name)
  };
  std::map<std::pair<std::string, std::string>, McpHolding> m_mcp;  // by directory and name
  std::uint64_t m_mcp_registrations = 0;
  std::vector<std::pair<std::string, Completion>> m_after_idle_stop;  // cwd, ready
  // Answers that come on connections of their own (SharedServer::send_alone) hold a weak_ptr to this.
  std::shared_ptr<OpenCodeRuntime*> m_self = std::make_shared<OpenCodeRuntime*>(this);
};

// The OPENCODE_PERMISSION of the server we start: the user's (`user_permissions`, when it is a JSON object) with
// `bash` and `edit` set to ask, so that sub-agents' sessions ask too (docs/agents/opencode.md).
std::string server_permissions(const std::optional<std::string>& user_permissions);

// An MCP server of ours as OpenCode's configuration takes it: a `local` one's command line (run through `env -u
// OPENCODE_SERVER_PASSWORD`, so the secret of the server we start never reaches it) and environment, a `remote`
// one's URL and headers (no OAuth discovery).
nlohmann::json mcp_config(const protocol::McpServer& server);
// OpenCode's status of one MCP server (an MCPStatus of GET/POST /mcp) as ours.
protocol::McpServerState mcp_state(const protocol::McpServer& server, const nlohmann::json& status);

// OpenCode's version from `opencode --version` ("1.18.33").
std::optional<std::string> parse_version_output(std::string_view output);

}  // namespace switchboard::adapters::opencode
