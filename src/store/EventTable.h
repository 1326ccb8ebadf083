#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/StoreError.h"
#include "switchboard/bus/EncodedEvent.h"

namespace SQLite {
class Database;
}

namespace switchboard::store {

// A request to drop the message.delta and tool.output rows of one turn, to be applied once the log has committed every event
// up to through_seq (the last seq it had seen when the request was made).
struct Compaction {
  std::string session_id;
  std::string turn_id;
  std::uint64_t through_seq = 0;
};

// A range of seqs, both ends included.
struct SeqRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  bool operator==(const SeqRange&) const = default;
};

struct AppendOutcome {
  std::uint64_t committed_through = 0;  // the highest seq now durable
  std::vector<std::size_t> compacted;   // rows deleted by each compaction applied with the batch
  // Filled by the event log's commit job after its retention step (see EventLog).
  std::uint64_t excess_rows = 0;  // rows still over max_events
  std::optional<StoreError> trim_error;
};

// The event log's SQL: append a batch, read ranges, trim to the retention cap, compact a turn. Used on the
// store thread only, inside StoreWorker jobs (its methods throw SQLite::Exception, which the worker turns
// into StoreError). It also keeps the two figures the log needs without scanning: the high-water seq and the
// row count.
class EventTable {
 public:
  // Reads the high-water seq (max of the stored mark and max(seq)), the row count, the seq reservation and
  // the lost ranges. Once, at open.
  void load(SQLite::Database& db);

  std::uint64_t high_water() const { return m_high_water; }

  // Seq reservation (docs/persistence.md): the egress hands out only seqs at or below a mark that is durable
  // first, so a crash cannot make a seq some client saw name another event later.
  std::uint64_t reserved() const { return m_reserved; }
  // Seqs reserved by an earlier run but not stored: the run ended without a clean close (kill -9, power loss),
  // and clients may have received events under them that are gone. In seq order; never changed after open.
  const std::vector<SeqRange>& lost() const { return m_lost; }
  // At open, in one transaction: records (high water, reserved] as lost if an earlier run did not close
  // cleanly, and reserves seqs through (that range's end) + `block`. Returns the seq to continue after.
  std::uint64_t recover_and_reserve(SQLite::Database& db, std::uint64_t block);
  // Raises the reservation to `through` (never lowers it).
  void reserve_through(SQLite::Database& db, std::uint64_t through);
  // At a clean close, once every seq handed out is stored: lowers the reservation to `handed_out` (or the
  // high water, if higher), so the next run continues right after it and reports nothing lost.
  void release_reservation(SQLite::Database& db, std::uint64_t handed_out);

  enum class Duplicates { Fail, Ignore };
  // One transaction: inserts `events` (seq order), raises the high-water mark and each session's last_seq,
  // then applies `compactions`. Duplicates::Ignore is for the final hand-over at close, which may repeat a
  // batch whose outcome is unknown; otherwise a seq that exists already is a Conflict (seqs are never reused).
  AppendOutcome append(SQLite::Database& db, std::span<const bus::EncodedEventPtr> events,
                       std::span<const Compaction> compactions, Duplicates duplicates);

  // Deletes the oldest rows beyond `max_rows`, at most `chunk` of them, in one transaction of their own (never
  // one huge DELETE: each call is bounded). Returns how many rows are still over the cap.
  std::uint64_t trim(SQLite::Database& db, std::uint64_t max_rows, std::uint64_t chunk);

  // Deletes the message.delta and tool.output rows of one turn and marks the turn's remaining rows compacted, in one
  // transaction. Returns the rows deleted.
  std::size_t compact(SQLite::Database& db, const Compaction& compaction);

  // Stored events with seq > after_seq, in seq order, at most `limit`.
  std::vector<bus::EncodedEventPtr> read_after(SQLite::Database& db, std::uint64_t after_seq, std::size_t limit);
  // The same, restricted to one session's events.
  std::vector<bus::EncodedEventPtr> read_session(SQLite::Database& db, const std::string& session_id,
                                                 std::uint64_t after_seq, std::size_t limit);
  // One session's stored events with after_seq < seq < before_seq, the newest `limit` of them, in seq order: read
  // backward on the (session_id, seq) index, so the end of a long session costs what its first page does.
  std::vector<bus::EncodedEventPtr> read_session_before(SQLite::Database& db, const std::string& session_id,
                                                        std::uint64_t after_seq, std::uint64_t before_seq,
                                                        std::size_t limit);

 private:
  std::size_t compact_in_transaction(SQLite::Database& db, const Compaction& compaction);
  void remember_turn(const std::string& session_id, const std::string& turn_id, std::uint64_t seq);

  std::uint64_t m_high_water = 0;
  std::uint64_t m_rows = 0;
  std::uint64_t m_reserved = 0;
  std::vector<SeqRange> m_lost;
  bool m_warned_unknown_type = false;
  // The first seq of recent turns, keyed by session id + '\x1f' + turn id, so compaction scans the session's
  // index from there rather than from its first event. Bounded: the oldest entries are forgotten (their
  // compaction then scans the whole session, as it does after a restart).
  std::unordered_map<std::string, std::uint64_t> m_turn_first_seq;
  std::deque<std::string> m_turn_order;
  // Each recently active session's current turn: almost every event continues its session's turn, and this
  // check (a couple of short string compares) spares it building a key and hashing it.
  struct CurrentTurn {
    std::string session_id;
    std::string turn_id;
  };
  std::vector<CurrentTurn> m_current_turns;
};

}  // namespace switchboard::store
