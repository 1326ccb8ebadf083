#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/steady_timer.hpp>

#include "engine/EngineError.h"
#include "engine/RequestBroker.h"
#include "engine/SessionPersistence.h"
#include "engine/SessionServices.h"
#include "engine/TurnCheckpoints.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/protocol/generated/Types.h"
#include "worktree/SetupRun.h"

namespace switchboard::engine {

// The model a turn runs with. One rule for every adapter, from the most specific choice to the least: an
// explicit per-call override, then the model chosen for the session (session.create or session.setModel), then
// the configured default for the agent; with none of them the agent uses its own default (nullopt).
std::optional<std::string> resolve_model(const std::optional<std::string>& call_override,
                                         const std::optional<std::string>& session_choice,
                                         const std::optional<std::string>& configured);

// One conversation with one agent: its metadata, its adapter (while live), the running turn and the FIFO queue of
// prompts sent while busy. The permission and question requests its agent asks are the RequestBroker's; the
// session opens them, passes their answers to its agent, and cancels them when the turn ends.
//
// Turn invariants (tested for every adapter): state is running before send's reply; an open request keeps the
// turn running (awaiting_input); a turn ends with turn.stopped followed by session.state idle; a dead agent
// gives stopped; cancel follows the same stopped → idle path. Lives on the io_context thread.
// Where a fork of a session starts: the agent's conversation to copy and how much of it (session.fork).
struct ForkPoint {
  std::optional<std::string> turn_id;                // the last turn the fork keeps (none: the session had none)
  std::optional<ConversationBinding> conversation;   // none: the session has no agent conversation yet
};

// What session.rewind did: the turns undone, oldest first, and for files, what the restore changed in the working
// tree and the checkpoint taken just before it (TurnCheckpoints).
struct RewindOutcome {
  std::vector<std::string> turn_ids;
  std::optional<checkpoint::Restored> files;
};

class Session : public adapters::AdapterListener, private RequestBroker::Asker {
 public:
  using SendDone = std::function<void(Outcome<protocol::SessionSendResult>)>;
  using Done = std::function<void(std::optional<EngineError>)>;
  using RewindDone = std::function<void(Outcome<RewindOutcome>)>;

  Session(SessionServices& services, protocol::SessionInfo info, SessionSettings settings = {});
  ~Session() override;

  const protocol::SessionInfo& info() const { return m_info; }
  protocol::SessionInfo& mutable_info() { return m_info; }
  const SessionSettings& settings() const { return m_settings; }
  StoredSession stored() const { return StoredSession{m_info, m_settings}; }
  // A turn runs, prompts wait (queued or interrupted), its agent is starting, or a rewind or compaction holds it:
  // what rewind, fork and compact refuse with SessionBusy.
  bool busy() const;

  void send(protocol::SessionSendParams params, SendDone done);
  // Runs the interrupted prompt again (NotInterrupted if there is none).
  void resume(bool wait, SendDone done);
  // Cancels the running turn, or discards the interrupted prompt of an interrupted session.
  bool cancel();
  // Complete once a live agent has taken the change (or refused it, with its typed error); a cold session takes
  // it at once, for the next start.
  void set_model(const std::string& model, Done done);
  void set_mode(const std::string& mode, Done done);
  // session.setOption: checked against the options the agent reported (InvalidParams naming optionId or value),
  // given to a live agent, kept for every later start.
  void set_option(const std::string& option_id, const std::string& value, Done done);
  // session.fork's source side: the turn `turn_id` (default: the latest) of this session's conversation, checked
  // (UnknownTurn, Unsupported for a turn the agent named no reference for).
  void fork_point(const std::optional<std::string>& turn_id, std::function<void(Outcome<ForkPoint>)> done);
  // session.rewind: the agent drops `turn_id` and every later turn (conversation; started first if it is not
  // live), then the working tree is restored to the checkpoint `turn_id` started from (files). The session is held
  // from the moment the rewind is accepted until it is answered; everything that can be checked (the turn, the
  // agent's capability and reference, the checkpoint) is checked before anything changes. What changed is
  // recorded (turns marked, session.rewound) before the hold ends, also when the files fail after the
  // conversation was rewound: then the answer is the checkpoint error.
  void rewind(const std::string& turn_id, bool conversation, bool files, RewindDone done);
  // Whether `turn_id` is one of this session's turns, rewound ones and the running one included: what
  // session.diff answers UnknownTurn for otherwise. Known once the stored turns are read.
  void check_turn(const std::string& turn_id, std::function<void(bool)> known);
  // session.compact: the agent summarizes its conversation now (started first if it is not live).
  void compact(Done done);
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
  // resumes it, or forks it when another session of ours continues it.
  void bind_provider_session(ConversationBinding binding);
  // Whether this session continues the agent's conversation `provider_session_id` as far as it knows without the
  // store: it is bound to it and not about to fork it. (A restored session learns its binding at its next start.)
  bool continues(const std::string& provider_session_id) const {
    return m_provider_session_id == provider_session_id && !m_fork_pending;
  }

