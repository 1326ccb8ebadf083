#include "daemon/Daemon.h"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "daemon/CoreMethods.h"
#include "daemon/InstanceProbe.h"
#include "daemon/Methods.h"
#include "process/ProcessGroupRegistry.h"
#include "switchboard/support/RandomId.h"
#include "switchboard/version.h"

namespace switchboard::daemon {
namespace {

// How long shutdown waits for SSE clients to receive the final events before closing them.
constexpr auto kClientFlushGrace = std::chrono::seconds(2);
// How long daemon.shutdown waits for the stdio client's calls in flight (a page read from the store, say) to be
// answered: a call that is still unanswered past it (a bug) gets no answer rather than holding the daemon up.
constexpr auto kCallAnswerLimit = std::chrono::seconds(5);

std::string identity_json() {
  return nlohmann::json{{"name", "switchboard"},
                        {"version", std::string(kVersion)},
                        {"protocolVersion", protocol::kProtocolVersion},
                        {"pid", ::getpid()}}
      .dump();
}

}  // namespace

Daemon::Daemon(DaemonOptions options)
    : m_options(std::move(options)),
      m_engine(m_io, m_bus, m_options.agents ? m_options.agents(m_io) : std::vector<adapters::AgentDescriptor>{},
               m_options.engine) {
  // A reader that goes away must surface as EPIPE on write, not kill the daemon.
  std::signal(SIGPIPE, SIG_IGN);
  bind_methods(m_dispatcher, m_engine, m_event_log,
               CoreMethodsConfig{m_options.max_line_bytes, [this]() -> std::optional<std::string> {
                                   if (!m_http_context) return std::nullopt;
                                   return rotate_token();
                                 },
                                 [this]() -> std::optional<protocol::DaemonHttpInfoResult> {
                                   if (!m_http_context) return std::nullopt;
                                   return protocol::DaemonHttpInfoResult{static_cast<std::int64_t>(m_http->port()), m_http_context->policy.allowed_names};
                                 }});
  m_engine.set_last_seq_source([this] { return m_egress.last_seq(); });
  if (m_options.handle_signals) {
    m_signals.add(SIGINT);
    m_signals.add(SIGTERM);
    m_signals.async_wait([this](const auto& error, int signal) { on_signal(error, signal); });
  }
}

Daemon::~Daemon() {
  // Sessions reference the hub and context: close them while both still exist.
  if (m_hub) m_hub->stop_all();
  m_http.reset();
  if (m_hub) m_egress.remove_sink(*m_hub);
}

void Daemon::on_signal(const boost::system::error_code& error, int signal) {
  if (error) return;  // cancelled at shutdown
  ++m_signals_seen;
  if (m_signals_seen > 1 || m_shutting_down) {
    // The second signal means "now": the user already asked once and we are still here.
    spdlog::warn("second signal {}, exiting at once", signal);
    process::ProcessGroupRegistry::the().kill_all_and_descendants();  // _exit skips every cleanup: no agent may outlive us
    m_reaper.kill_adopted();
    ::_exit(128 + signal);
  }
  spdlog::info("signal {} received, shutting down", signal);
  // Re-arm first: shutdown may complete (and cancel the signal set) before begin_shutdown returns, and a wait
  // armed after that would keep the io_context alive for ever.
  m_signals.async_wait([this](const auto& next_error, int next_signal) { on_signal(next_error, next_signal); });
  begin_shutdown(protocol::DaemonShutdownEventReason::Signal);
}

std::optional<int> Daemon::claim_data_dir() {
  if (m_data_dir_claimed) return std::nullopt;
  m_data_dir = m_options.data_dir.value_or(DataDirectory::default_path());
  if (auto error = DataDirectory::prepare(m_data_dir)) {
    spdlog::error("{}", *error);
    return kExitFailure;
  }
  std::string why;
  switch (m_lock.acquire(m_data_dir, why)) {
    case InstanceLock::Result::Acquired: break;
    case InstanceLock::Result::Error: spdlog::error("{}", why); return kExitFailure;
    case InstanceLock::Result::HeldByOther: {
      // Someone holds the lock: tell the user where it is, after checking that it answers as a switchboard.
      std::string where = "unknown address";
      std::FILE* file = std::fopen(RuntimeFile::path_in(m_data_dir).c_str(), "r");
      nlohmann::json runtime;
      if (file != nullptr) {
        std::string text;
        char buf[4096];
        std::size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) text.append(buf, n);
        std::fclose(file);
        runtime = nlohmann::json::parse(text, nullptr, false);
      }
      if (runtime.is_object() && runtime.contains("url") && runtime.contains("port") && runtime["port"].is_number_unsigned()) {
        where = runtime["url"].get<std::string>();
        const auto identity = fetch_identity("127.0.0.1", runtime["port"].get<unsigned short>(), std::chrono::seconds(2));
        if (identity && identity->value("name", "") == "switchboard") {
          std::fprintf(stderr, "switchboard: already running for %s at %s (pid %s)\n", m_data_dir.c_str(),
                       where.c_str(), identity->value("pid", nlohmann::json()).dump().c_str());
          return kExitAlreadyRunning;
        }
      }
      if (runtime.is_object() && !runtime.contains("url") && runtime.contains("pid")) {
        // A daemon hosted by another stdio client: `switchboard stdio` (without --standalone) attaches to it.
        std::fprintf(stderr,
                     "switchboard: already running for %s (pid %s, hosted by a stdio client); `switchboard stdio` "
                     "attaches to it, or use another --data-dir or --ephemeral for a second daemon\n",
                     m_data_dir.c_str(), runtime["pid"].dump().c_str());
        return kExitAlreadyRunning;
      }
      std::fprintf(stderr, "switchboard: another process holds the lock on %s but does not answer at %s\n",
                   m_data_dir.c_str(), where.c_str());
      return kExitAlreadyRunning;
    }
  }
  m_data_dir_claimed = true;
  return std::nullopt;
}

