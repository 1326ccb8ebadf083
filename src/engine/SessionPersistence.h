#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/EngineError.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// The prompts a session still owes the user: the one whose turn is running (its queueId is the turn id) and the
// ones queued behind it. Saved whenever it changes and cleared when the session goes idle with an empty queue,
// so that after a crash or restart nothing the user sent is lost: the session comes back `interrupted`.
struct OutstandingWork {
  std::optional<protocol::QueuedPrompt> running;
  std::vector<protocol::QueuedPrompt> queued;

  bool empty() const { return !running && queued.empty(); }
};

// One finished exchange of a session as the daemon recorded it: what the user sent and the agent's final answer.
struct Exchange {
  std::string prompt;
  std::string answer;
  std::string turn_id;
};

// Which of its agent's own conversations a session continues: what its newest run names.
struct ConversationBinding {
  std::string provider_session_id;
  // The session is to continue a fork of that conversation, made when its agent next starts (an imported
  // conversation another session of ours continues, or session.fork). Cleared by the run the fork's own id is
  // recorded as.
  bool fork = false;
  // With fork: the agent's reference of the last turn the copy keeps (StartOptions::fork_through_turn_ref).
  std::optional<std::string> fork_through_turn_ref{};
};

// What a session keeps besides its info, stored with it: what its agent is started with every time.
struct SessionSettings {
  // As given at session.create (or copied by session.fork), env and headers included; session info shows only
  // their names, transports and status.
  std::vector<protocol::McpServer> mcp_servers;
  // The values chosen with session.setOption, by option id (StartOptions::options at every start).
  std::map<std::string, std::string> option_values;
};

// A session as the store keeps it.
struct StoredSession {
  protocol::SessionInfo info;
  SessionSettings settings;
};

// One ended turn of a session: the agent's reference for it, and whether a rewind undid it.
struct TurnRecord {
  std::string turn_id;
  std::optional<std::string> native_ref;
  bool rewound = false;
};

// What the engine reloads at startup: only what must be in memory before anything is served. Every other stored
// session stays in the store until a call needs it (SessionPersistence::load_session).
struct PersistedState {
  std::vector<StoredSession> sessions;                 // the sessions that owe prompts (those in `outstanding`)
  std::map<std::string, OutstandingWork> outstanding;  // by session id
  std::vector<protocol::RememberedRule> rules;         // project and always rules (session rules die with the daemon)
  std::vector<protocol::Worktree> worktrees;           // those of every stored session that has one
};

// One page of session.list as the store holds it: newest first (createdAt, then session id, both descending),
// after `after` if given, filtered as session.list filters.
struct StoredSessionQuery {
  std::optional<std::string> agent;
  std::optional<std::string> cwd;
  std::optional<std::string> text;  // in the title or the directory, ASCII letters matching either case
  bool archived = false;
  std::size_t limit = 50;
  std::optional<std::pair<std::int64_t, std::string>> after;  // (createdAt, session id) of the previous page's last
};

struct StoredSessionPage {
  std::vector<StoredSession> sessions;
  bool more = false;  // another session matches after the last one
};

// What the engine needs from durable storage. The engine holds only the sessions something uses (and those that
// owe prompts); it writes through this interface, reads the rest a session or a page at a time (load_session,
// list_sessions), and reads a cold session's agent session id when it resumes.
//
// Calls are applied in the order they are made. Callbacks run later on the io_context thread. Changes a client
// asked for (create, rename, delete, rules) wait for `done` so a storage failure reaches that caller as
// StoreFailure; bookkeeping the engine does on its own (state, runs, outstanding work) is fire-and-forget and
// failures are logged by the implementation.
class SessionPersistence {
 public:
  using Done = std::function<void(std::optional<EngineError>)>;

  virtual ~SessionPersistence() = default;

  // With a binding (an imported or forked session): inserted together with a run bound to the agent's
  // conversation. All or nothing: `done` gets an error (and nothing stays stored) unless both were stored.
  virtual void insert_session(const StoredSession& session, const std::optional<ConversationBinding>& binding,
                              Done done) = 0;
  // Writes what may change of a session: its info's title, model, mode, archived, state, plan and usage, and
  // its chosen option values.
  virtual void update_session(const StoredSession& session, Done done) = 0;
  virtual void delete_session(const std::string& session_id, Done done) = 0;
  // The stored session, nullopt if there is none; a storage failure is StoreFailure.
  virtual void load_session(const std::string& session_id, std::function<void(Outcome<std::optional<StoredSession>>)> done) = 0;
  // A page of the stored sessions (session.list); a storage failure is StoreFailure.
  virtual void list_sessions(const StoredSessionQuery& query, std::function<void(Outcome<StoredSessionPage>)> done) = 0;

  // A run binds our session to the agent's own session id (what resuming needs).
  virtual void record_run(const std::string& session_id, const std::string& provider_session_id) = 0;
  // What the session's newest run binds it to, if it has a run.
  virtual void latest_run(const std::string& session_id, std::function<void(std::optional<ConversationBinding>)> done) = 0;
  // The stored session of `agent`, if any, that continues the agent's conversation `provider_session_id` (its
  // newest run names it, and not as a fork still to make); a storage failure is StoreFailure.
  virtual void session_continuing(const std::string& agent, const std::string& provider_session_id,
                                  std::function<void(Outcome<std::optional<std::string>>)> done) = 0;

  // The exchanges of the session's conversation as the event log recorded them (each ended turn's prompt and
  // final text), oldest first: a fork's begin with its source's through the fork's turn; without the turns a
  // rewind of the conversation undid; empty when nothing is stored. Used to seed a fresh agent conversation when
  // the agent's own is gone.
  virtual void exchanges(const std::string& session_id, std::function<void(std::vector<Exchange>)> done) = 0;

  // An ended turn, after the session's earlier ones (fire-and-forget).
  virtual void record_turn(const std::string& session_id, const TurnRecord& turn) = 0;
  // The session's ended turns, oldest first (empty when none is stored, or the store cannot be read: logged).
  virtual void turns(const std::string& session_id, std::function<void(std::vector<TurnRecord>)> done) = 0;
  virtual void mark_rewound(const std::string& session_id, const std::vector<std::string>& turn_ids, Done done) = 0;

  // Replaces the session's outstanding work; an empty one clears it.
  virtual void save_outstanding(const std::string& session_id, const OutstandingWork& work) = 0;

  virtual void add_rule(const protocol::RememberedRule& rule, Done done) = 0;
  virtual void remove_rule(const std::string& rule_id, Done done) = 0;
};

}  // namespace switchboard::engine
