#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/steady_timer.hpp>

#include "engine/EngineError.h"
#include "engine/SessionPersistence.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

class Engine;

// One conversation with one agent: its metadata, its adapter (while live), the running turn, the FIFO queue of
// prompts sent while busy, and the permission/question requests the running turn has open.
//
// Turn invariants (tested for every adapter): state is running before send's reply; an open request keeps the
// turn running (awaiting_input); a turn ends with turn.stopped followed by session.state idle; a dead agent
// gives stopped; cancel follows the same stopped → idle path. Lives on the io_context thread.
class Session : public adapters::AdapterListener {
 public:
  using SendDone = std::function<void(Outcome<protocol::SessionSendResult>)>;
  using Done = std::function<void(std::optional<EngineError>)>;

  Session(Engine& engine, protocol::SessionInfo info);
  ~Session() override;

  const protocol::SessionInfo& info() const { return m_info; }
  protocol::SessionInfo& mutable_info() { return m_info; }

  void send(protocol::SessionSendParams params, SendDone done);
  // Runs the interrupted prompt again (NotInterrupted if there is none).
  void resume(bool wait, SendDone done);
  // Cancels the running turn, or discards the interrupted prompt of an interrupted session.
  bool cancel();
  // Complete once a live agent has taken the change (or refused it, with its typed error); a cold session takes
  // it at once, for the next start.
  void set_model(const std::string& model, Done done);
  void set_mode(const std::string& mode, Done done);
  void stop_agent();
  // Daemon shutdown: stops the agent gracefully (it may finish its turn and save its conversation) and calls
  // `stopped` once the agent has reported that it is gone (at once when none runs), after the session's own
  // events (turn.stopped, session.state stopped). A turn cut off by the shutdown keeps its prompt stored, so the
  // session comes back interrupted. No new turn starts from then on.
  void stop_for_shutdown(std::function<void()> stopped);

  // For a session loaded from the store: it is cold (no agent yet) and may have been cut off mid-turn. The
  // newest run's provider session id is looked up when the agent is next started, so it resumes.
  void restore(const std::optional<OutstandingWork>& work);
  std::optional<protocol::QueuedPrompt> interrupted_prompt() const { return m_interrupted; }
  // For an imported session: the agent's own session it continues (already stored as a run), so the first start
  // resumes it.
  void bind_provider_session(std::string provider_session_id) { m_provider_session_id = std::move(provider_session_id); }

  std::vector<protocol::QueuedPrompt> queue() const;
  std::vector<protocol::PermissionRequest> open_permissions() const;
  std::vector<protocol::QuestionRequest> open_questions() const;
  bool has_open_permission(const std::string& request_id) const { return m_permissions.count(request_id) != 0; }
  bool has_open_question(const std::string& request_id) const { return m_questions.count(request_id) != 0; }

  // Answers routed here by the engine (first answer wins is checked by the engine's registry). `done` runs once
  // the agent has the answer, or with the typed error it refused it with.
  void answer_permission(const std::string& request_id, protocol::PermissionDecision decision,
                         std::optional<protocol::PermissionRule> rule, std::optional<std::string> message,
                         std::optional<std::string> client_id, Done done);
  void answer_question(const std::string& request_id, bool reject, std::vector<std::string> answers,
                       std::optional<std::string> client_id, Done done);

  // AdapterListener
  void on_provider_session(adapters::ProviderSession event) override;
  void on_delta(adapters::TextDelta event) override;
  void on_message(adapters::MessageCompleted event) override;
  void on_tool_started(adapters::ToolStarted event) override;
  void on_tool_output(adapters::ToolOutput event) override;
  void on_tool_completed(adapters::ToolCompleted event) override;
  void on_permission_request(adapters::PermissionAsk ask) override;
  void on_question(adapters::QuestionAsk ask) override;
  void on_request_withdrawn(adapters::RequestWithdrawn event) override;
  void on_status(adapters::AgentStatus status) override;
  void on_turn_end(adapters::TurnResult result) override;
  void on_error(adapters::AgentErrorReport error) override;
  void on_unavailable(adapters::Unavailable event) override;