  std::vector<protocol::QueuedPrompt> queue() const;

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
  void on_models(adapters::ModelsOffered event) override;
  void on_plan(adapters::PlanUpdate event) override;
  void on_usage(adapters::UsageUpdate event) override;
  void on_commands(adapters::CommandsOffered event) override;
  void on_options(adapters::OptionsOffered event) override;
  void on_mcp_status(adapters::McpStatusReport event) override;
  void on_turn_end(adapters::TurnResult result) override;
  void on_error(adapters::AgentErrorReport error) override;
  void on_unavailable(adapters::Unavailable event) override;

 private:
  // Runs `then` once the session's ended turns are known (read from the store once, for a restored session).
  void with_turns(std::function<void()> then);
  // Runs `then` once the agent conversation the session continues is known (a restored session's newest run,
  // read once; callers that come while it is read wait for it).
  void with_conversation(std::function<void()> then);
  // A compaction: holds the session (prompts queue meanwhile), runs `work` on the agent (with_agent), answers
  // `done`, then releases the hold.
  void hold_for(std::function<void(Done)> work, Done done);
  // Starts the agent if needed and runs `work` on it; `done` gets the start's error instead if it fails.
  void with_agent(std::function<void(Done)> work, Done done);
  // The end of a rewind's or compaction's hold: prompts sent meanwhile were queued and run now, oldest first.
  void release_hold();
  // The agent's capabilities as its descriptor reports them (all false for an agent no longer registered).
  protocol::AgentCapabilities capabilities() const;
  // Stores what the session keeps of its agent's reports (plan, usage) and its settings.
  void save_session();
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

  // Where the session's agent is in its life. The wire state (idle, running, awaiting_input, stopped,
  // interrupted) says what clients see of the conversation, not this: a turn runs while its agent still starts,
  // and `stopped` stays on the wire after an agent died until a turn starts the next one.
  enum class AgentLife : std::uint8_t {
    None,      // no agent: not started yet in this daemon, or its start failed (the next turn starts one)
    Starting,  // start() called and not completed; turns wait for it
    Running,   // started: turns, answers and settings go to it
    Died,      // it reported itself gone; queued prompts wait for the next send to start another
  };

