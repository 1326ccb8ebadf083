#include "engine/RequestBroker.h"

#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::engine {
namespace {

using protocol::ErrorCode;
using ResolvedBy = protocol::PermissionResolvedEventResolvedBy;
using QuestionBy = protocol::QuestionResolvedEventResolvedBy;
using QuestionOutcome = protocol::QuestionResolvedEventOutcome;

// How many closed request ids are remembered for AlreadyAnswered.
constexpr std::size_t kRememberedClosedRequests = 4096;

// The rule a client's decision asks to remember, if any.
std::optional<protocol::RuleScope> scope_of(protocol::PermissionDecision decision) {
  switch (decision) {
    case protocol::PermissionDecision::AllowSession: return protocol::RuleScope::Session;
    case protocol::PermissionDecision::AllowProject: return protocol::RuleScope::Project;
    case protocol::PermissionDecision::AllowAlways: return protocol::RuleScope::Always;
    case protocol::PermissionDecision::AllowOnce:
    case protocol::PermissionDecision::Deny: return std::nullopt;
  }
  return std::nullopt;
}

template <class Data>
protocol::EventPayload as_event(Data data) {
  return protocol::EventPayload(std::in_place_type<Data>, std::move(data));
}

std::optional<EngineError> completion_error(const std::optional<adapters::AdapterError>& error) {
  if (!error) return std::nullopt;
  return EngineError{error->code, error->message};
}

}  // namespace

RequestBroker::RequestBroker(boost::asio::io_context& io, Host& host, const RuleBook& rules, Policy policy)
    : m_io(io), m_host(host), m_rules(rules), m_policy(policy) {}

RequestBroker::~RequestBroker() = default;

std::string RequestBroker::open_request() { return random_id("req-", 8); }

void RequestBroker::close_request(const std::string& request_id) {
  m_closed.insert(request_id);
  m_closed_order.push_back(request_id);
  if (m_closed_order.size() > kRememberedClosedRequests) {
    m_closed.erase(m_closed_order.front());
    m_closed_order.pop_front();
  }
}

std::unique_ptr<boost::asio::steady_timer> RequestBroker::start_timeout(std::function<void()> expired) {
  auto timer = std::make_unique<boost::asio::steady_timer>(m_io, m_policy.timeout);
  // The timer is destroyed with its request (resolved, or the broker gone): the handler then sees the error.
  timer->async_wait([expired = std::move(expired)](const boost::system::error_code& error) {
    if (!error) expired();
  });
  return timer;
}

RequestBroker::Asker* RequestBroker::asker_of(const std::string& session_id) const {
  const auto it = m_askers.find(session_id);
  return it == m_askers.end() ? nullptr : it->second;
}

// ---- asking ----------------------------------------------------------------------------------------------------

void RequestBroker::ask_permission(Asker& asker, const std::string& session_id, const std::string& cwd,
                                   const std::string& turn_id, adapters::PermissionAsk ask) {
  m_askers[session_id] = &asker;
  const std::string request_id = open_request();
  OpenPermission open;
  open.session_id = session_id;
  open.cwd = cwd;
  open.native_id = std::move(ask.native_id);
  open.subject = std::move(ask.subject);
  open.request.request_id = request_id;
  open.request.session_id = session_id;
  open.request.turn_id = turn_id;
  open.request.tool = std::move(ask.tool);
  open.request.input = std::move(ask.input);
  open.request.description = std::move(ask.description);
  open.request.suggested_rule = std::move(ask.suggested_rule);
  open.request.reason = std::move(ask.reason);
  open.request.state = protocol::PermissionRequestState::Open;
  open.request.opened_at = unix_millis_now();

  // A remembered rule answers without asking anyone.
  const auto match = m_rules.find(session_id, cwd, open.request.tool, open.subject);
  if (match) open.request.reason = "rule " + match->rule.rule_id;
  auto [it, inserted] = m_permissions.emplace(request_id, std::move(open));
  m_host.publish(session_id, as_event(protocol::PermissionRequestedEvent{it->second.request}));
  if (match) {
    PermissionVerdict verdict;
    verdict.allow = match->allow;
    verdict.by = ResolvedBy::Rule;
    verdict.rule_id = match->rule.rule_id;
    return resolve_permission(request_id, std::move(verdict));
  }
  if (!m_host.can_ask_someone()) {
    // Headless: nobody can answer, so the configured policy decides now instead of stalling the turn.
    PermissionVerdict verdict;
    verdict.allow = m_policy.headless == HeadlessPolicy::Allow;
    verdict.by = ResolvedBy::Headless;
    if (!verdict.allow) verdict.message = "no client is attached to answer";
    return resolve_permission(request_id, std::move(verdict));
  }
  it->second.timeout = start_timeout([this, request_id] {
    PermissionVerdict verdict;
    verdict.by = ResolvedBy::Timeout;
    verdict.message = "nobody answered in time";
    resolve_permission(request_id, std::move(verdict));
  });
  asker.requests_changed();
}

