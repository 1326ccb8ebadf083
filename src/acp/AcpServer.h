#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "acp/AcpUpdates.h"
#include "client/RpcConnection.h"
#include "switchboard/protocol/generated/Methods.h"
#include "switchboard/transport/FdReader.h"
#include "switchboard/transport/FdWriter.h"
#include "switchboard/transport/LineFramer.h"

namespace switchboard::acp {

// `switchboard acp`: an Agent Client Protocol agent on the editor's pipes, and a client of the daemon's own
// protocol on a connected socket (the user's daemon.sock, or a socketpair to a daemon in this process). It
// knows no engine: every ACP method becomes our calls, our events become session/update notifications, our
// permission requests become session/request_permission requests (withdrawn with $/cancel_request when
// another client answers first). docs/acp.md has the mapping. One io_context thread; it never blocks it.
//
// `done` runs once with the exit code: 0 when the editor closed our stdin and the daemon then closed the
// connection, 1 when the daemon went away first.
class AcpServer {
 public:
  struct Options {
    std::string agent;                  // the hosted agent every session/new creates a session of
    std::string default_cwd;            // --cwd: for a session/new or session/list without a cwd
    std::filesystem::path spill_dir;    // where images and binary resources of prompts are written
    bool attached = false;              // the daemon is the user's (said in initialize's _meta)
  };

  AcpServer(boost::asio::io_context& io, Options options, int daemon_fd, int in_fd, int out_fd, std::function<void(int)> done);
  ~AcpServer();
  AcpServer(const AcpServer&) = delete;
  AcpServer& operator=(const AcpServer&) = delete;

  void start();
  // Runs once the daemon answered our initialize (so its transport reads the connection).
  void on_daemon_initialized(std::function<void()> callback) { m_on_daemon_initialized = std::move(callback); }
  // A signal or the editor going away: half-close the daemon connection and finish when it closes.
  void stop();
  bool finished() const { return m_finished; }

 private:
  using Json = nlohmann::json;

  // A session/prompt waiting for its turn's end.
  struct PendingPrompt {
    Json acp_id;
    std::optional<std::string> turn_id;   // known from session.send, or from turn.started of its queue id
    std::optional<std::string> queue_id;  // while it waits behind another turn
    bool cancel_requested = false;        // the editor sent session/cancel: the answer is `cancelled`
  };
  // A session/load in progress: live events of its session are held until the stored ones were replayed.
  struct Replay {
    Json acp_id;
    std::string session_id;
    protocol::SessionInfo session;
    std::int64_t last_seq = 0;
    std::vector<Json> held;
    ShownDiffs shown_diffs;  // of the stored events replayed
    bool opened_session = false;  // the editor did not follow the session before this load
  };
  struct RunningTool {
    std::string tool;
    std::string tool_call_id;
  };
  // One session this editor follows (it created, loaded, resumed or prompted it): its events are sent to the
  // editor, and this is what is kept for it. Closing the session forgets all of it at once.
  struct OpenSession {
    std::shared_ptr<Replay> replay;     // while session/load replays its stored events
    std::vector<PendingPrompt> prompts;
    // Turns that ended before session.send's reply named them (the events may come first). Bounded.
    std::deque<protocol::TurnStoppedEvent> stopped_turns;
    // The tool calls running, newest last: a permission request names the tool, not the call.
    std::vector<RunningTool> running_tools;
    ShownDiffs shown_diffs;  // the running calls' diffs (live)
    Json sent_options = Json::array();  // the config options the editor has now
  };
  // A session/request_permission we sent, until the editor answers or it is withdrawn.
  struct AskedPermission {
    protocol::PermissionRequest request;
  };

  // Editor side.
  void on_editor_line(std::string_view line);
  void on_editor_end();
  void on_request(const Json& id, const std::string& method, const Json& params);
  void on_notification(const std::string& method, const Json& params);
  void on_editor_response(const Json& message);
  void reply(const Json& id, Json result);
  void reply_error(const Json& id, Json error);
  void notify_update(const std::string& session_id, Json update);
  void send_to_editor(const Json& message);

  // The methods.
  void initialize(const Json& id, const Json& params);
  Json initialize_result(bool mcp, Json session_capabilities) const;
  void new_session(const Json& id, const Json& params);
  void load_session(const Json& id, const Json& params);
  void replay_page(std::shared_ptr<Replay> replay);
  void finish_replay(const std::shared_ptr<Replay>& replay);
  void list_sessions(const Json& id, const Json& params);
  void resume_session(const Json& id, const Json& params);
  void close_session(const Json& id, const Json& params);
  void prompt(const Json& id, const Json& params);
  void set_mode(const Json& id, const Json& params);
  void set_config_option(const Json& id, const Json& params);
  void fork_session(const Json& id, const Json& params);
  void cancel(const Json& params);
  // The modes and capabilities of the agent (agents.list, asked once), then `then` runs.
  void with_agent_modes(std::function<void()> then);
  Json mode_state(const protocol::SessionInfo& session) const;
  // What session/new, load and resume answer besides the id: modes and config options. Remembers the options as
  // sent to the editor.
  Json session_setup(const protocol::SessionInfo& session);
  void update_config_options(const protocol::SessionInfo& session);
  // The result of a call to the daemon, as the schema types it; nullopt once the editor's request `id` was
  // answered with the error instead (the daemon's, or its answer not being what the schema says).
  template <class Method>
  std::optional<typename Method::Result> result_or_reply(const Json& id, const Json& response, std::string_view what);
  OpenSession* open_session(const std::string& session_id);

  // Daemon side.
  void daemon_initialized(const Json& response);
  void on_event(const Json& envelope);
  void forward_live(const std::string& session_id, OpenSession& session, const Json& envelope);
  void turn_started(OpenSession& session, const protocol::TurnStartedEvent& started);
  void turn_stopped(OpenSession& session, protocol::TurnStoppedEvent stopped);
  void ask_permission(const protocol::PermissionRequest& request);
  void ask_open_permissions(const std::string& session_id);
  void withdraw_permission(const std::string& request_id);
  void answer_prompt(const PendingPrompt& prompt, const protocol::TurnStoppedEvent& stopped);
  void on_daemon_closed();
  void finish(int code);

  boost::asio::io_context& m_io;
  Options m_options;
  std::function<void(int)> m_done;
  std::function<void()> m_on_daemon_initialized;
  client::RpcConnection m_daemon;
  int m_in_fd;
  transport::LineFramer m_framer;
  std::shared_ptr<transport::FdReader> m_reader;
  std::shared_ptr<transport::FdWriter> m_writer;
  bool m_daemon_ready = false;
  std::vector<std::string> m_held_lines;  // editor lines that came before the daemon answered initialize

  std::map<std::string, OpenSession> m_sessions;  // by session id
  std::map<std::int64_t, AskedPermission> m_asked;  // by our JSON-RPC id to the editor
  // Requests resolved before the post that would ask the editor ran (bounded: cleared when large).
  std::set<std::string> m_resolved_requests;
  std::int64_t m_next_editor_id = 1;
  std::optional<std::vector<std::string>> m_agent_modes;  // the agent's modes (maybe none), once asked
  protocol::AgentCapabilities m_agent_capabilities{};  // once asked (all false when agents.list did not answer)
  std::vector<std::function<void()>> m_waiting_for_modes;
  bool m_editor_gone = false;
  bool m_finished = false;
};

}  // namespace switchboard::acp