std::optional<int> Daemon::open_store() {
  if (m_options.ephemeral) return std::nullopt;
  if (auto failed = claim_data_dir()) return failed;
  const auto path = m_data_dir / store::Store::kFileName;
  auto opened = store::Store::open(m_io, path, m_options.store);
  if (!opened) {
    spdlog::error("cannot open the database: {}", opened.error());
    std::fprintf(stderr, "switchboard: cannot open %s: %s\n", path.c_str(), opened.error().message.c_str());
    return kExitFailure;
  }
  m_store = std::move(*opened);
  auto state = StoredSessions::load(m_io, *m_store);
  if (!state) {
    spdlog::error("cannot read the database: {}", state.error());
    std::fprintf(stderr, "switchboard: cannot read %s: %s\n", path.c_str(), state.error().message.c_str());
    return kExitFailure;
  }
  spdlog::info("store: {} sessions with outstanding prompts, {} rules; events through seq {}", state->sessions.size(),
               state->rules.size(), m_store->events().last_seq());
  m_persistence = std::make_unique<StoredSessions>(*m_store);
  m_engine.set_persistence(m_persistence.get());
  m_worktrees = std::make_unique<worktree::WorktreeGit>(m_data_dir / "worktrees");
  // A worktree a killed daemon was making (no stored session owns it) is removed before anything can use it; the
  // stored sessions' worktrees, and those a user kept, are not touched (docs/worktrees.md). Blocking, but nothing
  // is served yet, and there is one `git worktree prune` per leftover only.
  std::vector<std::filesystem::path> owned;
  for (const auto& worktree : state->worktrees) owned.emplace_back(worktree.path);
  for (const auto& leftover : m_worktrees->remove_leftovers(owned))
    spdlog::info("worktrees: removed {}, left half-made by a daemon that stopped while creating it", leftover.string());
  m_engine.restore(std::move(*state));
  checkpoint::CheckpointOptions checkpoints;
  checkpoints.root = m_data_dir / "checkpoints";
  checkpoints.excluded = {m_data_dir};
  m_checkpoints = std::make_unique<checkpoint::CheckpointStore>(m_io, std::move(checkpoints));
  m_engine.set_checkpoints(m_checkpoints.get());
  m_engine.set_worktrees(m_worktrees.get());
  // Seqs continue above every seq an earlier run may have handed out, so a client's Last-Event-ID from before
  // a restart (or a crash) still means the same event; the egress hands out only durably reserved seqs.
  m_egress.take_seqs_from(m_store->events());
  m_egress.add_sink(m_store->events());
  m_event_log.log = &m_store->events();
  // Deltas are most of a turn's events and useless once its message.completed exists: a finished turn's deltas
  // are deleted from the log (after they are committed), so the log holds far more conversation per byte.
  m_compaction = m_bus.subscribe(protocol::EventKind::TurnStopped, [this](const bus::BusEvent& event) {
    if (!m_store || event.session_id.empty()) return;
    const auto& stopped = std::get<protocol::TurnStoppedEvent>(event.payload);
    m_store->events().compact_turn(event.session_id, stopped.turn_id, [](store::StoreResult<std::size_t> removed) {
      if (!removed) spdlog::warn("store: compacting a finished turn failed: {}", removed.error());
    });
  });
  return std::nullopt;
}