void RequestBroker::ask_question(Asker& asker, const std::string& session_id, const std::string& turn_id, adapters::QuestionAsk ask) {
  m_askers[session_id] = &asker;
  const std::string request_id = open_request();
  OpenQuestion open;
  open.session_id = session_id;
  open.native_id = std::move(ask.native_id);
  open.request.request_id = request_id;
  open.request.session_id = session_id;
  open.request.turn_id = turn_id;
  open.request.questions = std::move(ask.questions);
  open.request.state = protocol::QuestionRequestState::Open;
  open.request.opened_at = unix_millis_now();
  auto [it, inserted] = m_questions.emplace(request_id, std::move(open));
  m_host.publish(session_id, as_event(protocol::QuestionRequestedEvent{it->second.request}));
  if (!m_host.can_ask_someone()) {
    return resolve_question(request_id, QuestionOutcome::Rejected, QuestionBy::Headless, {}, std::nullopt);
  }
  it->second.timeout = start_timeout([this, request_id] {
    resolve_question(request_id, QuestionOutcome::Rejected, QuestionBy::Timeout, {}, std::nullopt);
  });
  asker.requests_changed();
}

// ---- answering ---------------------------------------------------------------------------------------------------

std::optional<EngineError> RequestBroker::check_answerable(const std::string& request_id, bool permission) const {
  // First answer wins: a request that was open once and is closed now was answered (or torn down) already.
  if (m_closed.count(request_id) != 0) return EngineError{ErrorCode::AlreadyAnswered, "request " + request_id + " was already answered"};
  const bool is_permission = m_permissions.count(request_id) != 0;
  const bool is_question = m_questions.count(request_id) != 0;
  if (!is_permission && !is_question) return EngineError{ErrorCode::UnknownRequest, "no open request " + request_id.substr(0, 100)};
  if (permission && !is_permission) return EngineError{ErrorCode::UnknownRequest, request_id + " is not a permission request"};
  if (!permission && !is_question) return EngineError{ErrorCode::UnknownRequest, request_id + " is not a question request"};
  return std::nullopt;
}

void RequestBroker::answer_permission(const protocol::PermissionRespondParams& params, std::optional<std::string> client_id, Done done) {
  if (auto error = check_answerable(params.request_id, true)) return done(std::move(error));
  auto& open = m_permissions.at(params.request_id);
  open.request.state = protocol::PermissionRequestState::Responding;
  m_host.publish(open.session_id, as_event(protocol::PermissionRespondingEvent{params.request_id, client_id}));
  PermissionVerdict verdict;
  verdict.allow = params.decision != protocol::PermissionDecision::Deny;
  verdict.by = ResolvedBy::Client;
  verdict.decision = params.decision;
  verdict.client_id = std::move(client_id);
  verdict.message = params.message;
  if (const auto scope = scope_of(params.decision)) {
    // The client may narrow the suggested rule; without either, the rule covers the tool with any input.
    protocol::PermissionRule remembered =
        params.rule ? *params.rule : open.request.suggested_rule.value_or(protocol::PermissionRule{open.request.tool, std::nullopt});
    verdict.rule_id = m_host.remember_rule(*scope, open.session_id, open.cwd, std::move(remembered));
  }
  resolve_permission(params.request_id, std::move(verdict), std::move(done));
}

