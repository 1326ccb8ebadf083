#include "engine/Engine.h"

#include <sys/stat.h>

#include <algorithm>
#include <exception>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "engine/HistoryTranscript.h"
#include "engine/McpServerCheck.h"
#include "switchboard/adapters/AgentRuntime.h"
#include "switchboard/support/Bug.h"
#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::engine {
namespace {

using protocol::ErrorCode;

EngineError unknown_session(const std::string& id) {
  return EngineError{ErrorCode::UnknownSession, "no session " + id.substr(0, 100)};
}

EngineError unknown_agent(const std::string& name) {
  return EngineError{ErrorCode::UnknownAgent, "no agent named " + name.substr(0, 100)};
}

EngineError no_history(const std::string& agent) {
  return EngineError{ErrorCode::Unsupported, agent + " keeps no history the daemon can read"};
}

EngineError from_adapter(const adapters::AdapterError& error) { return EngineError{error.code, error.message}; }

// Agents file their history by absolute working directory; a relative one names nothing.
std::optional<EngineError> check_history_cwd(const std::string& cwd) {
  if (cwd.starts_with('/')) return std::nullopt;
  return EngineError{ErrorCode::BadWorkingDirectory, "not an absolute path: " + cwd.substr(0, 500)};
}

std::optional<EngineError> check_directory(const std::string& cwd) {
  struct stat st {};
  if (::stat(cwd.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return std::nullopt;
  return EngineError{ErrorCode::BadWorkingDirectory, "not a directory: " + cwd.substr(0, 500)};
}

protocol::HistorySession to_wire(const adapters::HistoryEntry& entry) {
  protocol::HistorySession session;
  session.provider_session_id = entry.provider_session_id;
  session.title = entry.title;
  session.cwd = entry.cwd;
  session.created_at = entry.created_at;
  session.updated_at = entry.updated_at;
  session.prompt_count = entry.prompts;
  session.path = entry.path;
  return session;
}

EngineError bad_param(const std::string& method, const std::string& pointer, const std::string& why) {
  return EngineError{ErrorCode::InvalidParams, "invalid params for " + method + ": " + pointer + ": " + why, pointer};
}

// What session info shows of a session's MCP servers before its agent reported on them: never env or headers.
std::optional<std::vector<protocol::McpServerState>> pending_mcp_states(const std::vector<protocol::McpServer>& servers) {
  if (servers.empty()) return std::nullopt;
  std::vector<protocol::McpServerState> states;
  for (const auto& server : servers) {
    protocol::McpServerState state;
    state.name = server.name;
    state.transport = server.transport;
    state.status = protocol::McpServerStatusKind::Pending;
    states.push_back(std::move(state));
  }
  return states;
}

// What a session read from the store shows until its agent runs again: no agent process survives a daemon
// restart, and its MCP servers are pending until the agent reports on them.
void as_cold(StoredSession& stored) {
  stored.info.live = false;
  stored.info.state = protocol::SessionState::Idle;
  stored.info.mcp_servers = pending_mcp_states(stored.settings.mcp_servers);
}

EngineError shutting_down() { return EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"}; }

}  // namespace

Engine::Engine(boost::asio::io_context& io, bus::EventBus& bus, std::vector<adapters::AgentDescriptor> agents,
               EngineConfig config, SessionPersistence* persistence)
    : m_io(io),
      m_bus(bus),
      m_agents(std::move(agents)),
      m_config(std::move(config)),
      m_persistence(persistence),
      m_broker(io, *this, m_rules, RequestBroker::Policy{m_config.request_timeout, m_config.headless_policy}) {
  // Who can answer prompts: clients that said so at initialize, and SSE watchers (a browser console).
  m_attached = m_bus.subscribe(protocol::EventKind::ClientAttached, [this](const bus::BusEvent& event) {
    const auto& attached = std::get<protocol::ClientAttachedEvent>(event.payload);
    if (attached.answers_permissions && m_answering_client_ids.insert(attached.client_id).second) ++m_answering_clients;
  });
  m_detached = m_bus.subscribe(protocol::EventKind::ClientDetached, [this](const bus::BusEvent& event) {
    const auto& detached = std::get<protocol::ClientDetachedEvent>(event.payload);
    if (m_answering_client_ids.erase(detached.client_id) > 0) --m_answering_clients;
  });
  if (!m_config.defer_discovery) begin_discovery();
}

void Engine::begin_discovery() {
  for (const auto& descriptor : m_agents) {
    if (descriptor.runtime) descriptor.runtime->begin_discovery();
  }
}

Engine::~Engine() {
  // Reads still queued finish first (their callbacks are posted to the io_context and answer there): a reply
  // must never be dropped with an unstarted job.
  if (m_helper) m_helper->join();
}

template <class T>
void Engine::off_reactor(std::string what, std::function<Outcome<T>()> work, Then<T> done) {
  if (!m_helper) m_helper = std::make_unique<boost::asio::thread_pool>(1);
  boost::asio::post(*m_helper, [&io = m_io, guard = boost::asio::make_work_guard(m_io), what = std::move(what),
                                work = std::move(work), done = std::move(done)]() mutable {
    std::optional<Outcome<T>> outcome;
    try {
      outcome.emplace(work());
    } catch (const std::exception& error) {
      // The edge of foreign code (file systems, parsers, git): one failure must not end the daemon's helper
      // thread. The client learns what failed; the exception's text, an internal, goes to the log only.
      spdlog::error("engine: {} failed: {}", what, error.what());
      outcome.emplace(EngineError{ErrorCode::InternalError, what + " failed"});
    }
    boost::asio::post(io, [guard = std::move(guard), outcome = std::move(*outcome), done = std::move(done)]() mutable {
      done(std::move(outcome));
    });
  });
}

// The worktree operations (EngineWorktrees.cpp) run on the same helper thread.
template void Engine::off_reactor<worktree::Created>(std::string, std::function<Outcome<worktree::Created>()>,
                                                    Then<worktree::Created>);
template void Engine::off_reactor<protocol::SessionDiffResult>(std::string,
                                                               std::function<Outcome<protocol::SessionDiffResult>()>,
                                                               Then<protocol::SessionDiffResult>);
template void Engine::off_reactor<protocol::SessionMergeResult>(std::string,
                                                                std::function<Outcome<protocol::SessionMergeResult>()>,
                                                                Then<protocol::SessionMergeResult>);
template void Engine::off_reactor<bool>(std::string, std::function<Outcome<bool>()>, Then<bool>);

void Engine::restore(PersistedState state) {
  for (auto& stored : state.sessions) {
    as_cold(stored);
    const auto work = state.outstanding.find(stored.info.session_id);
    std::optional<OutstandingWork> owed;
    if (work != state.outstanding.end() && !work->second.empty()) owed = work->second;
    add_session(std::move(stored)).restore(owed);
  }
  for (auto& rule : state.rules) m_rules.restore(std::move(rule));
}

void Engine::shut_down(std::chrono::milliseconds limit, std::function<void()> done) {
  // Sessions first, then the agents' runtimes (a shared server outlives the sessions it hosts), all within one
  // deadline. One count per session (then per runtime) plus one for the phase itself, so neither phase can end
  // before everything in it was asked.
  struct Wait {
    std::size_t remaining = 1;
    bool runtimes = false;  // the second phase
    std::function<void()> done;
    boost::asio::steady_timer deadline;
    Wait(boost::asio::io_context& io, std::function<void()> then) : done(std::move(then)), deadline(io) {}
  };
  m_draining = true;
  m_prestarted.reset();  // started for a session that never came: it has done nothing worth keeping
  auto wait = std::make_shared<Wait>(m_io, std::move(done));
  auto finish = [this, weak = std::weak_ptr<Engine*>(m_self)](Wait& w) {
    if (!w.done || weak.expired()) return;
    w.deadline.cancel();
    m_sealed = true;
    // Posted: a session's on_stopped may be the caller, and it finishes before the daemon moves on.
    boost::asio::post(m_io, std::exchange(w.done, nullptr));
  };
  auto one_stopped = std::make_shared<std::function<void()>>();
  *one_stopped = [this, wait, finish, weak = std::weak_ptr<std::function<void()>>(one_stopped),
                  alive = std::weak_ptr<Engine*>(m_self)] {
    if (--wait->remaining > 0 || !wait->done || alive.expired()) return;
    if (wait->runtimes) return finish(*wait);
    wait->runtimes = true;
    wait->remaining = 1;
    auto next = weak.lock();
    for (const auto& descriptor : m_agents) {
      if (!descriptor.runtime || !next) continue;
      ++wait->remaining;
      descriptor.runtime->stop([next] { (*next)(); });
    }
    if (next) (*next)();
  };
  wait->deadline.expires_after(limit);
  wait->deadline.async_wait([wait, finish](const boost::system::error_code& error) {
    if (error || !wait->done) return;
    spdlog::warn("shutdown: {} {} did not stop in time; they are killed", wait->remaining,
                 wait->runtimes ? "agent runtime(s)" : "agent(s)");
    finish(*wait);
  });
  for (auto& [id, session] : m_sessions) {
    ++wait->remaining;
    session->stop_for_shutdown([one_stopped] { (*one_stopped)(); });
  }
  (*one_stopped)();
}

Session& Engine::add_session(StoredSession stored) {
  // Looked up before a Session is made: a second one, even thrown away at once, would cancel the live one's open
  // requests and announce it stopped as it is destroyed.
  if (auto* existing = loaded(stored.info.session_id)) {
    report_bug("a second Session for " + stored.info.session_id, __FILE__, __LINE__);
    return *existing;
  }
  std::string id = stored.info.session_id;
  const std::int64_t created_at = stored.info.created_at;
  auto [it, inserted] = m_sessions.emplace(
      std::move(id), std::make_unique<Session>(static_cast<SessionServices&>(*this), std::move(stored.info), std::move(stored.settings)));
  m_list_order.insert({created_at, it->first}, &it->second->info());
  return *it->second;
}

void Engine::publish(const std::string& session_id, protocol::EventPayload event) {
  // The engine's one door to the bus, its sessions' and its own events alike (session_id "" for a global one):
  // after daemon.shutdown nothing more reaches clients, whichever call or late store answer it comes from;
  // daemon.shutdown is their last event.
  if (m_sealed) return;
  m_bus.publish(bus::BusEvent{session_id, std::move(event)});
}

std::optional<std::string> Engine::default_model(const std::string& agent) const {
  const auto it = m_config.default_models.find(agent);
  return it == m_config.default_models.end() ? std::nullopt : std::optional<std::string>(it->second);
}

const adapters::AgentDescriptor* Engine::agent(const std::string& name) const {
  for (const auto& descriptor : m_agents) {
    if (descriptor.name == name) return &descriptor;
  }
  return nullptr;
}

Session* Engine::loaded(const std::string& session_id) {
  const auto it = m_sessions.find(session_id);
  return it == m_sessions.end() ? nullptr : it->second.get();
}

void Engine::with_session(const std::string& session_id, Then<Session*> then) {
  if (auto* session = loaded(session_id)) return then(session);
  if (!m_persistence) return then(unknown_session(session_id));
  if (m_draining) return then(shutting_down());
  auto [loading, first] = m_loading.try_emplace(session_id, std::make_shared<std::vector<Then<Session*>>>());
  loading->second->push_back(std::move(then));
  if (!first) return;  // the read under way answers this call too
  m_persistence->load_session(session_id, [weak = std::weak_ptr<Engine*>(m_self), session_id, waiting = loading->second](
                                               Outcome<std::optional<StoredSession>> read) {
    auto alive = weak.lock();
    if (!alive) {
      for (const auto& waiter : *waiting) waiter(shutting_down());
      return;
    }
    Engine& owner = **alive;
    owner.m_loading.erase(session_id);
    std::optional<EngineError> failure;
    if (owner.m_draining) {
      failure = shutting_down();  // the shutdown began during the read: its stop never reached this session
    } else if (const auto* error = std::get_if<EngineError>(&read)) {
      failure = *error;
    } else if (auto& stored = std::get<std::optional<StoredSession>>(read); !stored) {
      failure = unknown_session(session_id);
    } else if (owner.loaded(session_id) == nullptr) {
      as_cold(*stored);
      owner.add_session(std::move(*stored)).restore(std::nullopt);  // its first start resumes its agent's session
    }
    // Each in turn, as if the calls had come one after the other with the session in memory (one may delete it).
    for (const auto& waiter : *waiting) {
      if (failure) {
        waiter(*failure);
      } else if (auto* session = owner.loaded(session_id)) {
        waiter(session);
      } else {
        waiter(unknown_session(session_id));
      }
    }
  });
}

void Engine::prestart(const AgentPrestart& prestart) {
  const auto* descriptor = agent(prestart.agent);
  if (descriptor == nullptr || m_sealed) return;  // the session's own start will say what is wrong
  adapters::StartOptions options;
  options.session_id = "prestarted";
  options.cwd = prestart.cwd;
  options.model = prestart.model;
  options.mode = prestart.mode;
  options.stream_text = m_config.stream_text;
  m_prestarted = std::make_unique<PrestartedAgent>(*descriptor, prestart.agent, std::move(options));
}

void Engine::drop_prestarted() { m_prestarted.reset(); }

std::unique_ptr<adapters::AgentAdapter> Engine::take_prestarted(const std::string& agent, const adapters::StartOptions& options,
                                                                adapters::AdapterListener& listener) {
  if (!m_prestarted) return nullptr;
  auto prestarted = std::move(m_prestarted);
  if (!prestarted->fits(agent, options)) {
    spdlog::debug("engine: the agent started ahead does not fit session {}; it is stopped", options.session_id);
    return nullptr;
  }
  prestarted->adopt(listener);
  return prestarted;
}

void Engine::models_reported(const std::string& agent, const std::vector<protocol::ModelInfo>& models) {
  auto& known = m_agent_models[agent];
  std::vector<protocol::ModelInfo> offer = models;
  // A session that runs a model of its own (a loaded one, one that chose) cannot say which is the agent's
  // default: the default an earlier offer named stands, if the new list still has it.
  const bool names_default = std::any_of(offer.begin(), offer.end(), [](const auto& model) { return model.is_default == true; });
  if (!names_default) {
    for (const auto& earlier : known) {
      if (earlier.is_default != true) continue;
      for (auto& model : offer) {
        if (model.id == earlier.id) model.is_default = true;
      }
    }
  }
  known = std::move(offer);
}

std::vector<protocol::AgentInfo> Engine::list_agents() {
  begin_discovery();  // deferred until now, or already begun (then nothing happens)
  std::vector<protocol::AgentInfo> agents;
  for (const auto& descriptor : m_agents) {
    agents.push_back(descriptor.discover());
    if (const auto it = m_agent_models.find(descriptor.name); it != m_agent_models.end()) agents.back().models = it->second;
  }
  return agents;
}

void Engine::create_session(const protocol::SessionCreateParams& params, Then<protocol::SessionInfo> done) {
  const auto* descriptor = agent(params.agent);
  if (descriptor == nullptr) return done(unknown_agent(params.agent));
  const std::vector<protocol::McpServer> mcp_servers = params.mcp_servers.value_or(std::vector<protocol::McpServer>{});
  if (auto problem = mcp_servers_problem(mcp_servers)) return done(bad_param("session.create", "/mcpServers" + problem->pointer, problem->why));
  const auto info = descriptor->discover();
  if (!mcp_servers.empty() && !info.capabilities.mcp) {
    // Refused rather than dropped: a session without the servers its user asked for would fail in subtler ways.
    return done(EngineError{ErrorCode::Unsupported, params.agent + " takes no MCP servers (its capabilities say mcp: false)"});
  }
  if (!info.installed) {
    return done(EngineError{ErrorCode::AgentUnavailable,
                            params.agent + " is not available: " + info.problem.value_or("not installed")});
  }
  if (auto error = check_directory(params.cwd)) return done(*error);
  protocol::SessionInfo session;
  session.session_id = random_id("s-", 8);
  session.agent = params.agent;
  session.cwd = params.cwd;
  session.title = params.title;
  session.model = params.model;
  session.mode = params.mode;
  if (const auto it = m_agent_models.find(params.agent); it != m_agent_models.end()) session.models = it->second;
  session.state = protocol::SessionState::Idle;
  session.created_at = session.updated_at = unix_millis_now();
  session.mcp_servers = pending_mcp_states(mcp_servers);
  if (params.worktree) return create_in_worktree(params, std::move(session), SessionSettings{mcp_servers, {}}, std::move(done));
  insert_new_session(StoredSession{std::move(session), SessionSettings{mcp_servers, {}}}, std::nullopt, std::move(done));
}

void Engine::insert_new_session(StoredSession stored, std::optional<ConversationBinding> binding, Then<protocol::SessionInfo> done) {
  auto add = [weak = std::weak_ptr<Engine*>(m_self), stored, binding, done](std::optional<EngineError> error) mutable {
    if (error) return done(*error);  // stored nowhere, so it does not exist
    auto alive = weak.lock();
    if (!alive) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    Engine& owner = **alive;
    const protocol::SessionInfo info = stored.info;
    Session& added = owner.add_session(std::move(stored));
    if (binding) added.bind_provider_session(std::move(*binding));
    owner.publish(info.session_id, protocol::SessionCreatedEvent{info});
    done(added.info());
  };
  // A session exists once it is stored (with its run, so it resumes or forks after a restart too): a crash right
  // after the reply must not lose it.
  if (m_persistence) return m_persistence->insert_session(stored, binding, std::move(add));
  add(std::nullopt);
}

void Engine::list_history(const protocol::HistoryListParams& params, Then<protocol::HistoryListResult> done) {
  const auto* descriptor = agent(params.agent);
  if (descriptor == nullptr) return done(unknown_agent(params.agent));
  if (!descriptor->list_history) return done(no_history(params.agent));
  if (auto error = check_history_cwd(params.cwd)) return done(*error);
  off_reactor<protocol::HistoryListResult>(
      "listing the agent's history",
      [hook = descriptor->list_history, cwd = params.cwd]() -> Outcome<protocol::HistoryListResult> {
        auto listed = hook(cwd);
        if (const auto* error = std::get_if<adapters::AdapterError>(&listed)) return from_adapter(*error);
        auto& list = std::get<adapters::HistoryList>(listed);
        protocol::HistoryListResult result;
        result.sessions.reserve(list.sessions.size());
        for (const auto& entry : list.sessions) result.sessions.push_back(to_wire(entry));
        result.skipped_files = static_cast<std::int64_t>(list.skipped_files);
        result.skipped_lines = static_cast<std::int64_t>(list.skipped_lines);
        return result;
      },
      std::move(done));
}

void Engine::read_history(const protocol::HistoryReadParams& params, Then<protocol::HistoryReadResult> done) {
  const auto* descriptor = agent(params.agent);
  if (descriptor == nullptr) return done(unknown_agent(params.agent));
  if (!descriptor->read_history) return done(no_history(params.agent));
  if (auto error = check_history_cwd(params.cwd)) return done(*error);
  off_reactor<protocol::HistoryReadResult>(
      "reading the agent's history",
      [hook = descriptor->read_history, cwd = params.cwd, id = params.provider_session_id]() -> Outcome<protocol::HistoryReadResult> {
        HistoryTranscript transcript;
        const auto read = hook(cwd, id, transcript);
        if (const auto* error = std::get_if<adapters::AdapterError>(&read)) return from_adapter(*error);
        protocol::HistoryReadResult result;
        result.provider_session_id = id;
        result.events = transcript.take();
        result.skipped_lines = static_cast<std::int64_t>(std::get<adapters::HistoryReadStats>(read).skipped_lines);
        return result;
      },
      std::move(done));
}

void Engine::import_session(const protocol::SessionImportParams& params, Then<protocol::SessionInfo> done) {
  const auto* descriptor = agent(params.agent);
  if (descriptor == nullptr) return done(unknown_agent(params.agent));
  if (!descriptor->list_history) return done(no_history(params.agent));
  if (!descriptor->discover().capabilities.resume) {
    return done(EngineError{ErrorCode::Unsupported, params.agent + " cannot resume its own sessions"});
  }
  if (auto error = check_directory(params.cwd)) return done(*error);
  // The agent's listing says whether the session exists, and what it is called.
  auto found = [hook = descriptor->list_history, cwd = params.cwd, id = params.provider_session_id]() -> Outcome<adapters::HistoryEntry> {
    auto listed = hook(cwd);
    if (const auto* error = std::get_if<adapters::AdapterError>(&listed)) return from_adapter(*error);
    for (auto& entry : std::get<adapters::HistoryList>(listed).sessions) {
      if (entry.provider_session_id == id) return std::move(entry);
    }
    return EngineError{ErrorCode::UnknownHistorySession, "the history of " + cwd.substr(0, 500) + " has no session " + id};
  };
  auto found_then_bind = [weak = std::weak_ptr<Engine*>(m_self), params, done](Outcome<adapters::HistoryEntry> entry) mutable {
    if (const auto* error = std::get_if<EngineError>(&entry)) return done(*error);
    auto self = weak.lock();
    if (!self) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    (*self)->bind_imported(params, std::get<adapters::HistoryEntry>(std::move(entry)), std::move(done));
  };
  off_reactor<adapters::HistoryEntry>("looking the session up in the agent's history", std::move(found),
                                      std::move(found_then_bind));
}

void Engine::bind_imported(const protocol::SessionImportParams& params, adapters::HistoryEntry history,
                           Then<protocol::SessionInfo> done) {
  // Two sessions of ours never drive one agent conversation: they would mix their turns in it, and an agent that
  // serves many sessions at once would route one session's replies to the other. When another session continues
  // it (live, or stored and cold), or another import of it is under way, the new session continues a fork of it.
  const std::string provider_session_id = history.provider_session_id;
  const std::string key = params.agent + '\n' + provider_session_id;
  std::optional<std::string> holder;
  if (m_imports_in_flight.count(key) != 0) holder = "a session this daemon is importing";
  for (const auto& [id, session] : m_sessions) {
    if (!holder && session->info().agent == params.agent && session->continues(provider_session_id)) {
      holder = "this daemon's session " + id;
    }
  }
  m_imports_in_flight.insert(key);
  auto weak = std::weak_ptr<Engine*>(m_self);
  auto finish = [weak, key, done = std::move(done)](Outcome<protocol::SessionInfo> outcome) {
    if (auto self = weak.lock()) (*self)->m_imports_in_flight.erase((*self)->m_imports_in_flight.find(key));
    done(std::move(outcome));
  };
  auto import = [weak, params, history = std::move(history), finish = std::move(finish)](
                    Outcome<std::optional<std::string>> continued_by) mutable {
    if (const auto* error = std::get_if<EngineError>(&continued_by)) return finish(*error);
    auto self = weak.lock();
    if (!self) return finish(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    (*self)->create_imported(params, history, std::get<std::optional<std::string>>(continued_by), std::move(finish));
  };
  if (holder || !m_persistence) return import(std::move(holder));
  m_persistence->session_continuing(params.agent, provider_session_id,
                                    [import = std::move(import)](Outcome<std::optional<std::string>> stored) mutable {
                                      if (auto* id = std::get_if<std::optional<std::string>>(&stored); id && *id) {
                                        **id = "this daemon's session " + **id;
                                      }
                                      import(std::move(stored));
                                    });
}

void Engine::create_imported(const protocol::SessionImportParams& params, const adapters::HistoryEntry& history,
                             const std::optional<std::string>& holder, Then<protocol::SessionInfo> done) {
  const auto* descriptor = agent(params.agent);
  const ConversationBinding binding{history.provider_session_id, holder.has_value()};
  if (binding.fork && (descriptor == nullptr || !descriptor->discover().capabilities.fork)) {
    return done(EngineError{ErrorCode::ConversationInUse, *holder + " continues " + params.agent + "'s conversation " +
                                                              binding.provider_session_id + ", and " + params.agent +
                                                              " cannot fork it (two sessions never drive one conversation)"});
  }
  if (binding.fork) {
    spdlog::info("engine: {} continues {}'s conversation {}; the imported session continues a fork of it", *holder,
                 params.agent, binding.provider_session_id);
  }
  protocol::SessionInfo session;
  session.session_id = random_id("s-", 8);
  session.agent = params.agent;
  session.cwd = params.cwd;
  session.title = params.title ? params.title : !history.title.empty() ? std::optional<std::string>(history.title) : std::nullopt;
  session.model = params.model;
  session.mode = params.mode;
  session.state = protocol::SessionState::Idle;
  session.created_at = session.updated_at = unix_millis_now();
  insert_new_session(StoredSession{std::move(session), {}}, binding, std::move(done));
}

void Engine::get_session(const std::string& session_id, Then<protocol::SessionInfo> done) {
  if (const auto* session = loaded(session_id)) return done(session->info());
  if (!m_persistence) return done(unknown_session(session_id));
  m_persistence->load_session(session_id, [session_id, done = std::move(done)](Outcome<std::optional<StoredSession>> read) {
    if (const auto* error = std::get_if<EngineError>(&read)) return done(*error);
    auto& stored = std::get<std::optional<StoredSession>>(read);
    if (!stored) return done(unknown_session(session_id));
    as_cold(*stored);
    done(std::move(stored->info));
  });
}

namespace {

bool ascii_case_insensitive_contains(std::string_view text, std::string_view needle) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return std::search(text.begin(), text.end(), needle.begin(), needle.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

bool matches_list_filters(const protocol::SessionListParams& params, const protocol::SessionInfo& info) {
  if (info.archived != params.archived.value_or(false)) return false;
  if (params.agent && info.agent != *params.agent) return false;
  if (params.cwd && info.cwd != *params.cwd) return false;
  if (params.text && !ascii_case_insensitive_contains(info.title.value_or(""), *params.text) &&
      !ascii_case_insensitive_contains(info.cwd, *params.text)) {
    return false;
  }
  return true;
}

}  // namespace

void Engine::list_sessions(const protocol::SessionListParams& params, Then<protocol::SessionListResult> done) {
  // Where the page starts: after the cursor's position. A bare session id (the cursors of earlier versions)
  // still works while that session exists; an unknown one ends the list, as it always did.
  std::optional<SessionListIndex::Position> after;
  if (params.cursor) after = SessionListIndex::parse_cursor(*params.cursor);
  if (params.cursor && !after) {
    if (const auto* session = loaded(*params.cursor)) {
      after = SessionListIndex::Position{session->info().created_at, *params.cursor};
    } else if (m_persistence) {
      return m_persistence->load_session(*params.cursor, [weak = std::weak_ptr<Engine*>(m_self), params, done = std::move(done)](
                                                             Outcome<std::optional<StoredSession>> read) {
        auto alive = weak.lock();
        if (!alive) return done(shutting_down());
        if (const auto* error = std::get_if<EngineError>(&read)) return done(*error);
        const auto& stored = std::get<std::optional<StoredSession>>(read);
        if (!stored) return done(protocol::SessionListResult{});
        (*alive)->list_stored(params, SessionListIndex::Position{stored->info.created_at, *params.cursor}, done);
      });
    } else {
      return done(protocol::SessionListResult{});
    }
  }
  if (!m_persistence) return done(list_in_memory(params, after));
  list_stored(params, std::move(after), std::move(done));
}

protocol::SessionListResult Engine::list_in_memory(const protocol::SessionListParams& params,
                                                   const std::optional<SessionListIndex::Position>& after) const {
  const auto limit = static_cast<std::size_t>(params.limit.value_or(50));
  protocol::SessionListResult result;
  std::optional<SessionListIndex::Position> last;
  m_list_order.visit_after(after, [&](const SessionListIndex::Position& position, const protocol::SessionInfo& info) {
    if (!matches_list_filters(params, info)) return true;
    if (result.sessions.size() == limit) {  // one more matches: there is a next page
      result.next_cursor = SessionListIndex::cursor_for(*last);
      return false;
    }
    result.sessions.push_back(info);
    last = position;
    return true;
  });
  return result;
}

void Engine::list_stored(const protocol::SessionListParams& params, std::optional<SessionListIndex::Position> after,
                         Then<protocol::SessionListResult> done) {
  StoredSessionQuery query;
  query.agent = params.agent;
  query.cwd = params.cwd;
  query.text = params.text;
  query.archived = params.archived.value_or(false);
  query.limit = static_cast<std::size_t>(params.limit.value_or(50));
  if (after) query.after = std::make_pair(after->created_at, std::move(after->session_id));
  // Every change to a session is handed to the store before this query, and the store applies calls in order:
  // the rows match the filters as the sessions are now. What only lives in memory (a running state, an agent
  // process) comes from the sessions in memory.
  m_persistence->list_sessions(query, [weak = std::weak_ptr<Engine*>(m_self), done = std::move(done)](Outcome<StoredSessionPage> page) {
    auto alive = weak.lock();
    if (!alive) return done(shutting_down());
    if (const auto* error = std::get_if<EngineError>(&page)) return done(*error);
    auto& stored = std::get<StoredSessionPage>(page);
    protocol::SessionListResult result;
    result.sessions.reserve(stored.sessions.size());
    for (auto& row : stored.sessions) {
      if (const auto* session = (*alive)->loaded(row.info.session_id)) {
        result.sessions.push_back(session->info());
      } else {
        as_cold(row);
        result.sessions.push_back(std::move(row.info));
      }
    }
    if (stored.more && !result.sessions.empty()) {
      const auto& last = result.sessions.back();
      result.next_cursor = SessionListIndex::cursor_for({last.created_at, last.session_id});
    }
    done(std::move(result));
  });
}

void Engine::update(const std::string& session_id, const std::function<void(Session&, Done)>& apply,
                    Then<protocol::SessionInfo> done) {
  with_session(session_id, [this, apply, session_id, done = std::move(done)](Outcome<Session*> target) {
    if (const auto* error = std::get_if<EngineError>(&target)) return done(*error);
    apply(*std::get<Session*>(target), [this, weak = std::weak_ptr<Engine*>(m_self), session_id, done](std::optional<EngineError> error) {
      if (error) return done(*error);
      if (weak.expired()) return done(shutting_down());
      updated(session_id, done);
    });
  });
}

void Engine::updated(const std::string& session_id, const Then<protocol::SessionInfo>& done) {
  auto* session = loaded(session_id);
  if (session == nullptr) return done(unknown_session(session_id));  // deleted while the agent answered
  session->mutable_info().updated_at = unix_millis_now();
  publish(session_id, protocol::SessionUpdatedEvent{session->info()});
  if (!m_persistence) return done(session->info());
  m_persistence->update_session(session->stored(), [done, info = session->info()](std::optional<EngineError> error) {
    if (error) return done(EngineError{error->code, "the change is in effect but was not saved: " + error->message});
    done(info);
  });
}

void Engine::rename(const std::string& session_id, const std::string& title, Then<protocol::SessionInfo> done) {
  update(session_id, [title](Session& session, const Done& applied) { session.mutable_info().title = title; applied(std::nullopt); },
         std::move(done));
}

void Engine::archive(const std::string& session_id, bool archived, Then<protocol::SessionInfo> done) {
  update(session_id, [archived](Session& session, const Done& applied) { session.mutable_info().archived = archived; applied(std::nullopt); },
         std::move(done));
}

void Engine::delete_session(const std::string& session_id, Done done,
                            std::optional<protocol::SessionDeleteParamsWorktree> worktree) {
  with_session(session_id, [this, done = std::move(done), worktree](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    delete_loaded(*std::get<Session*>(found), std::move(done), worktree);
  });
}

void Engine::delete_loaded(Session& session, Done done, std::optional<protocol::SessionDeleteParamsWorktree> worktree) {
  using WorktreeChoice = protocol::SessionDeleteParamsWorktree;
  const std::string session_id = session.info().session_id;
  if (session.info().worktree && worktree.value_or(WorktreeChoice::Remove) != WorktreeChoice::Keep) {
    // The worktree first, so that uncommitted work refuses the deletion (UncommittedWork) before anything is gone.
    protocol::SessionRemoveWorktreeParams removal{session_id, false, worktree == WorktreeChoice::Discard};
    return remove_worktree(removal, [this, session_id, done = std::move(done)](const Outcome<protocol::SessionRemoveWorktreeResult>& removed) {
      if (const auto* error = std::get_if<EngineError>(&removed)) return done(*error);
      delete_session(session_id, done, WorktreeChoice::Keep);
    });
  }
  auto forget = [this, session_id, done = std::move(done)](std::optional<EngineError> error) {
    if (error) return done(*error);
    auto it = m_sessions.find(session_id);
    if (it == m_sessions.end()) return done(unknown_session(session_id));  // deleted twice at once
    it->second->stop_agent();
    m_rules.forget_session(session_id);
    m_checkpoints.forget(session_id);
    m_list_order.erase({it->second->info().created_at, session_id});
    m_sessions.erase(it);
    publish(session_id, protocol::SessionDeletedEvent{});
    done(std::nullopt);
  };
  if (m_persistence) return m_persistence->delete_session(session_id, std::move(forget));
  forget(std::nullopt);
}

void Engine::attach(const std::string& session_id, Then<protocol::SessionAttachResult> done) {
  with_session(session_id, [this, done = std::move(done)](Outcome<Session*> found) {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    done(attach_result(*std::get<Session*>(found)));
  });
}

protocol::SessionAttachResult Engine::attach_result(const Session& session) const {
  const std::string& session_id = session.info().session_id;
  protocol::SessionAttachResult result;
  result.session = session.info();
  result.queue = session.queue();
  result.permissions = m_broker.open_permissions(session_id);
  result.questions = m_broker.open_questions(session_id);
  result.last_seq = m_last_seq ? static_cast<std::int64_t>(m_last_seq()) : 0;
  result.interrupted = session.interrupted_prompt();
  return result;
}

void Engine::set_model(const std::string& session_id, const std::string& model, Then<protocol::SessionInfo> done) {
  update(session_id, [model](Session& session, Done applied) { session.set_model(model, std::move(applied)); }, std::move(done));
}

void Engine::set_mode(const std::string& session_id, const std::string& mode, Then<protocol::SessionInfo> done) {
  update(session_id, [mode](Session& session, Done applied) { session.set_mode(mode, std::move(applied)); }, std::move(done));
}

void Engine::set_option(const protocol::SessionSetOptionParams& params, Then<protocol::SessionInfo> done) {
  update(params.session_id,
         [option = params.option_id, value = params.value](Session& session, Done applied) { session.set_option(option, value, std::move(applied)); },
         std::move(done));
}

void Engine::fork(const protocol::SessionForkParams& params, Then<protocol::SessionInfo> done) {
  with_session(params.session_id, [this, params, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    fork_loaded(*std::get<Session*>(found), params, std::move(done));
  });
}

void Engine::fork_loaded(Session& from, const protocol::SessionForkParams& params, Then<protocol::SessionInfo> done) {
  Session* source = &from;
  const auto* descriptor = agent(source->info().agent);
  if (descriptor == nullptr) return done(unknown_agent(source->info().agent));
  if (!descriptor->discover().capabilities.fork) {
    return done(EngineError{ErrorCode::Unsupported, source->info().agent + " cannot fork its conversations"});
  }
  source->fork_point(params.turn_id, [weak = std::weak_ptr<Engine*>(m_self), source_id = params.session_id, title = params.title,
                                      done](Outcome<ForkPoint> point) mutable {
    if (const auto* error = std::get_if<EngineError>(&point)) return done(*error);
    auto alive = weak.lock();
    if (!alive) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    Engine& owner = **alive;
    const Session* origin = owner.loaded(source_id);
    if (origin == nullptr) return done(unknown_session(source_id));
    auto& fork = std::get<ForkPoint>(point);
    // The same agent, directory and settings as the source; its own id, title and history from here on.
    StoredSession stored{protocol::SessionInfo{}, origin->settings()};
    protocol::SessionInfo& info = stored.info;
    info.session_id = random_id("s-", 8);
    info.agent = origin->info().agent;
    info.cwd = origin->info().cwd;
    info.title = title ? title : origin->info().title;
    info.model = origin->info().model;
    info.mode = origin->info().mode;
    info.models = origin->info().models;
    info.state = protocol::SessionState::Idle;
    info.created_at = info.updated_at = unix_millis_now();
    info.mcp_servers = pending_mcp_states(stored.settings.mcp_servers);
    info.forked_from = protocol::ForkOrigin{source_id, fork.turn_id};
    owner.insert_new_session(std::move(stored), std::move(fork.conversation), std::move(done));
  });
}

void Engine::rewind(const protocol::SessionRewindParams& params, Then<protocol::SessionRewindResult> done) {
  with_session(params.session_id, [this, params, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    rewind_loaded(*std::get<Session*>(found), params, std::move(done));
  });
}

void Engine::rewind_loaded(Session& target, const protocol::SessionRewindParams& params, Then<protocol::SessionRewindResult> done) {
  Session* session = &target;
  const bool conversation = params.conversation.value_or(true);
  const bool files = params.files.value_or(false);
  if (!conversation && !files) {
    return done(bad_param("session.rewind", "/conversation", "nothing to rewind: conversation and files are both false"));
  }
  session->rewind(params.turn_id, conversation, files, [weak = std::weak_ptr<Engine*>(m_self), id = params.session_id, done](
                                                           Outcome<RewindOutcome> rewound) {
    if (const auto* error = std::get_if<EngineError>(&rewound)) return done(*error);
    auto alive = weak.lock();
    const Session* after = alive ? (*alive)->loaded(id) : nullptr;
    if (after == nullptr) return done(unknown_session(id));
    auto& outcome = std::get<RewindOutcome>(rewound);
    protocol::SessionRewindResult result;
    result.session = after->info();
    result.rewound_turn_ids = std::move(outcome.turn_ids);
    if (outcome.files) {
      result.files = std::move(outcome.files->files);
      result.checkpoint_id = std::move(outcome.files->before_id);
    }
    done(std::move(result));
  });
}

void Engine::compact(const std::string& session_id, Then<protocol::SessionInfo> done) {
  with_session(session_id, [this, session_id, done = std::move(done)](Outcome<Session*> found) {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    std::get<Session*>(found)->compact([weak = std::weak_ptr<Engine*>(m_self), session_id, done](std::optional<EngineError> error) {
      if (error) return done(*error);
      auto alive = weak.lock();
      const Session* after = alive ? (*alive)->loaded(session_id) : nullptr;
      if (after == nullptr) return done(unknown_session(session_id));
      done(after->info());
    });
  });
}

void Engine::diff(const protocol::SessionDiffParams& params, Then<protocol::SessionDiffResult> done) {
  with_session(params.session_id, [this, params, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    if (params.against) return diff_against_base(*std::get<Session*>(found), params, std::move(done));
    diff_loaded(*std::get<Session*>(found), params, std::move(done));
  });
}

void Engine::diff_loaded(Session& target, const protocol::SessionDiffParams& params, Then<protocol::SessionDiffResult> done) {
  Session* session = &target;
  if (!params.turn_id) return m_checkpoints.diff(params.session_id, session->info().cwd, params.turn_id, std::move(done));
  // A turn the session never had is the caller's mistake, whatever the checkpoints hold.
  session->check_turn(*params.turn_id, [this, weak = std::weak_ptr<Engine*>(m_self), params, done = std::move(done)](bool known) {
    if (weak.expired()) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
    const auto* still = loaded(params.session_id);
    if (still == nullptr) return done(unknown_session(params.session_id));  // deleted meanwhile
    if (!known) return done(EngineError{ErrorCode::UnknownTurn, "session " + params.session_id + " has no turn " + params.turn_id->substr(0, 100)});
    m_checkpoints.diff(params.session_id, still->info().cwd, params.turn_id, std::move(done));
  });
}

void Engine::send(protocol::SessionSendParams params, Session::SendDone done) {
  const std::string session_id = params.session_id;
  with_session(session_id, [params = std::move(params), done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    std::get<Session*>(found)->send(std::move(params), std::move(done));
  });
}

void Engine::resume(const protocol::SessionResumeParams& params, Session::SendDone done) {
  with_session(params.session_id, [wait = params.wait.value_or(true), done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    std::get<Session*>(found)->resume(wait, std::move(done));
  });
}

void Engine::cancel(const std::string& session_id, Then<bool> done) {
  with_session(session_id, [done = std::move(done)](Outcome<Session*> found) {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    done(std::get<Session*>(found)->cancel());
  });
}

void Engine::respond_permission(const protocol::PermissionRespondParams& params, std::optional<std::string> client_id, Done done) {
  m_broker.answer_permission(params, std::move(client_id), std::move(done));
}

void Engine::respond_question(const protocol::QuestionRespondParams& params, std::optional<std::string> client_id, Done done) {
  m_broker.answer_question(params, std::move(client_id), std::move(done));
}

std::vector<protocol::RememberedRule> Engine::list_rules(const std::optional<std::string>& session_id,
                                                         const std::optional<std::string>& cwd) const {
  return m_rules.list(session_id, cwd);
}

void Engine::remove_rule(const std::string& rule_id, Done done) {
  const auto* rule = m_rules.get(rule_id);
  if (rule == nullptr) return done(EngineError{ErrorCode::UnknownRule, "no rule " + rule_id.substr(0, 100)});
  auto forget = [this, rule_id, done = std::move(done)](std::optional<EngineError> error) {
    if (error) return done(*error);
    if (!m_rules.remove(rule_id)) return done(EngineError{ErrorCode::UnknownRule, "no rule " + rule_id.substr(0, 100)});
    publish_rules_changed();
    done(std::nullopt);
  };
  // Session rules were never stored; the others are forgotten in the store first, so a failure keeps them.
  if (m_persistence && rule->scope != protocol::RuleScope::Session) return m_persistence->remove_rule(rule_id, std::move(forget));
  forget(std::nullopt);
}

void Engine::add_session_rule(const std::string& session_id, protocol::PermissionRule rule, bool allow,
                              Then<protocol::RememberedRule> done) {
  with_session(session_id, [this, session_id, rule = std::move(rule), allow, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    auto remembered = m_rules.add(protocol::RuleScope::Session, session_id, {}, std::move(rule), allow);
    publish_rules_changed();
    done(std::move(remembered));
  });
}

std::string Engine::remember_rule(protocol::RuleScope scope, const std::string& session_id, const std::string& cwd,
                                  protocol::PermissionRule rule) {
  // Clients remember allows only (the decisions are allow once/session/project/always, or deny).
  auto remembered = m_rules.add(scope, session_id, cwd, std::move(rule), /*allow=*/true);
  if (m_persistence && scope != protocol::RuleScope::Session) {
    // The rule is in force at once; a failure to store it only means it is forgotten at restart, which the
    // log says (the answer that created it already went to the agent).
    m_persistence->add_rule(remembered, [id = remembered.rule_id](std::optional<EngineError> error) {
      if (error) spdlog::error("rule {} is in force but could not be saved: {}", id, error->message);
    });
  }
  publish_rules_changed();
  return remembered.rule_id;
}

void Engine::publish_rules_changed() {
  publish(std::string(), protocol::RulesChangedEvent{m_rules.list(std::nullopt, std::nullopt)});
}

}  // namespace switchboard::engine
