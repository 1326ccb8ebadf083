#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/StoreError.h"
#include "store/StoreRecords.h"

namespace switchboard::store {

class StoreWorker;

// Asynchronous access to sessions and the rows that belong to a session (its runs, its interrupted turn).
// Every call queues a job on the StoreWorker and returns at once; the callback runs later on the reactor thread
// with the value or a StoreError (NotFound, Conflict, Io, Corrupt, Busy, Full). Calls are applied in the order
// they are made. Owned by Store; holds no state of its own.
class SessionStore {
 public:
  explicit SessionStore(StoreWorker& worker) : m_worker(worker) {}

  // Conflict if the id exists. Gets the stored row.
  void insert_session(SessionRecord session, StoreCallback<SessionRecord> done);
  // NotFound if there is no such session. Gets the row as updated.
  void update_session(std::string id, SessionUpdate update, StoreCallback<SessionRecord> done);
  void get_session(std::string id, StoreCallback<SessionRecord> done);
  // Newest first, filtered, one page at a time (pass the page's `next` back as `query.after`).
  void list_sessions(SessionQuery query, StoreCallback<SessionPage> done);
  // The worktree column (JSON) of every session that has one; reads only those rows (a partial index).
  void list_worktrees(StoreCallback<std::vector<std::string>> done);
  // NotFound if there is no such session. Its runs, interrupted turn and search index rows go with it; its
  // events stay in the event log (they are part of the global seq stream) until retention removes them.
  void delete_session(std::string id, StoreCallback<void> done);

  // NotFound if the session does not exist. Gets the run with its id.
  void add_run(std::string session_id, std::string provider_session_id, bool fork, std::int64_t started_at,
               StoreCallback<RunRecord> done);
  // The same, for a fork that keeps the conversation only through the turn `fork_through` names.
  void add_run(std::string session_id, std::string provider_session_id, bool fork,
               std::optional<std::string> fork_through, std::int64_t started_at, StoreCallback<RunRecord> done);
  // NotFound if there is no such run.
  void end_run(std::int64_t run_id, std::int64_t ended_at, StoreCallback<RunRecord> done);
  // Oldest first.
  void list_runs(std::string session_id, StoreCallback<std::vector<RunRecord>> done);
  // The session of `agent` whose newest run is `provider_session_id` (not a fork still to make), if any: the one
  // that continues that conversation of the agent's. Reads every run (no index on provider ids: an import asks,
  // rarely; every session start would pay for the index).
  void find_continuing_session(std::string agent, std::string provider_session_id,
                               StoreCallback<std::optional<std::string>> done);

  // Appends an ended turn to the session's turns (after the ones stored). NotFound if the session does not exist.
  void add_turn(std::string session_id, TurnRow turn, StoreCallback<void> done);
  // The session's turns, oldest first.
  void list_turns(std::string session_id, StoreCallback<std::vector<TurnRow>> done);
  // Marks those turns of the session rewound (unknown ids are left alone).
  void mark_turns_rewound(std::string session_id, std::vector<std::string> turn_ids, StoreCallback<void> done);

  // Replaces the session's interrupted turn, if any. NotFound if the session does not exist.
  void mark_interrupted(InterruptedTurn turn, StoreCallback<void> done);
  // Oldest interruption first.
  void list_interrupted(StoreCallback<std::vector<InterruptedTurn>> done);
  // Idempotent: clearing a session without an interrupted turn succeeds.
  void clear_interrupted(std::string session_id, StoreCallback<void> done);

 private:
  StoreWorker& m_worker;
};

}  // namespace switchboard::store