void RequestBroker::answer_question(const protocol::QuestionRespondParams& params, std::optional<std::string> client_id, Done done) {
  if (auto error = check_answerable(params.request_id, false)) return done(std::move(error));
  m_questions.at(params.request_id).request.state = protocol::QuestionRequestState::Responding;
  const bool reject = params.reject.value_or(false);
  resolve_question(params.request_id, reject ? QuestionOutcome::Rejected : QuestionOutcome::Answered, QuestionBy::Client,
                   params.answers.value_or(std::vector<std::string>{}), std::move(client_id), std::move(done));
}

// ---- resolving ---------------------------------------------------------------------------------------------------

void RequestBroker::resolve_permission(const std::string& request_id, PermissionVerdict verdict, Done done) {
  auto it = m_permissions.find(request_id);
  if (it == m_permissions.end()) {
    if (done) done(EngineError{ErrorCode::AlreadyAnswered, "request " + request_id + " was already answered"});
    return;
  }
  OpenPermission open = std::move(it->second);
  m_permissions.erase(it);
  close_request(request_id);
  if (open.timeout) open.timeout->cancel();
  protocol::PermissionResolvedEvent resolved;
  resolved.request_id = request_id;
  resolved.outcome = verdict.cancelled ? protocol::PermissionResolvedEventOutcome::Cancelled
                     : verdict.allow   ? protocol::PermissionResolvedEventOutcome::Allowed
                                       : protocol::PermissionResolvedEventOutcome::Denied;
  resolved.decision = verdict.decision;
  resolved.resolved_by = verdict.by;
  resolved.client_id = std::move(verdict.client_id);
  resolved.rule_id = std::move(verdict.rule_id);
  resolved.resolved_at = unix_millis_now();
  auto* asker = asker_of(open.session_id);
  if (verdict.cancelled || asker == nullptr) {
    settled(open.session_id, as_event(std::move(resolved)));
    if (done) done(std::nullopt);
    return;
  }
  // Published once the agent has the answer, so that an answer it refuses resolves as cancelled, not as decided.
  m_delivering[request_id] = Delivery{open.session_id, as_event(std::move(resolved))};
  auto taken = [weak = std::weak_ptr<RequestBroker*>(m_self), request_id, done = std::move(done)](std::optional<adapters::AdapterError> error) {
    if (auto self = weak.lock()) (*self)->delivered(request_id, error.has_value());
    if (done) done(completion_error(error));
  };
  asker->deliver(open.native_id, adapters::PermissionAnswer{verdict.allow, std::move(verdict.message)}, std::move(taken));
}

void RequestBroker::resolve_question(const std::string& request_id, QuestionOutcome outcome, QuestionBy by,
                                     std::vector<std::string> answers, std::optional<std::string> client_id, Done done) {
  auto it = m_questions.find(request_id);
  if (it == m_questions.end()) {
    if (done) done(EngineError{ErrorCode::AlreadyAnswered, "request " + request_id + " was already answered"});
    return;
  }
  OpenQuestion open = std::move(it->second);
  m_questions.erase(it);
  close_request(request_id);
  if (open.timeout) open.timeout->cancel();
  adapters::QuestionAnswer answer{outcome == QuestionOutcome::Rejected, answers};
  protocol::QuestionResolvedEvent resolved;
  resolved.request_id = request_id;
  resolved.outcome = outcome;
  if (!answers.empty()) resolved.answers = std::move(answers);
  resolved.resolved_by = by;
  resolved.client_id = std::move(client_id);
  resolved.resolved_at = unix_millis_now();
  auto* asker = asker_of(open.session_id);
  if (outcome == QuestionOutcome::Cancelled || asker == nullptr) {
    settled(open.session_id, as_event(std::move(resolved)));
    if (done) done(std::nullopt);
    return;
  }
  // Published once the agent has the answer: one it cannot take (Unsupported) resolves the question as cancelled.
  m_delivering[request_id] = Delivery{open.session_id, as_event(std::move(resolved))};
  auto taken = [weak = std::weak_ptr<RequestBroker*>(m_self), request_id, done = std::move(done)](std::optional<adapters::AdapterError> error) {
    if (auto self = weak.lock()) (*self)->delivered(request_id, error.has_value());
    if (done) done(completion_error(error));
  };
  asker->deliver(open.native_id, std::move(answer), std::move(taken));
}

