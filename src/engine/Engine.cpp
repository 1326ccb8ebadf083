#include "engine/Engine.h"

#include <sys/stat.h>

#include <algorithm>

#include <spdlog/spdlog.h>

#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::engine {
namespace {

using protocol::ErrorCode;

// How many closed request ids are remembered for AlreadyAnswered.
constexpr std::size_t kRememberedClosedRequests = 4096;

EngineError unknown_session(const std::string& id) {
  return EngineError{ErrorCode::UnknownSession, "no session " + id.substr(0, 100)};
}

}  // namespace

std::optional<std::string> resolve_model(const std::optional<std::string>& call_override,
                                         const std::optional<std::string>& configured,
                                         const std::optional<std::string>& session_pin) {
  if (call_override) return call_override;
  if (configured) return configured;
  return session_pin;
}

Engine::Engine(boost::asio::io_context& io, bus::EventBus& bus, std::vector<adapters::AgentDescriptor> agents,
               EngineConfig config, SessionPersistence* persistence)
    : m_io(io), m_bus(bus), m_agents(std::move(agents)), m_config(std::move(config)), m_persistence(persistence) {
  // Who can answer prompts: clients that said so at initialize, and SSE watchers (a browser console).
  m_attached = m_bus.subscribe(protocol::EventKind::ClientAttached, [this](const bus::BusEvent& event) {
    const auto& attached = std::get<protocol::ClientAttachedEvent>(event.payload);
    if (attached.answers_permissions && m_answering_client_ids.insert(attached.client_id).second) ++m_answering_clients;
  });
  m_detached = m_bus.subscribe(protocol::EventKind::ClientDetached, [this](const bus::BusEvent& event) {
    const auto& detached = std::get<protocol::ClientDetachedEvent>(event.payload);
    if (m_answering_client_ids.erase(detached.client_id) > 0) --m_answering_clients;
  });
}

Engine::~Engine() = default;

void Engine::restore(PersistedState state) {
  for (auto& info : state.sessions) {
    info.live = false;  // no agent process survives a daemon restart
    info.state = protocol::SessionState::Idle;
    const std::string id = info.session_id;
    auto session = std::make_unique<Session>(*this, std::move(info));
    const auto work = state.outstanding.find(id);
    session->restore(work == state.outstanding.end() ? std::nullopt : std::optional<OutstandingWork>(work->second));
    m_sessions.emplace(id, std::move(session));
  }
  for (auto& rule : state.rules) m_rules.restore(std::move(rule));
}

void Engine::stop_all() {
  for (auto& [id, session] : m_sessions) session->stop_agent();
}

const adapters::AgentDescriptor* Engine::agent(const std::string& name) const {
  for (const auto& descriptor : m_agents) {
    if (descriptor.name == name) return &descriptor;
  }
  return nullptr;
}

Session* Engine::find(const std::string& session_id) const {
  const auto it = m_sessions.find(session_id);
  return it == m_sessions.end() ? nullptr : it->second.get();
}

std::vector<protocol::AgentInfo> Engine::list_agents() const {
  std::vector<protocol::AgentInfo> agents;
  for (const auto& descriptor : m_agents) agents.push_back(descriptor.discover());
  return agents;
}