void Daemon::close_event_log() {
  if (!m_store) return;
  m_compaction.reset();
  m_egress.remove_sink(m_store->events());
  m_store->events().close();
}

void Daemon::close_store() {
  if (!m_store) return;
  close_event_log();
  m_event_log.log = nullptr;
  m_engine.set_persistence(nullptr);
  m_store->close();
}

std::optional<int> Daemon::start_http() {
  const HttpOptions& options = *m_options.http;
  for (const auto& name : options.allowed_hosts) {
    if (auto problem = http::allowed_name_problem(name)) {
      spdlog::error("http.allowed_hosts: {}", *problem);
      return kExitFailure;
    }
  }
  if (auto failed = claim_data_dir()) return failed;

  m_hub = std::make_unique<http::SseHub>(options.sse);
  // Events before this process are in the log only; so are events the replay buffer has dropped.
  m_hub->set_floor(m_egress.last_seq());
  if (m_store) {
    m_hub->set_archive([log = &m_store->events()](std::uint64_t after, std::size_t limit, auto done) {
      log->replay_after(after, limit, [log, after, done = std::move(done)](store::StoreResult<store::EventLog::Events> events) {
        if (!events) {
          spdlog::error("store: replay failed: {}", events.error());
          return done(std::nullopt);
        }
        http::ArchivePage page;
        page.events = std::move(*events);
        for (const auto& range : log->lost_after(after)) page.lost.emplace_back(range.first, range.last);
        done(std::move(page));
      });
    });
  }
  m_http_context = std::make_unique<http::HttpContext>(m_dispatcher, *m_hub);
  m_http_context->identity_json = identity_json();
  m_http_context->max_body_bytes = options.max_body_bytes;
  m_http = std::make_unique<http::HttpServer>(m_io, *m_http_context);
  if (auto error = m_http->listen(options.server)) {
    spdlog::error("http: {}", *error);
    return kExitFailure;
  }
  const unsigned short port = m_http->port();
  auto& policy = m_http_context->policy;
  policy.token = random_id("", 32);  // 256 bits from getrandom
  policy.allowed_hosts = http::loopback_hosts(port);
  policy.allowed_names = options.allowed_hosts;
  if (options.server.allow_remote) policy.allowed_hosts.push_back(options.server.host + ":" + std::to_string(port));
  policy.own_origins = http::loopback_origins(port);
  policy.cors_origins = options.cors_origins;
  m_egress.add_sink(*m_hub);

  const std::string host = options.server.host.find(':') != std::string::npos ? "[" + options.server.host + "]" : options.server.host;
  m_url = "http://" + host + ":" + std::to_string(port) + "/";
  if (auto error = write_runtime_file({{"url", m_url}, {"port", port}, {"token", policy.token}})) {
    spdlog::error("{}", *error);
    return kExitFailure;
  }
  m_http->start();
  spdlog::info("http: listening on {} ({}); token in {}", m_url, fmt::join(m_http->bound_addresses(), ", "),
               RuntimeFile::path_in(m_data_dir).string());
  return std::nullopt;
}

