#include "engine/TurnCheckpoints.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

namespace switchboard::engine {

using protocol::ErrorCode;

namespace {

EngineError no_store() {
  return EngineError{ErrorCode::CheckpointUnavailable,
                     "this daemon keeps no file checkpoints (it runs without a data directory)"};
}

EngineError no_checkpoint(const std::string& session_id, const std::string& turn_id) {
  return EngineError{ErrorCode::CheckpointUnavailable,
                     "session " + session_id + " has no file checkpoint for turn " + turn_id.substr(0, 100) +
                         " (no such turn, a turn from before checkpoints were kept, or its working tree could not be read)"};
}

}  // namespace

EngineError checkpoint_error(const checkpoint::CheckpointError& error) {
  std::string message = "file checkpoints: " + error.message;
  // A tree left partly restored can be put back as it was: the client must learn from which checkpoint.
  if (error.code == checkpoint::CheckpointError::Code::RestoreIncomplete && !error.before_id.empty() &&
      message.find(error.before_id) == std::string::npos) {
    message += " (the tree before the restore is checkpoint " + error.before_id + ")";
  }
  return EngineError{ErrorCode::CheckpointUnavailable, std::move(message)};
}

void TurnCheckpoints::apply_line(Record& record, const std::string& line) {
  // "start <turn> <checkpoint>" or "end <turn> <checkpoint>"
  const auto first = line.find(' ');
  const auto second = first == std::string::npos ? std::string::npos : line.find(' ', first + 1);
  if (second == std::string::npos) return;
  const auto kind = line.substr(0, first);
  auto turn_id = line.substr(first + 1, second - first - 1);
  auto checkpoint_id = line.substr(second + 1);
  if (kind == "start") {
    if (std::none_of(record.marks.begin(), record.marks.end(), [&](const Mark& m) { return m.turn_id == turn_id; }))
      record.marks.push_back(Mark{std::move(turn_id), std::move(checkpoint_id), std::nullopt});
  } else if (kind == "end") {
    for (auto& mark : record.marks) {
      if (mark.turn_id == turn_id) mark.end = std::move(checkpoint_id);
    }
  }
}

TurnCheckpoints::Record* TurnCheckpoints::record_of(const std::string& session_id) {
  const auto found = m_records.find(session_id);
  return found == m_records.end() ? nullptr : &found->second;
}

void TurnCheckpoints::with_record(const std::string& session_id, std::function<void(Record&)> then) {
  auto& record = m_records[session_id];
  if (record.loaded || m_store == nullptr) {
    record.loaded = true;
    return then(record);
  }
  record.waiters.push_back(std::move(then));
  if (record.loading) return;
  record.loading = true;
  m_store->read_log(session_id, [weak = std::weak_ptr<TurnCheckpoints*>(m_self), session_id](
                                    checkpoint::CheckpointResult<std::vector<std::string>> lines) {
    auto self = weak.lock();
    if (!self) return;
    const auto found = (*self)->m_records.find(session_id);
    if (found == (*self)->m_records.end()) return;  // forgotten meanwhile: forget() answered the waiters
    auto& current = found->second;
    // Turns that started while the log was read are in memory already, and come after what the log holds.
    Record loaded;
    if (lines) {
      for (const auto& line : *lines) apply_line(loaded, line);
    } else {
      spdlog::warn("session {}: its file checkpoints' record cannot be read: {}", session_id, lines.error().message);
    }
    for (auto& mark : current.marks) {
      if (std::none_of(loaded.marks.begin(), loaded.marks.end(), [&](const Mark& m) { return m.turn_id == mark.turn_id; }))
        loaded.marks.push_back(std::move(mark));
    }
    current.marks = std::move(loaded.marks);
    current.loaded = true;
    current.loading = false;
    auto waiters = std::exchange(current.waiters, {});
    for (auto& waiter : waiters) waiter(current);
  });
}

void TurnCheckpoints::turn_starting(const std::string& session_id, const std::string& cwd, const std::string& turn_id,
                                    std::function<void()> ready) {
  if (m_store == nullptr) return ready();
  m_records[session_id];  // the record the checkpoint goes to: gone when it comes if the session was deleted meanwhile
  m_store->snapshot(cwd, [weak = std::weak_ptr<TurnCheckpoints*>(m_self), session_id, turn_id,
                          ready = std::move(ready)](checkpoint::CheckpointResult<checkpoint::Snapshot> taken) {
    auto self = weak.lock();
    Record* record = self ? (*self)->record_of(session_id) : nullptr;
    if (record != nullptr && taken) {
      TurnCheckpoints& checkpoints = **self;
      if (taken->skipped_total > 0) {
        spdlog::info("session {}: the checkpoint of turn {} left out {} file(s) (over the size or count limits), e.g. {}",
                     session_id, turn_id, taken->skipped_total, taken->skipped.front());
      }
      // In memory at once (a diff right after the turn starts sees it), and in the log for after a restart.
      apply_line(*record, "start " + turn_id + " " + taken->id);
      checkpoints.m_store->append_log(session_id, "start " + turn_id + " " + taken->id);
    } else if (!taken) {
      spdlog::warn("session {}: turn {} starts without a file checkpoint: {}", session_id, turn_id, taken.error().message);
    }
    ready();
  });
}

void TurnCheckpoints::diff(const std::string& session_id, const std::string& cwd, const std::optional<std::string>& turn_id,
                           Then<protocol::SessionDiffResult> done) {
  if (m_store == nullptr) return done(no_store());
  with_record(session_id, [this, session_id, cwd, turn_id, done = std::move(done)](Record& record) {
    if (record.marks.empty() && !turn_id) return done(protocol::SessionDiffResult{});  // no turn yet: no change
    std::string from;
    std::optional<std::string> to;
    if (!turn_id) {
      from = record.marks.front().start;
    } else {
      const auto at = std::find_if(record.marks.begin(), record.marks.end(), [&](const Mark& m) { return m.turn_id == *turn_id; });
      if (at == record.marks.end()) return done(no_checkpoint(session_id, *turn_id));
      from = at->start;
      if (at->end) {
        to = at->end;
      } else if (std::next(at) != record.marks.end()) {
        to = std::next(at)->start;
      }
    }
    m_store->diff(cwd, from, to, [done](checkpoint::CheckpointResult<checkpoint::TreeChanges> changes) {
      if (!changes) return done(checkpoint_error(changes.error()));
      protocol::SessionDiffResult result;
      result.files = std::move(changes->files);
      if (!changes->skipped.empty()) result.skipped = std::move(changes->skipped);
      done(std::move(result));
    });
  });
}

void TurnCheckpoints::check_restorable(const std::string& session_id, const std::string& turn_id,
                                       std::function<void(std::optional<EngineError>)> done) {
  if (m_store == nullptr) return done(no_store());
  with_record(session_id, [session_id, turn_id, done = std::move(done)](Record& record) {
    const bool known = std::any_of(record.marks.begin(), record.marks.end(), [&](const Mark& m) { return m.turn_id == turn_id; });
    done(known ? std::nullopt : std::optional<EngineError>(no_checkpoint(session_id, turn_id)));
  });
}

void TurnCheckpoints::restore(const std::string& session_id, const std::string& cwd, const std::string& turn_id,
                              Then<checkpoint::Restored> done) {
  if (m_store == nullptr) return done(no_store());
  with_record(session_id, [this, session_id, cwd, turn_id, done = std::move(done)](Record& record) {
    const auto at = std::find_if(record.marks.begin(), record.marks.end(), [&](const Mark& m) { return m.turn_id == turn_id; });
    if (at == record.marks.end()) return done(no_checkpoint(session_id, turn_id));
    m_store->restore(cwd, at->start, [weak = std::weak_ptr<TurnCheckpoints*>(m_self), session_id,
                                      done](checkpoint::CheckpointResult<checkpoint::Restored> restored) {
      // The checkpoint of the tree just before the restore, also when the restore then failed part way.
      const std::string before_id = restored ? restored->before_id : restored.error().before_id;
      const auto self = weak.lock();
      Record* kept = self ? (*self)->record_of(session_id) : nullptr;
      if (kept != nullptr && !before_id.empty()) {  // not if the session was deleted meanwhile
        // The tree as the session's turns left it: the latest turn's changes stay visible after the rewind.
        auto& marks = kept->marks;
        if (!marks.empty() && !marks.back().end) {
          const std::string line = "end " + marks.back().turn_id + " " + before_id;
          apply_line(*kept, line);
          (*self)->m_store->append_log(session_id, line);
        }
      }
      if (!restored) return done(checkpoint_error(restored.error()));
      done(std::move(*restored));
    });
  });
}

void TurnCheckpoints::forget(const std::string& session_id) {
  // A checkpoint, a log read or a restore still under way finds no record when it completes, and writes none.
  // Whoever waits for the log is answered now, as for a session without checkpoints.
  std::vector<std::function<void(Record&)>> waiters;
  if (const auto found = m_records.find(session_id); found != m_records.end()) {
    waiters = std::move(found->second.waiters);
    m_records.erase(found);
  }
  Record none;
  none.loaded = true;
  for (auto& waiter : waiters) waiter(none);
  if (m_store != nullptr) m_store->remove_log(session_id);
}

}  // namespace switchboard::engine