void RequestBroker::delivered(const std::string& request_id, bool refused) {
  const auto it = m_delivering.find(request_id);
  if (it == m_delivering.end()) return;
  Delivery delivery = std::move(it->second);
  m_delivering.erase(it);
  if (refused) {
    if (auto* permission = std::get_if<protocol::PermissionResolvedEvent>(&delivery.resolved)) {
      permission->outcome = protocol::PermissionResolvedEventOutcome::Cancelled;
    } else if (auto* question = std::get_if<protocol::QuestionResolvedEvent>(&delivery.resolved)) {
      question->outcome = QuestionOutcome::Cancelled;
      question->answers.reset();
    }
  }
  settled(delivery.session_id, std::move(delivery.resolved));
}

void RequestBroker::settled(const std::string& session_id, protocol::EventPayload resolved) {
  auto* asker = asker_of(session_id);
  if (asker == nullptr) return;  // the session is gone: nobody is told about its requests any more
  m_host.publish(session_id, std::move(resolved));
  asker->requests_changed();
}

void RequestBroker::withdraw(const std::string& session_id, const std::string& native_id) {
  // The agent stopped waiting: the request resolves as cancelled (a later answer gets AlreadyAnswered) and the
  // turn goes on without it.
  for (const auto& [id, open] : m_permissions) {
    if (open.session_id != session_id || open.native_id != native_id) continue;
    PermissionVerdict verdict;
    verdict.by = ResolvedBy::Cancel;
    verdict.cancelled = true;
    const std::string request_id = id;
    return resolve_permission(request_id, std::move(verdict));
  }
  for (const auto& [id, open] : m_questions) {
    if (open.session_id != session_id || open.native_id != native_id) continue;
    const std::string request_id = id;
    return resolve_question(request_id, QuestionOutcome::Cancelled, QuestionBy::Cancel, {}, std::nullopt);
  }
}

void RequestBroker::cancel_all(const std::string& session_id) {
  // Answers the agent has not confirmed yet resolve as given: the turn they decided is ending.
  std::vector<std::string> delivering;
  for (const auto& [id, delivery] : m_delivering) {
    if (delivery.session_id == session_id) delivering.push_back(id);
  }
  for (const auto& id : delivering) delivered(id, /*refused=*/false);
  std::vector<std::string> permissions;
  for (const auto& [id, open] : m_permissions) {
    if (open.session_id == session_id) permissions.push_back(id);
  }
  for (const auto& id : permissions) {
    PermissionVerdict verdict;
    verdict.by = ResolvedBy::Cancel;
    verdict.cancelled = true;
    resolve_permission(id, std::move(verdict));
  }
  std::vector<std::string> questions;
  for (const auto& [id, open] : m_questions) {
    if (open.session_id == session_id) questions.push_back(id);
  }
  for (const auto& id : questions) resolve_question(id, QuestionOutcome::Cancelled, QuestionBy::Cancel, {}, std::nullopt);
}

void RequestBroker::forget(const std::string& session_id) {
  std::erase_if(m_delivering, [&](const auto& entry) { return entry.second.session_id == session_id; });
  cancel_all(session_id);
  m_askers.erase(session_id);
}

bool RequestBroker::has_open(const std::string& session_id) const {
  for (const auto& [id, open] : m_permissions) {
    if (open.session_id == session_id) return true;
  }
  for (const auto& [id, open] : m_questions) {
    if (open.session_id == session_id) return true;
  }
  return false;
}

std::vector<protocol::PermissionRequest> RequestBroker::open_permissions(const std::string& session_id) const {
  std::vector<protocol::PermissionRequest> out;
  for (const auto& [id, open] : m_permissions) {
    if (open.session_id == session_id) out.push_back(open.request);
  }
  return out;
}

std::vector<protocol::QuestionRequest> RequestBroker::open_questions(const std::string& session_id) const {
  std::vector<protocol::QuestionRequest> out;
  for (const auto& [id, open] : m_questions) {
    if (open.session_id == session_id) out.push_back(open.request);
  }
  return out;
}

}  // namespace switchboard::engine