int Daemon::run_stdio() {
  if (m_options.prestart) {
    // After the claim, so that a data directory another daemon holds starts nothing; before the store, whose
    // opening (milliseconds, a disk sync or more) the agent's start-up (a second or so) then hides.
    if (!m_options.ephemeral) {
      if (auto failed = claim_data_dir()) return *failed;
    }
    m_engine.prestart(*m_options.prestart);
  }
  // A daemon that cannot start ends the agent it started ahead now, while the reaper that kills what the agent
  // left behind still exists (it is destroyed before the engine).
  if (auto failed = open_store()) {
    m_engine.drop_prestarted();
    return *failed;
  }
  if (m_options.http) {
    if (auto failed = start_http()) {
      m_engine.drop_prestarted();
      return *failed;
    }
  } else if (m_data_dir_claimed) {
    // How other clients attach (and who holds the data directory, for a second daemon started on it by mistake).
    if (auto error = write_runtime_file(nlohmann::json::object())) spdlog::warn("{}", *error);
  }
  transport::StdioTransport::Options stdio_options;
  stdio_options.input_fd = m_options.stdin_fd;
  stdio_options.output_fd = m_options.stdout_fd;
  stdio_options.max_line_bytes = m_options.max_line_bytes;
  m_stdio = std::make_unique<transport::StdioTransport>(m_io, m_dispatcher, m_egress, stdio_options, [this] {
    spdlog::debug("stdin closed");
    if (const auto& client = m_stdio->peer()->client_id()) {
      m_bus.publish_global(protocol::ClientDetachedEvent{*client});
    }
    begin_shutdown(protocol::DaemonShutdownEventReason::StdinClosed);
  });
  m_stdio->start();
  spdlog::info("switchboard stdio ready (pid {})", ::getpid());
  m_io.run();
  m_stdio.reset();
  close_store();
  return kExitOk;
}

int Daemon::run_serve() {
  if (!m_options.http) m_options.http = HttpOptions{};
  if (auto failed = open_store()) return *failed;
  if (auto failed = start_http()) return *failed;
  // The one line a user needs: the fragment carries the token to the page without ever reaching a server log.
  std::printf("switchboard %s listening on %s\nopen %s#token=%s\n", std::string(kVersion).c_str(), m_url.c_str(),
              m_url.c_str(), m_http_context->policy.token.c_str());
  std::fflush(stdout);
  m_io.run();
  close_store();
  return kExitOk;
}

std::optional<std::string> Daemon::start_socket() {
  auto where = socket_path_for(m_data_dir);
  if (auto* why = std::get_if<std::string>(&where)) {
    spdlog::warn("socket: {}; clients cannot attach to this daemon", *why);
    return std::nullopt;
  }
  const auto& path = std::get<std::filesystem::path>(where);
  transport::LocalSocketServer::Options options;
  options.max_line_bytes = m_options.max_line_bytes;
  m_socket = std::make_unique<transport::LocalSocketServer>(
      m_io, m_dispatcher, m_egress, options, [this](const rpc::RpcPeer& peer) {
        if (const auto& client = peer.client_id()) m_bus.publish_global(protocol::ClientDetachedEvent{*client});
      });
  if (auto error = m_socket->listen(path)) {
    spdlog::warn("socket: {}; clients cannot attach to this daemon", *error);
    m_socket.reset();
    return std::nullopt;
  }
  m_socket->start();
  spdlog::info("socket: clients attach at {}", path.string());
  return path.string();
}

std::string Daemon::rotate_token() {
  auto& policy = m_http_context->policy;
  policy.token = random_id("", 32);
  // Every request checks the token it carries, so the old one stops working with the next request; an event
  // stream was checked once, when it opened, so each is closed now (the caller's too: it reopens with the new
  // token and Last-Event-ID, losing nothing).
  m_hub->close_all("the token was rotated");
  // Local clients that reach the daemon over HTTP read the token from here.
  if (auto error = write_runtime_file({{"url", m_url}, {"port", m_http->port()}, {"token", policy.token}})) {
    spdlog::warn("{}", *error);
  }
  spdlog::info("http: the token was rotated; every HTTP client holding the old one is refused");
  return policy.token;
}

std::optional<std::string> Daemon::write_runtime_file(nlohmann::json extra) {
  nlohmann::json runtime{{"pid", ::getpid()},
                         {"protocolVersion", protocol::kProtocolVersion},
                         {"version", std::string(kVersion)}};
  if (!m_socket) {
    if (auto path = start_socket()) runtime["socket"] = *path;
  } else {
    runtime["socket"] = m_socket->path().string();
  }
  runtime.update(extra);
  return m_runtime_file.write(m_data_dir, runtime.dump(2) + "\n");
}

