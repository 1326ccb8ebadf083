#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "engine/EngineError.h"
#include "engine/PrestartedAgent.h"
#include "engine/RequestBroker.h"
#include "engine/RuleBook.h"
#include "engine/Session.h"
#include "engine/SessionListIndex.h"
#include "engine/SessionPersistence.h"
#include "engine/SessionServices.h"
#include "engine/TurnCheckpoints.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/bus/EventBus.h"
#include "worktree/SetupCommands.h"
#include "worktree/WorktreeGit.h"

namespace switchboard::engine {

struct EngineConfig {
  // How long a permission or question waits for an answer before it resolves as deny / rejection.
  std::chrono::milliseconds request_timeout = std::chrono::minutes(30);
  // What to do with a permission request when no client that can answer is attached.
  HeadlessPolicy headless_policy = HeadlessPolicy::Deny;
  // Configured default model per agent (the last step of the precedence: call override → session's choice →
  // this → the agent's own default).
  std::map<std::string, std::string> default_models;
  // When the agents' discovery probes (`<cli> --version`) run: at the engine's start (a daemon that serves
  // clients, whose agents.list soon wants the versions), or only once agents.list asks (the daemon of one
  // `switchboard run`: its turn needs no version, and a probe would compete with the agent's own start).
  bool defer_discovery = false;
  // Whether agents are asked to stream text as it is written (message.delta events before each
  // message.completed). Off for the daemon of a `switchboard run` whose output shows only whole messages: an
  // agent may then skip its partial messages (Claude Code's stream-json mode is slower with them), and a client
  // that attaches to that daemon sees each message once it is complete, as it does for a compacted turn.
  bool stream_text = true;
  // What runs in a new worktree of a repository before its session's first turn (setting worktrees.setup).
  worktree::SetupCommands worktree_setup;
};

// The agent a session about to be created will start, known before the session exists (Engine::prestart).
struct AgentPrestart {
  std::string agent;
  std::string cwd;
  std::optional<std::string> model;
  std::optional<std::string> mode;
};

// Owns the sessions, the rule book and the request broker, and routes every method to them. Knows nothing of
// JSON-RPC or transports: EngineMethods binds it to the dispatcher, and everything clients see leaves through the
// bus. Sessions see it only as their SessionServices, the broker only as its Host.
class Engine : private SessionServices, private RequestBroker::Host {
 public:
  // `persistence` may be null (everything lives in memory only); otherwise it must outlive the engine.
  Engine(boost::asio::io_context& io, bus::EventBus& bus, std::vector<adapters::AgentDescriptor> agents,
         EngineConfig config = {}, SessionPersistence* persistence = nullptr);
  ~Engine() override;

  template <class T>
  using Then = std::function<void(Outcome<T>)>;
  using Done = std::function<void(std::optional<EngineError>)>;

  // Loads what the store kept from earlier runs that must be in memory: the sessions with outstanding prompts
  // come back cold (no agent process) and `interrupted`, remembered project/always rules in force. Call before
  // serving. Every other stored session stays in the store until a call needs it (with_session), so a start costs
  // the same however many sessions are stored.
  void restore(PersistedState state);

  // Starts the agent a session will soon want, before that session exists, so that the agent's start-up runs
  // while the daemon is still starting (a hosted `switchboard run`, whose daemon opens its store meanwhile). The
  // first session to start an agent takes it if it fits (same agent, directory, model and mode; a new
  // conversation); one that does not fit ends it, and so does the shutdown. A start that fails is dropped: the
  // session then starts its agent as usual, and hears why it fails from that start.
  void prestart(const AgentPrestart& prestart);
  // Ends the agent prestart() started if no session has taken it (a daemon that could not start after all).
  void drop_prestarted();