 private:
  struct Pending {
    protocol::QueuedPrompt prompt;
    std::optional<std::string> model;
  };
  struct Turn {
    std::string turn_id;
    protocol::QueuedPrompt prompt;   // what the user sent, kept until the turn ends (queueId: the turn id)
    std::optional<SendDone> waiter;  // send with wait:true
    std::string last_text;           // last completed assistant text
  };
  struct OpenPermission {
    std::string native_id;
    protocol::PermissionRequest request;
    adapters::PermissionAsk ask;
    std::unique_ptr<boost::asio::steady_timer> timeout;
  };
  struct OpenQuestion {
    std::string native_id;
    protocol::QuestionRequest request;
    std::unique_ptr<boost::asio::steady_timer> timeout;
  };

  void ensure_started(std::function<void(std::optional<EngineError>)> ready);
  void start_adapter();
  // The agent's own conversation is gone: say so (agent.error, ConversationLost) and start a fresh one whose
  // first prompt carries the transcript the daemon stored.
  void continue_in_fresh_conversation(const std::string& why);
  void run_interrupted(std::optional<SendDone> waiter);
  // Stores what the session still owes the user (running prompt, queue), when it changed.
  void save_outstanding();
  void start_turn(std::string text, std::vector<protocol::Attachment> attachments, std::optional<std::string> model,
                  std::optional<std::string> queue_id, std::optional<SendDone> waiter);
  void drain_queue(bool after_stop = false);
  void set_state(protocol::SessionState state, std::optional<std::string> reason = std::nullopt);
  void refresh_running_state();
  void resolve_permission(const std::string& request_id, bool allow, protocol::PermissionResolvedEventResolvedBy by,
                          std::optional<protocol::PermissionDecision> decision, std::optional<std::string> client_id,
                          std::optional<std::string> rule_id, std::optional<std::string> message, bool cancelled = false,
                          Done done = nullptr);
  void resolve_question(const std::string& request_id, protocol::QuestionResolvedEventOutcome outcome,
                        protocol::QuestionResolvedEventResolvedBy by, std::vector<std::string> answers,
                        std::optional<std::string> client_id, Done done = nullptr);
  // Wraps `done` for the adapter: the caller is answered even if the adapter drops it.
  adapters::Completion for_adapter(std::function<void(std::optional<adapters::AdapterError>)> done);
  void tear_down_requests();
  void notify_stopped();
  template <class Data>
  void publish(Data data);

  Engine& m_engine;
  protocol::SessionInfo m_info;
  std::unique_ptr<adapters::AgentAdapter> m_adapter;
  bool m_starting = false;
  std::vector<std::function<void(std::optional<EngineError>)>> m_start_waiters;
  std::optional<std::string> m_provider_session_id;
  std::optional<std::string> m_seed;  // the stored transcript, put before the next prompt the agent gets
  bool m_look_up_last_run = false;  // restored from the store: find the provider session id before starting
  std::optional<protocol::QueuedPrompt> m_interrupted;
  std::string m_saved_outstanding;  // what save_outstanding last stored, serialized ("" = nothing)
  bool m_shutting_down = false;
  bool m_keep_stored_outstanding = false;  // a turn cut off by the shutdown: what is stored stays for the restart
  std::vector<std::function<void()>> m_stop_waiters;  // stop_for_shutdown callers
  // Callbacks from the store hold a weak_ptr to this, so a session deleted meanwhile is not touched.
  std::shared_ptr<Session*> m_self = std::make_shared<Session*>(this);
  std::optional<Turn> m_turn;
  std::deque<Pending> m_queue;
  std::map<std::string, OpenPermission> m_permissions;  // by request id
  std::map<std::string, OpenQuestion> m_questions;
};

}  // namespace switchboard::engine
