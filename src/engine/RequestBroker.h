#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "engine/EngineError.h"
#include "engine/RuleBook.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/protocol/generated/Events.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

enum class HeadlessPolicy { Deny, Allow };

// The permission and question requests agents ask, for every session: it opens them (permission.requested,
// question.requested), decides those it can at once (a remembered rule, the headless policy), waits for the first
// client answer or the timeout, and resolves each exactly once (permission.resolved, question.resolved) —
// answered, denied, timed out, withdrawn by the agent or cancelled with its turn. First answer wins: a request
// once closed answers every later attempt with AlreadyAnswered (-32002), one never opened with UnknownRequest.
//
// It knows nothing of adapters or turns: the session that asked (an Asker) passes each answer to its agent and
// hears when its open requests change. Lives on the io_context thread; callbacks may re-enter it.
class RequestBroker {
 public:
  // The session a request belongs to.
  class Asker {
   public:
    virtual ~Asker() = default;
    // Passes the answer to the agent; `done` once it has it, or with its typed error (e.g. Unsupported).
    virtual void deliver(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) = 0;
    virtual void deliver(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) = 0;
    // A request of this session opened or resolved (running vs awaiting_input).
    virtual void requests_changed() = 0;
  };

  // What the broker needs from the daemon around it.
  class Host {
   public:
    virtual ~Host() = default;
    virtual void publish(const std::string& session_id, protocol::EventPayload event) = 0;
    // Whether any attached client can answer (else the headless policy decides).
    virtual bool can_ask_someone() const = 0;
    // Remembers a rule a client chose with its answer (stored if it outlives the session); returns its id.
    virtual std::string remember_rule(protocol::RuleScope scope, const std::string& session_id, const std::string& cwd,
                                      protocol::PermissionRule rule) = 0;
  };

  struct Policy {
    // How long a request waits for an answer before it resolves as deny / rejection.
    std::chrono::milliseconds timeout = std::chrono::minutes(30);
    // What a permission request gets when no client that can answer is attached.
    HeadlessPolicy headless = HeadlessPolicy::Deny;
  };

  using Done = std::function<void(std::optional<EngineError>)>;

  RequestBroker(boost::asio::io_context& io, Host& host, const RuleBook& rules, Policy policy);
  ~RequestBroker();
  RequestBroker(const RequestBroker&) = delete;
  RequestBroker& operator=(const RequestBroker&) = delete;

  // A session's agent asks. `turn_id` is the running turn's (empty if none); `cwd` scopes project rules.
  void ask_permission(Asker& asker, const std::string& session_id, const std::string& cwd, const std::string& turn_id,
                      adapters::PermissionAsk ask);
  void ask_question(Asker& asker, const std::string& session_id, const std::string& turn_id, adapters::QuestionAsk ask);

  // A client answers. `done` runs once the agent has the answer (or with the typed error it refused it with: the
  // request then resolves as cancelled), or at once with AlreadyAnswered / UnknownRequest.
  void answer_permission(const protocol::PermissionRespondParams& params, std::optional<std::string> client_id, Done done);
  void answer_question(const protocol::QuestionRespondParams& params, std::optional<std::string> client_id, Done done);

  // The agent withdrew its request: resolved as cancelled, nothing is passed to the agent.
  void withdraw(const std::string& session_id, const std::string& native_id);
  // Every open request of the session resolves as cancelled (its turn ended or was cancelled). An answer its
  // agent is still taking resolves now, as answered: the turn's events then show every decision before the turn's
  // end, whenever the agent confirms it (an HTTP agent's reply can come after the turn it decided is over).
  void cancel_all(const std::string& session_id);
  // The session is going away: its requests are cancelled and it hears nothing more, not even answers its agent
  // completes later.
  void forget(const std::string& session_id);

  bool has_open(const std::string& session_id) const;
  std::vector<protocol::PermissionRequest> open_permissions(const std::string& session_id) const;
  std::vector<protocol::QuestionRequest> open_questions(const std::string& session_id) const;

 private:
  struct OpenPermission {
    std::string session_id;
    std::string cwd;
    std::string native_id;
    std::string subject;
    protocol::PermissionRequest request;
    std::unique_ptr<boost::asio::steady_timer> timeout;
  };
  struct OpenQuestion {
    std::string session_id;
    std::string native_id;
    protocol::QuestionRequest request;
    std::unique_ptr<boost::asio::steady_timer> timeout;
  };
  // How a permission request ends.
  struct PermissionVerdict {
    bool allow = false;
    protocol::PermissionResolvedEventResolvedBy by = protocol::PermissionResolvedEventResolvedBy::Cancel;
    std::optional<protocol::PermissionDecision> decision;
    std::optional<std::string> client_id;
    std::optional<std::string> rule_id;
    std::optional<std::string> message;  // told to the agent with a deny
    bool cancelled = false;              // nothing is passed to the agent
  };

  std::string open_request();
  // Closes the request for good (first answer wins) before anything is passed on.
  void close_request(const std::string& request_id);
  std::unique_ptr<boost::asio::steady_timer> start_timeout(std::function<void()> expired);
  void resolve_permission(const std::string& request_id, PermissionVerdict verdict, Done done = nullptr);
  void resolve_question(const std::string& request_id, protocol::QuestionResolvedEventOutcome outcome,
                        protocol::QuestionResolvedEventResolvedBy by, std::vector<std::string> answers,
                        std::optional<std::string> client_id, Done done = nullptr);
  // After the agent took (or refused) an answer: publishes the resolution and tells the session, if still there.
  void settled(const std::string& session_id, protocol::EventPayload resolved);
  // The agent took the answer to `request_id` (or refused it: the resolution becomes a cancellation), unless the
  // resolution went out already (cancel_all) or the session is forgotten.
  void delivered(const std::string& request_id, bool refused);
  std::optional<EngineError> check_answerable(const std::string& request_id, bool permission) const;
  Asker* asker_of(const std::string& session_id) const;

  boost::asio::io_context& m_io;
  Host& m_host;
  const RuleBook& m_rules;
  Policy m_policy;
  std::map<std::string, OpenPermission> m_permissions;  // by request id
  std::map<std::string, OpenQuestion> m_questions;
  std::map<std::string, Asker*> m_askers;  // by session id, for the sessions that asked and are still there
  // Answers on their way to the agent, by request id: the session, and the resolution to publish once it has them.
  struct Delivery {
    std::string session_id;
    protocol::EventPayload resolved;
  };
  std::map<std::string, Delivery> m_delivering;
  // Closed requests are remembered (bounded) so a late second answer gets AlreadyAnswered, not UnknownRequest.
  std::unordered_set<std::string> m_closed;
  std::deque<std::string> m_closed_order;
  // Completions the agents run later hold a weak_ptr to this, so a broker destroyed meanwhile is left alone.
  std::shared_ptr<RequestBroker*> m_self = std::make_shared<RequestBroker*>(this);
};

}  // namespace switchboard::engine