  // Begins every agent's discovery first, if it has not begun (EngineConfig::defer_discovery).
  std::vector<protocol::AgentInfo> list_agents();
  // Changes a client asks for answer through a callback: with persistence they complete once stored, and a
  // storage failure reaches the caller as StoreFailure. Without persistence they complete before returning.
  // Calls on a session answer through a callback too: a session not in memory is read from the store first.
  // Those that only read (get, attach, cancel, rules.add) complete before returning when the session is in memory.
  void create_session(const protocol::SessionCreateParams& params, Then<protocol::SessionInfo> done);
  // A session not in memory is answered from its stored row, without making a Session of it.
  void get_session(const std::string& session_id, Then<protocol::SessionInfo> done);
  // With persistence, a page the store reads (newest first, filtered there), each session in memory shown as it
  // is now; without, the sessions in memory. Its cost does not grow with the number of sessions.
  void list_sessions(const protocol::SessionListParams& params, Then<protocol::SessionListResult> done);
  void rename(const std::string& session_id, const std::string& title, Then<protocol::SessionInfo> done);
  void archive(const std::string& session_id, bool archived, Then<protocol::SessionInfo> done);
  // A worktree session's worktree is removed first unless `worktree` says keep (docs/worktrees.md).
  void delete_session(const std::string& session_id, Done done,
                      std::optional<protocol::SessionDeleteParamsWorktree> worktree = std::nullopt);
  void attach(const std::string& session_id, Then<protocol::SessionAttachResult> done);
  void set_model(const std::string& session_id, const std::string& model, Then<protocol::SessionInfo> done);
  void set_mode(const std::string& session_id, const std::string& mode, Then<protocol::SessionInfo> done);
  void set_option(const protocol::SessionSetOptionParams& params, Then<protocol::SessionInfo> done);
  // A new session continuing a copy of this one's conversation through a turn (session.fork), stored before `done`.
  void fork(const protocol::SessionForkParams& params, Then<protocol::SessionInfo> done);
  void rewind(const protocol::SessionRewindParams& params, Then<protocol::SessionRewindResult> done);
  void compact(const std::string& session_id, Then<protocol::SessionInfo> done);
  // What a turn (or the whole session) changed in the working tree, from the daemon's file checkpoints; with
  // against base, what a worktree session's worktree holds against its base (EngineWorktrees.cpp).
  void diff(const protocol::SessionDiffParams& params, Then<protocol::SessionDiffResult> done);
  // A worktree session's branch into its base, in the repository's main checkout (docs/worktrees.md).
  void merge(const protocol::SessionMergeParams& params, Then<protocol::SessionMergeResult> done);
  // Removes a worktree session's worktree (and its branch, if asked); the session stays, without a worktree.
  void remove_worktree(const protocol::SessionRemoveWorktreeParams& params, Then<protocol::SessionRemoveWorktreeResult> done);
  void send(protocol::SessionSendParams params, Session::SendDone done);
  void resume(const protocol::SessionResumeParams& params, Session::SendDone done);
  void cancel(const std::string& session_id, Then<bool> done);
  // The agent's own history (history.list, history.read) and making one of its sessions ours (session.import).
  // The agent's hooks read files on the engine's helper thread; `done` runs later on the reactor, always.
  void list_history(const protocol::HistoryListParams& params, Then<protocol::HistoryListResult> done);
  void read_history(const protocol::HistoryReadParams& params, Then<protocol::HistoryReadResult> done);
  // A cold session bound to the agent's session: its first start resumes it, or forks it when another session of
  // ours continues it (ConversationInUse for an agent that cannot fork). Stored with its run before `done`.
  void import_session(const protocol::SessionImportParams& params, Then<protocol::SessionInfo> done);
  // The first answer wins (later ones get AlreadyAnswered at once); `done` runs once the agent has the answer,
  // or with the typed error it refused it with (Unsupported: it takes no answers of that kind).
  void respond_permission(const protocol::PermissionRespondParams& params, std::optional<std::string> client_id, Done done);
  void respond_question(const protocol::QuestionRespondParams& params, std::optional<std::string> client_id, Done done);
  std::vector<protocol::RememberedRule> list_rules(const std::optional<std::string>& session_id,
                                                   const std::optional<std::string>& cwd) const;
  void remove_rule(const std::string& rule_id, Done done);
  // A rule a client puts in force for one session (rules.add): never stored, forgotten with the session.
  void add_session_rule(const std::string& session_id, protocol::PermissionRule rule, bool allow,
                        Then<protocol::RememberedRule> done);

  // Daemon shutdown: stops every agent gracefully and calls `done` once each has reported it is gone (so every
  // session stopping because of the shutdown has published session.state stopped), or when `limit` has passed,
  // whichever comes first. From then on the engine is sealed: sessions publish nothing more, so the caller's
  // daemon.shutdown is the last event clients see. Never blocks: `done` runs later on the io_context.
  void shut_down(std::chrono::milliseconds limit, std::function<void()> done);
  bool sealed() const { return m_sealed; }
  // How many sessions are held as Session objects: those used since the start and those that owe prompts.
  std::size_t sessions_in_memory() const { return m_sessions.size(); }

