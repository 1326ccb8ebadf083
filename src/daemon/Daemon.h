#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "daemon/DataDirectory.h"
#include "daemon/EventLogMethods.h"
#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "http/HttpContext.h"
#include "http/HttpServer.h"
#include "http/SseHub.h"
#include "process/OrphanReaper.h"
#include "store/Store.h"
#include "switchboard/checkpoint/CheckpointStore.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/transport/LocalSocketServer.h"
#include "switchboard/transport/StdioTransport.h"

namespace switchboard::daemon {

struct HttpOptions {
  http::HttpServerOptions server;
  std::vector<std::string> allowed_hosts;  // extra names (Host and Origin, any port) besides the loopback ones
  std::vector<std::string> cors_origins;   // extra origins allowed to call the API from a browser
  http::SseLimits sse;
  std::size_t max_body_bytes = 8 * 1024 * 1024;
};

struct DaemonOptions {
  std::size_t max_line_bytes = 8 * 1024 * 1024;
  int stdin_fd = 0;
  int stdout_fd = 1;
  std::optional<std::filesystem::path> data_dir;  // default: DataDirectory::default_path()
  std::optional<HttpOptions> http;                // serve HTTP + SSE too
  // Keep nothing on disk: no database, no event log, no data-directory lock (unless HTTP needs the
  // directory for its runtime file). Sessions live as long as the process.
  bool ephemeral = false;
  store::StoreOptions store;
  // Headless policy, request timeout, default models (daemon/DaemonWiring.h fills it from the configuration).
  engine::EngineConfig engine;
  // How long a shutdown waits for the agents to stop on their own (finishing their turn and saving their
  // conversations) before announcing daemon.shutdown and killing whatever still runs. The adapters escalate
  // (EOF, SIGTERM, SIGKILL) well within it.
  std::chrono::milliseconds agent_stop_limit{15000};
  // SIGINT/SIGTERM start a graceful shutdown. Off when the process has its own use for them (`switchboard
  // run` cancels its turn first, then ends the daemon it hosts by closing the connection).
  bool handle_signals = true;
  // The agent the one client of this daemon is about to start a new session with (a hosted `switchboard run`):
  // it starts before the store opens, so that its start-up overlaps the daemon's (Engine::prestart).
  std::optional<engine::AgentPrestart> prestart;
  // The agents this daemon can host (adapters/ builds them; the daemon knows none by name).
  std::function<std::vector<adapters::AgentDescriptor>(boost::asio::io_context&)> agents;
};

// Exit codes of the binary.
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2, kExitAlreadyRunning = 3 };

// Owns everything of one daemon process and wires it together: the single io_context, the event bus (and its
// installation as the process-wide bus), the egress, the dispatcher with every method bound, the transports
// and the signal handling. Members are declared in dependency order, so destruction tears down transports
// before the egress and the bus.
class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();

  // Serves stdio (and HTTP if configured) until a graceful shutdown completes; returns the exit code.
  int run_stdio();
  // Serves HTTP only; prints the URL on stdout; returns the exit code.
  int run_serve();

  // Idempotent. Stops taking work, tells clients, flushes output; run() returns once nothing is left.
  void begin_shutdown(protocol::DaemonShutdownEventReason reason);

  boost::asio::io_context& io() { return m_io; }
  rpc::Dispatcher& dispatcher() { return m_dispatcher; }

 private:
  void on_signal(const boost::system::error_code& error, int signal);
  // Prepares and locks the data directory (once); returns an exit code on failure.
  std::optional<int> claim_data_dir();
  // Opens the database, restores the engine's sessions and rules, and makes the event log the egress's
  // durable sink (seqs continue from the highest stored). Returns an exit code on failure.
  std::optional<int> open_store();
  // Once daemon.shutdown is out: the log takes the last events (one final commit, queued) and leaves the egress.
  void close_event_log();
  // After the reactor stopped: the event log if still open, then the database (its final checkpoint).
  void close_store();
  // Claims the data directory and starts listening; returns an exit code on failure.
  std::optional<int> start_http();
  // Listens on the data directory's Unix-domain socket (attach): a daemon that claimed a data directory can be
  // found there. Returns the socket's path for the runtime file, or nothing (logged) when it cannot listen.
  std::optional<std::string> start_socket();
  // The runtime file: how clients find this daemon (`extra`: the HTTP address and token, when it serves HTTP).
  std::optional<std::string> write_runtime_file(nlohmann::json extra);
  // daemon.rotateToken: a new HTTP token, which ends every HTTP client's access with the old one.
  std::string rotate_token();
  // The agents have stopped (or the limit passed): daemon.shutdown goes out last, then output drains.
  void announce_shutdown(protocol::DaemonShutdownEventReason reason);
  // Runs `next` once the stdio client's calls in flight are answered (at once without one; bounded).
  void when_stdio_calls_answered(std::function<void()> next);
  void wait_for_clients_then_finish();
  void wait_for_sse_clients_then_finish();
  void finish_shutdown();

  DaemonOptions m_options;
  boost::asio::io_context m_io{1};  // one thread runs it: every handler is implicitly serialized
  bus::EventBus m_bus;
  bus::EventBus::Installation m_bus_installation{m_bus};
  bus::Egress m_egress{m_bus};
  rpc::Dispatcher m_dispatcher;
  // The store outlives the engine that writes through it (members are destroyed in reverse order).
  std::unique_ptr<store::Store> m_store;
  std::unique_ptr<StoredSessions> m_persistence;
  // The file checkpoints (<data>/checkpoints), with a data directory only; outlives the engine that uses it.
  std::unique_ptr<checkpoint::CheckpointStore> m_checkpoints;
  // Sessions' own git worktrees (<data>/worktrees), with a data directory only; outlives the engine that uses it.
  std::unique_ptr<worktree::WorktreeGit> m_worktrees;
  EventLogAccess m_event_log;
  bus::Subscription m_compaction;  // finished turns: their text deltas leave the log (the full messages stay)
  engine::Engine m_engine;
  boost::asio::signal_set m_signals{m_io};
  // Tools agents detach (setsid) come back to the daemon when their parent dies, so they end with their agent.
  process::OrphanReaper m_reaper{m_io};
  boost::asio::steady_timer m_shutdown_timer{m_io};
  boost::asio::steady_timer m_call_answer_timer{m_io};

  std::filesystem::path m_data_dir;
  bool m_data_dir_claimed = false;
  InstanceLock m_lock;
  RuntimeFile m_runtime_file;
  std::unique_ptr<http::SseHub> m_hub;
  std::unique_ptr<http::HttpContext> m_http_context;
  std::unique_ptr<http::HttpServer> m_http;
  std::string m_url;

  std::unique_ptr<transport::LocalSocketServer> m_socket;
  std::unique_ptr<transport::StdioTransport> m_stdio;
  bool m_shutting_down = false;
  int m_signals_seen = 0;
};

}  // namespace switchboard::daemon