void Engine::create_session(const protocol::SessionCreateParams& params, Then<protocol::SessionInfo> done) {
  const auto* descriptor = agent(params.agent);
  if (descriptor == nullptr) return done(EngineError{ErrorCode::UnknownAgent, "no agent named " + params.agent.substr(0, 100)});
  const auto info = descriptor->discover();
  if (!info.installed) {
    return done(EngineError{ErrorCode::AgentUnavailable,
                            params.agent + " is not available: " + info.problem.value_or("not installed")});
  }
  struct stat st {};
  if (::stat(params.cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return done(EngineError{ErrorCode::BadWorkingDirectory, "not a directory: " + params.cwd.substr(0, 500)});
  }
  protocol::SessionInfo session;
  session.session_id = random_id("s-", 8);
  session.agent = params.agent;
  session.cwd = params.cwd;
  session.title = params.title;
  session.model = params.model;
  session.mode = params.mode;
  session.state = protocol::SessionState::Idle;
  session.created_at = session.updated_at = unix_millis_now();
  auto add = [this, session, done = std::move(done)](std::optional<EngineError> error) {
    if (error) return done(*error);  // stored nowhere, so it does not exist
    auto [it, inserted] = m_sessions.emplace(session.session_id, std::make_unique<Session>(*this, session));
    m_bus.publish(session.session_id, protocol::SessionCreatedEvent{session});
    done(it->second->info());
  };
  // A session exists once it is stored: a crash right after the reply must not lose it.
  if (m_persistence) return m_persistence->insert_session(session, std::move(add));
  add(std::nullopt);
}

Outcome<protocol::SessionInfo> Engine::get_session(const std::string& session_id) const {
  const auto* session = find(session_id);
  if (session == nullptr) return unknown_session(session_id);
  return session->info();
}

protocol::SessionListResult Engine::list_sessions(const protocol::SessionListParams& params) const {
  std::vector<protocol::SessionInfo> matching;
  for (const auto& [id, session] : m_sessions) {
    const auto& info = session->info();
    if (params.agent && info.agent != *params.agent) continue;
    if (params.cwd && info.cwd != *params.cwd) continue;
    if (info.archived != params.archived.value_or(false)) continue;
    matching.push_back(info);
  }
  // Newest first; the id breaks ties so pages are stable.
  std::sort(matching.begin(), matching.end(), [](const auto& a, const auto& b) {
    return a.created_at != b.created_at ? a.created_at > b.created_at : a.session_id > b.session_id;
  });
  // The cursor is the id of the last session of the previous page.
  std::size_t start = 0;
  if (params.cursor) {
    const auto it = std::find_if(matching.begin(), matching.end(), [&](const auto& s) { return s.session_id == *params.cursor; });
    start = it == matching.end() ? matching.size() : static_cast<std::size_t>(it - matching.begin()) + 1;
  }
  const auto limit = static_cast<std::size_t>(params.limit.value_or(50));
  protocol::SessionListResult result;
  for (std::size_t i = start; i < matching.size() && result.sessions.size() < limit; ++i) result.sessions.push_back(matching[i]);
  if (start + result.sessions.size() < matching.size()) result.next_cursor = result.sessions.back().session_id;
  return result;
}

void Engine::update(const std::string& session_id, const std::function<std::optional<EngineError>(Session&)>& apply,
                    Then<protocol::SessionInfo> done) {
  auto* session = find(session_id);
  if (session == nullptr) return done(unknown_session(session_id));
  if (auto error = apply(*session)) return done(*error);
  session->mutable_info().updated_at = unix_millis_now();
  m_bus.publish(session_id, protocol::SessionUpdatedEvent{session->info()});
  if (!m_persistence) return done(session->info());
  m_persistence->update_session(session->info(), [done = std::move(done), info = session->info()](std::optional<EngineError> error) {
    if (error) return done(EngineError{error->code, "the change is in effect but was not saved: " + error->message});
    done(info);
  });
}

void Engine::rename(const std::string& session_id, const std::string& title, Then<protocol::SessionInfo> done) {
  update(session_id, [&](Session& session) { session.mutable_info().title = title; return std::optional<EngineError>(); },
         std::move(done));
}

void Engine::archive(const std::string& session_id, bool archived, Then<protocol::SessionInfo> done) {
  update(session_id, [&](Session& session) { session.mutable_info().archived = archived; return std::optional<EngineError>(); },
         std::move(done));
}

void Engine::delete_session(const std::string& session_id, Done done) {
  if (find(session_id) == nullptr) return done(unknown_session(session_id));
  auto forget = [this, session_id, done = std::move(done)](std::optional<EngineError> error) {
    if (error) return done(*error);
    auto it = m_sessions.find(session_id);
    if (it == m_sessions.end()) return done(unknown_session(session_id));  // deleted twice at once
    it->second->stop_agent();
    m_rules.forget_session(session_id);
    m_sessions.erase(it);
    m_bus.publish(session_id, protocol::SessionDeletedEvent{});
    done(std::nullopt);
  };
  if (m_persistence) return m_persistence->delete_session(session_id, std::move(forget));
  forget(std::nullopt);
}

Outcome<protocol::SessionAttachResult> Engine::attach(const std::string& session_id) const {
  const auto* session = find(session_id);
  if (session == nullptr) return unknown_session(session_id);
  protocol::SessionAttachResult result;
  result.session = session->info();
  result.queue = session->queue();
  result.permissions = session->open_permissions();
  result.questions = session->open_questions();
  result.last_seq = m_last_seq ? static_cast<std::int64_t>(m_last_seq()) : 0;
  result.interrupted = session->interrupted_prompt();
  return result;
}

void Engine::set_model(const std::string& session_id, const std::string& model, Then<protocol::SessionInfo> done) {
  update(session_id, [&](Session& session) { return session.set_model(model); }, std::move(done));
}

void Engine::set_mode(const std::string& session_id, const std::string& mode, Then<protocol::SessionInfo> done) {
  update(session_id, [&](Session& session) { return session.set_mode(mode); }, std::move(done));
}

void Engine::send(protocol::SessionSendParams params, Session::SendDone done) {
  auto* session = find(params.session_id);
  if (session == nullptr) return done(unknown_session(params.session_id));
  session->send(std::move(params), std::move(done));
}

void Engine::resume(const protocol::SessionResumeParams& params, Session::SendDone done) {
  auto* session = find(params.session_id);
  if (session == nullptr) return done(unknown_session(params.session_id));
  session->resume(params.wait.value_or(true), std::move(done));
}

Outcome<bool> Engine::cancel(const std::string& session_id) {
  auto* session = find(session_id);
  if (session == nullptr) return unknown_session(session_id);
  return session->cancel();
}

std::string Engine::register_request(const std::string& session_id) {
  std::string id = random_id("req-", 8);
  m_open_requests.emplace(id, session_id);
  return id;
}

void Engine::close_request(const std::string& request_id) {
  if (m_open_requests.erase(request_id) == 0) return;
  m_closed_requests.insert(request_id);
  m_closed_order.push_back(request_id);
  if (m_closed_order.size() > kRememberedClosedRequests) {
    m_closed_requests.erase(m_closed_order.front());
    m_closed_order.pop_front();
  }
}

Outcome<Session*> Engine::session_of_open_request(const std::string& request_id) const {
  // First answer wins: a request that was open once and is closed now was answered (or torn down) already.
  if (m_closed_requests.count(request_id) != 0) {
    return EngineError{ErrorCode::AlreadyAnswered, "request " + request_id + " was already answered"};
  }
  const auto it = m_open_requests.find(request_id);
  auto* session = it == m_open_requests.end() ? nullptr : find(it->second);
  if (session == nullptr) return EngineError{ErrorCode::UnknownRequest, "no open request " + request_id.substr(0, 100)};
  return session;
}

std::optional<EngineError> Engine::respond_permission(const protocol::PermissionRespondParams& params,
                                                      std::optional<std::string> client_id) {
  const auto found = session_of_open_request(params.request_id);
  if (const auto* error = std::get_if<EngineError>(&found)) return *error;
  auto* session = std::get<Session*>(found);
  if (!session->has_open_permission(params.request_id)) {
    return EngineError{ErrorCode::UnknownRequest, params.request_id + " is not a permission request"};
  }
  session->answer_permission(params.request_id, params.decision, params.rule, params.message, std::move(client_id));
  return std::nullopt;
}

std::optional<EngineError> Engine::respond_question(const protocol::QuestionRespondParams& params,
                                                    std::optional<std::string> client_id) {
  const auto found = session_of_open_request(params.request_id);
  if (const auto* error = std::get_if<EngineError>(&found)) return *error;
  auto* session = std::get<Session*>(found);
  if (!session->has_open_question(params.request_id)) {
    return EngineError{ErrorCode::UnknownRequest, params.request_id + " is not a question request"};
  }
  session->answer_question(params.request_id, params.reject.value_or(false),
                           params.answers.value_or(std::vector<std::string>{}), std::move(client_id));
  return std::nullopt;
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

protocol::RememberedRule Engine::remember_rule(protocol::RuleScope scope, const std::string& session_id,
                                               const std::string& cwd, protocol::PermissionRule rule, bool allow) {
  auto remembered = m_rules.add(scope, session_id, cwd, std::move(rule), allow);
  if (m_persistence && scope != protocol::RuleScope::Session) {
    // The rule is in force at once; a failure to store it only means it is forgotten at restart, which the
    // log says (the answer that created it already went to the agent).
    m_persistence->add_rule(remembered, [id = remembered.rule_id](std::optional<EngineError> error) {
      if (error) spdlog::error("rule {} is in force but could not be saved: {}", id, error->message);
    });
  }
  publish_rules_changed();
  return remembered;
}

void Engine::publish_rules_changed() {
  m_bus.publish_global(protocol::RulesChangedEvent{m_rules.list(std::nullopt, std::nullopt)});
}

}  // namespace switchboard::engine