  // For a daemon that opens its store after constructing the engine; before anything is served.
  void set_persistence(SessionPersistence* persistence) { m_persistence = persistence; }
  // The daemon's file checkpoint store (docs/checkpoints.md), which must outlive the engine; null: none.
  void set_checkpoints(checkpoint::CheckpointStore* store) { m_checkpoints.set_store(store); }
  // Where sessions' own git worktrees are made (docs/worktrees.md), which must outlive the engine; null: none
  // (session.create with worktree is then Unsupported).
  void set_worktrees(worktree::WorktreeGit* worktrees) { m_worktrees = worktrees; }
  // Whether an attached client can answer permissions and questions (else the headless policy decides).
  bool can_ask_someone() const override { return m_answering_clients > 0; }
  // Where attach() reads the last event seq from (the egress); set by the daemon.
  void set_last_seq_source(std::function<std::uint64_t()> source) { m_last_seq = std::move(source); }

 private:
  // Each runtime's begin_discovery(): they run their probes once, whoever calls first.
  void begin_discovery();

  // SessionServices
  boost::asio::io_context& io() override { return m_io; }
  void publish(const std::string& session_id, protocol::EventPayload event) override;
  SessionPersistence* persistence() override { return m_persistence; }
  const adapters::AgentDescriptor* agent(const std::string& name) const override;
  std::optional<std::string> default_model(const std::string& agent) const override;
  bool stream_text() const override { return m_config.stream_text; }
  RequestBroker& requests() override { return m_broker; }
  TurnCheckpoints& checkpoints() override { return m_checkpoints; }
  std::optional<worktree::SetupCommand> worktree_setup(const std::string& repository) const override {
    return m_config.worktree_setup.for_repository(repository);
  }
  void models_reported(const std::string& agent, const std::vector<protocol::ModelInfo>& models) override;
  std::unique_ptr<adapters::AgentAdapter> take_prestarted(const std::string& agent, const adapters::StartOptions& options,
                                                          adapters::AdapterListener& listener) override;
  // RequestBroker::Host (publish and can_ask_someone above): a rule a client chose is in force at once, and
  // stored if it outlives the session (project, always).
  std::string remember_rule(protocol::RuleScope scope, const std::string& session_id, const std::string& cwd,
                            protocol::PermissionRule rule) override;

  // session.import once the agent's history has the session: finds who else continues it (a session in memory,
  // an import under way, then the store), then create_imported makes the session (`holder`: who continues the
  // conversation, in words, if anyone does).
  void bind_imported(const protocol::SessionImportParams& params, adapters::HistoryEntry history, Then<protocol::SessionInfo> done);
  void create_imported(const protocol::SessionImportParams& params, const adapters::HistoryEntry& history,
                       const std::optional<std::string>& holder, Then<protocol::SessionInfo> done);
  // The one place a Session is made (created, imported, forked, restored, read from the store). An id already in
  // memory is a bug of the caller's: the session there is kept (and returned), none is made.
  Session& add_session(StoredSession stored);
  // Stores a new session (with the agent conversation it is bound to, if any), then makes and announces it.
  void insert_new_session(StoredSession stored, std::optional<ConversationBinding> binding, Then<protocol::SessionInfo> done);
  // Calls `then` with the session, made from its stored row first if it is not in memory: at once for a session
  // in memory, else once the store answered, with UnknownSession if there is no such session (or StoreFailure).
  // Calls arriving while a session is read wait for that one read: one Session per id, whatever the timing.
  // Once shut_down began, a session not in memory is made no more: its callers get ShuttingDown.
  void with_session(const std::string& session_id, Then<Session*> then);
  // The session if it is in memory, else null: for a call's later steps, which began with with_session (null
  // then means it was deleted meanwhile).
  Session* loaded(const std::string& session_id);
  // session.list over the sessions in memory (an engine without persistence).
  protocol::SessionListResult list_in_memory(const protocol::SessionListParams& params,
                                             const std::optional<SessionListIndex::Position>& after) const;
  void list_stored(const protocol::SessionListParams& params, std::optional<SessionListIndex::Position> after,
                   Then<protocol::SessionListResult> done);
  void publish_rules_changed();
  // Runs `apply` on the session, publishes session.updated and stores the result; `done` gets the new info or
  // the error (an unknown session, what `apply` refused, or a storage failure: the change is then in effect
  // until the daemon restarts, and the caller is told it was not saved).
  // `apply` may complete later (a live agent taking a model or mode); it runs at once.
  void update(const std::string& session_id, const std::function<void(Session&, Done)>& apply, Then<protocol::SessionInfo> done);
  // Publishes session.updated for the change just applied and stores it.
  void updated(const std::string& session_id, const Then<protocol::SessionInfo>& done);
  // session.create with worktree: the worktree first (on the helper thread), then the session in it.
  void create_in_worktree(const protocol::SessionCreateParams& params, protocol::SessionInfo session,
                          SessionSettings settings, Then<protocol::SessionInfo> done);
  void diff_against_base(const Session& session, const protocol::SessionDiffParams& params, Then<protocol::SessionDiffResult> done);
  // The steps of the calls above once with_session has the session in memory.
  void delete_loaded(Session& session, Done done, std::optional<protocol::SessionDeleteParamsWorktree> worktree);
  protocol::SessionAttachResult attach_result(const Session& session) const;
  void fork_loaded(Session& from, const protocol::SessionForkParams& params, Then<protocol::SessionInfo> done);
  void rewind_loaded(Session& target, const protocol::SessionRewindParams& params, Then<protocol::SessionRewindResult> done);
  void diff_loaded(Session& target, const protocol::SessionDiffParams& params, Then<protocol::SessionDiffResult> done);
  void merge_loaded(Session& session, const protocol::SessionMergeParams& params, Then<protocol::SessionMergeResult> done);
  void remove_worktree_loaded(Session& session, const protocol::SessionRemoveWorktreeParams& params,
                              Then<protocol::SessionRemoveWorktreeResult> done);
  // Runs blocking `work` on the helper thread, then `done` with its outcome on the reactor. The io_context is
  // kept from running out of work meanwhile, so `done` always runs (a reply is never dropped). `what` names the
  // work ("reading the agent's history") for the error an exception out of it becomes.
  template <class T>
  void off_reactor(std::string what, std::function<Outcome<T>()> work, Then<T> done);