  void ensure_started(std::function<void(std::optional<EngineError>)> ready);
  void start_adapter();
  // The adapter's answer to start(): the waiting turns go on, or fail with its error.
  void started(std::optional<adapters::AdapterError> error);
  // The turn `turn_id`, once its agent has started (or failed to), goes to the agent.
  void send_to_agent(const std::string& turn_id, std::string text, std::vector<protocol::Attachment> attachments,
                     const std::optional<std::string>& resolved_model, std::optional<EngineError> error);
  // The one place the agent's life changes; `live` on the wire follows it.
  void set_agent_life(AgentLife life);
  // The agent's own conversation is gone: say so (agent.error, ConversationLost) and start a fresh one whose
  // first prompt carries the transcript the daemon stored.
  void continue_in_fresh_conversation(const std::string& why);
  void run_interrupted(std::optional<SendDone> waiter);
  // Stores what the session still owes the user (running prompt, queue), when it changed.
  void save_outstanding();
  void start_turn(std::string text, std::vector<protocol::Attachment> attachments, std::optional<std::string> model,
                  std::optional<std::string> queue_id, std::optional<SendDone> waiter);
  // A worktree session whose worktree still needs its repository's set-up command (worktree.setup pending or
  // failed, a command configured): runs it as the turn's first tool call, then `then` if it succeeded; a failure
  // ends the turn with SetupFailed. Without one to run, `then` at once.
  void set_up_worktree(const std::string& turn_id, std::function<void()> then);
  void worktree_set_up(const std::string& turn_id, worktree::SetupOutcome outcome, const std::function<void()>& then);
  // Publishes how the set-up command ended (its tool call's completion) and remembers it with the worktree.
  void record_setup(const std::string& turn_id, worktree::SetupOutcome outcome);
  // The turn ends while the set-up command is its step (cancel, shutdown): a command still running is killed and
  // its tool call completes as failed with `why`; one that already ended, its report not handled yet, is recorded
  // as it ended, so that a success is never run again.
  void cut_setup_short(const std::string& turn_id, const std::string& why);
  void drain_queue(bool after_stop = false);
  void set_state(protocol::SessionState state, std::optional<std::string> reason = std::nullopt);
  void refresh_running_state();
  // RequestBroker::Asker: the broker's answers go to the agent, if one runs.
  void deliver(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) override;
  void deliver(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) override;
  void requests_changed() override { refresh_running_state(); }
  // Wraps `done` for the adapter: the caller is answered even if the adapter drops it.
  adapters::Completion for_adapter(std::function<void(std::optional<adapters::AdapterError>)> done);
  void tear_down_requests();
  void notify_stopped();
  // True, and logged, when no turn is running to report `what` under.
  bool outside_turn(std::string_view what);
  // The running turn's id, for events that may also come between turns.
  std::optional<std::string> current_turn_id() const;
  // The id clients see for the agent's message `agent_message_id` of the running turn: unique within the session.
  std::string message_id(const std::string& agent_message_id) const;
  template <class Data>
  void publish(Data data);

  SessionServices& m_services;
  protocol::SessionInfo m_info;
  SessionSettings m_settings;
  // Ended turns, oldest first (TurnRecord: the agent's reference, rewound). Complete once m_turns_known; a
  // restored session reads the stored ones when first needed, and turns ending meanwhile are kept after them.
  std::vector<TurnRecord> m_turns;
  bool m_turns_known = true;
  std::vector<std::function<void()>> m_turn_waiters;
  bool m_held = false;          // a rewind or compaction is under way
  int m_option_changes = 0;            // session.setOption calls the agent has not answered yet
  bool m_options_unannounced = false;  // the agent reported options meanwhile: announced with the change
  bool m_usage_unsaved = false;  // usage reported during the turn: stored when it ends
  std::unique_ptr<adapters::AgentAdapter> m_adapter;
  AgentLife m_agent_life = AgentLife::None;
  std::vector<std::function<void(std::optional<EngineError>)>> m_start_waiters;
  std::optional<std::string> m_provider_session_id;
  // The next start forks m_provider_session_id rather than resuming it (ConversationBinding::fork), until the
  // agent reports the fork's own id.
  bool m_fork_pending = false;
  std::optional<std::string> m_fork_through;  // with m_fork_pending: the last turn the fork keeps
  std::optional<std::string> m_seed;  // the stored transcript, put before the next prompt the agent gets
  bool m_look_up_last_run = false;  // restored from the store: find the provider session id before starting
  bool m_looking_up_conversation = false;                    // that look-up is under way
  std::vector<std::function<void()>> m_conversation_waiters;  // with_conversation callers waiting for it
  std::optional<protocol::QueuedPrompt> m_interrupted;
  // What save_outstanding last stored, serialized ("" = nothing); nullopt while what the store holds is not known
  // (a restored session), so the next save writes whatever it is.
  std::optional<std::string> m_saved_outstanding = std::string();
  bool m_shutting_down = false;
  bool m_keep_stored_outstanding = false;  // a turn cut off by the shutdown: what is stored stays for the restart
  std::vector<std::function<void()>> m_stop_waiters;  // stop_for_shutdown callers
  // Callbacks from the store hold a weak_ptr to this, so a session deleted meanwhile is not touched.
  std::shared_ptr<Session*> m_self = std::make_shared<Session*>(this);
  std::optional<Turn> m_turn;
  std::unique_ptr<worktree::SetupRun> m_setup;  // the worktree's set-up command, while the turn runs it
  std::string m_setup_call_id;                  // its tool call id
  std::deque<Pending> m_queue;
  std::size_t m_dropped_outside_turn = 0;  // agent activity dropped since the last turn started
};

}  // namespace switchboard::engine
