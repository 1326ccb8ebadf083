#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/EngineError.h"
#include "switchboard/checkpoint/CheckpointStore.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// The daemon's file checkpoints as the engine uses them (docs/checkpoints.md): the working tree is checkpointed
// when each turn starts, before its prompt reaches the agent, so what any turn changed (its agent's edits and its
// shell commands alike) is the difference between its checkpoint and the next one, and a rewind can put the tree
// back as it was before a turn.
//
// Which checkpoint each turn started from is kept per session in the store's log (CheckpointStore::append_log),
// so it outlives the daemon: "start <turn> <checkpoint>", and "end <turn> <checkpoint>" for the tree as the last
// turn left it, taken just before a restore. Without a store (an ephemeral daemon, engine tests) turns start at
// once and diff and rewind of files answer CheckpointUnavailable. On the io_context thread.
class TurnCheckpoints {
 public:
  template <class T>
  using Then = std::function<void(Outcome<T>)>;

  void set_store(checkpoint::CheckpointStore* store) { m_store = store; }
  bool enabled() const { return m_store != nullptr; }

  // Checkpoints `cwd` for the turn, then calls `ready` (at once without a store). A checkpoint that fails is
  // logged and the turn goes on: a broken store never stops an agent's turn; the turn then has no checkpoint.
  void turn_starting(const std::string& session_id, const std::string& cwd, const std::string& turn_id,
                     std::function<void()> ready);
  // session.diff: one turn's changes (its checkpoint against the next turn's, or against the tree now for the
  // latest turn), or with no turn the whole session's (the first turn's checkpoint against the tree now).
  void diff(const std::string& session_id, const std::string& cwd, const std::optional<std::string>& turn_id,
            Then<protocol::SessionDiffResult> done);
  // Whether `turn_id` has a checkpoint to restore (CheckpointUnavailable naming why not).
  void check_restorable(const std::string& session_id, const std::string& turn_id, std::function<void(std::optional<EngineError>)> done);
  // Restores the tree to the checkpoint `turn_id` started from; the tree just before is checkpointed first (the
  // result's before_id), and recorded as where the session's latest turn ended.
  void restore(const std::string& session_id, const std::string& cwd, const std::string& turn_id,
               Then<checkpoint::Restored> done);
  // A deleted session's record goes (its checkpoints stay in the store, shared with other sessions of its tree).
  void forget(const std::string& session_id);

 private:
  struct Mark {
    std::string turn_id;
    std::string start;               // the checkpoint the turn started from
    std::optional<std::string> end;  // the tree as the turn left it, when a restore took it before the next turn
  };
  struct Record {
    bool loaded = false;
    bool loading = false;
    std::vector<Mark> marks;  // in the order the turns started
    std::vector<std::function<void(Record&)>> waiters;  // answered once the log is read
  };
  // Runs `then` once the session's record is read from the store's log.
  void with_record(const std::string& session_id, std::function<void(Record&)> then);
  static void apply_line(Record& record, const std::string& line);
  // The session's record, or null once it is forgotten (or was never made).
  Record* record_of(const std::string& session_id);

  checkpoint::CheckpointStore* m_store = nullptr;
  std::map<std::string, Record> m_records;
  // The store's completions hold a weak_ptr to this: an engine destroyed meanwhile is left alone.
  std::shared_ptr<TurnCheckpoints*> m_self = std::make_shared<TurnCheckpoints*>(this);
};

// How a checkpoint error reaches a client: the store's own failures are CheckpointUnavailable; an unknown
// checkpoint too (the store lost it); a working directory that is gone is CheckpointUnavailable with its reason.
EngineError checkpoint_error(const checkpoint::CheckpointError& error);

}  // namespace switchboard::engine