  boost::asio::io_context& m_io;
  bus::EventBus& m_bus;  // publish() is the only one that writes to it: sealed by the shutdown
  std::vector<adapters::AgentDescriptor> m_agents;
  EngineConfig m_config;
  SessionPersistence* m_persistence;
  RuleBook m_rules;
  worktree::WorktreeGit* m_worktrees = nullptr;
  TurnCheckpoints m_checkpoints;
  RequestBroker m_broker;  // before the sessions: they cancel their requests as they go
  // The sessions in memory: created, imported or forked by this daemon, restored owing prompts, or read from the
  // store by a call that needed one (with_session). A daemon whose store holds a hundred thousand sessions (one
  // per `switchboard run`, say) starts with none of those, and session.list pages through the store.
  std::map<std::string, std::unique_ptr<Session>> m_sessions;
  // Sessions being read from the store, with the calls waiting for each (with_session).
  std::map<std::string, std::shared_ptr<std::vector<Then<Session*>>>> m_loading;
  // By agent: the models its sessions last reported while this daemon runs (not stored: an agent's offer can
  // change between runs, and it reports it again when it next starts).
  std::map<std::string, std::vector<protocol::ModelInfo>> m_agent_models;
  SessionListIndex m_list_order;  // m_sessions in session.list's order (what it lists without persistence)
  std::set<std::string> m_answering_client_ids;
  // session.import calls between finding the agent's session and storing ours: "<agent>\n<provider session id>".
  std::multiset<std::string> m_imports_in_flight;
  int m_answering_clients = 0;
  std::function<std::uint64_t()> m_last_seq;
  // From shut_down's first step: no session is read from the store any more (one made then would miss the
  // stop the others were asked for, start an agent the shutdown never waits for, and lose the prompt it took).
  bool m_draining = false;
  bool m_sealed = false;
  std::unique_ptr<PrestartedAgent> m_prestarted;  // prestart(), until a session takes it or the shutdown
  bus::Subscription m_attached;
  bus::Subscription m_detached;
  // Blocking file reads (agents' history hooks); one thread, created on first use, joined by the destructor.
  std::unique_ptr<boost::asio::thread_pool> m_helper;
  // Work finishing on the helper thread holds a weak_ptr to this, so an engine destroyed meanwhile is left alone.
  std::shared_ptr<Engine*> m_self = std::make_shared<Engine*>(this);
};

}  // namespace switchboard::engine