void Daemon::begin_shutdown(protocol::DaemonShutdownEventReason reason) {
  if (m_shutting_down) return;
  m_shutting_down = true;
  m_dispatcher.set_draining(true);
  if (m_http) m_http->stop();
  if (m_socket) m_socket->stop_accepting();
  if (m_stdio) m_stdio->stop_input();
  // Decision: sessions stopping because of the shutdown report it (session.state stopped, after the turn.stopped
  // of a turn it cut off) *before* daemon.shutdown, which stays the last event on every transport. So the agents
  // are stopped first and given the time they need to finish and save their conversations (bounded, never
  // blocking the reactor); whatever has not stopped by the limit is killed silently after daemon.shutdown.
  m_engine.shut_down(m_options.agent_stop_limit,
                     [this, reason] { when_stdio_calls_answered([this, reason] { announce_shutdown(reason); }); });
}

void Daemon::when_stdio_calls_answered(std::function<void()> next) {
  if (!m_stdio) return next();
  // The stdio client keeps reading after its input closed: what it asked before (some calls answer later, from
  // the store or a turn the shutdown ends) reaches it ahead of daemon.shutdown, which stays the last line.
  auto once = std::make_shared<std::function<void()>>(std::move(next));
  auto go = [once] {
    if (auto next_step = std::exchange(*once, nullptr)) next_step();
  };
  m_call_answer_timer.expires_after(kCallAnswerLimit);
  m_call_answer_timer.async_wait([this, go](const boost::system::error_code& error) {
    if (error) return;
    spdlog::warn("shutdown: {} stdio call(s) still unanswered after {} s; the client gets no answer to them",
                 m_stdio->peer()->calls_in_flight(), std::chrono::seconds(kCallAnswerLimit).count());
    go();
  });
  m_stdio->peer()->when_calls_answered([this, go] {
    m_call_answer_timer.cancel();
    go();
  });
}

void Daemon::announce_shutdown(protocol::DaemonShutdownEventReason reason) {
  m_bus.publish_global(protocol::DaemonShutdownEvent{reason});
  // The last wire event (the engine is sealed; client.detached, which may follow, is internal), and every call
  // is refused now. So the event log closes at once: one final commit takes what it holds, the compactions and
  // the release of unused seqs, while the clients are being closed, instead of a batch after its batching delay
  // and another when the store closes.
  close_event_log();
  m_runtime_file.remove();
  if (m_stdio) {
    m_stdio->when_output_drained([this] { wait_for_clients_then_finish(); });
  } else {
    wait_for_clients_then_finish();
  }
}

void Daemon::wait_for_clients_then_finish() {
  // Attached clients get daemon.shutdown like every other: their output is flushed (bounded), then closed.
  if (m_socket && m_socket->connection_count() > 0) {
    return m_socket->close_all(kClientFlushGrace, [this] {
      m_socket->stop_accepting();
      wait_for_sse_clients_then_finish();
    });
  }
  wait_for_sse_clients_then_finish();
}

void Daemon::wait_for_sse_clients_then_finish() {
  if (!m_hub || m_hub->client_count() == 0) return finish_shutdown();
  // Give SSE clients a moment to receive the final events, then close them regardless.
  m_hub->finish_all();
  m_shutdown_timer.expires_after(kClientFlushGrace);
  m_shutdown_timer.async_wait([this](const boost::system::error_code&) { finish_shutdown(); });
  m_hub->on_empty([this] { m_shutdown_timer.cancel(); });
}

void Daemon::finish_shutdown() {
  // Nothing is left to write: release the last sources of work so io_context::run() returns.
  // The signal handler stayed armed while we drained, so a second Ctrl-C still worked; now it can go.
  boost::system::error_code ignored;
  m_signals.cancel(ignored);
  // Agents were asked to stop when shutdown began (idle ones have exited on EOF by now); whatever still runs,
  // with every tool it started, is killed: nothing the daemon started outlives it. The store already holds the
  // prompts they owed, so those sessions come back interrupted.
  // The checkpoint store first: it starts no git from now on, so none begins after the kill below.
  if (m_checkpoints) m_checkpoints->stop();
  process::ProcessGroupRegistry::the().kill_all_and_descendants();
  m_reaper.kill_adopted();
  m_reaper.stop();
  if (m_hub) m_hub->stop_all();
  m_stdio.reset();
  m_socket.reset();
}

}  // namespace switchboard::daemon
