#include "store/EventTable.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <spdlog/spdlog.h>

#include "store/EventFields.h"
#include "store/SearchIndex.h"

namespace switchboard::store {
namespace {

constexpr const char* kHighWaterKey = "events.high_water_seq";
constexpr const char* kReservedKey = "events.reserved_seq";
// The number of rows in the events table, written in every transaction that adds or deletes rows, so a start
// reads one row instead of counting them (count(*) of a million events: 50 ms from the page cache, 0.8 s from
// disk). Absent in a file from before it: counted once, then kept.
constexpr const char* kRowsKey = "events.rows";
constexpr std::size_t kRememberedTurns = 4096;
constexpr std::size_t kCurrentTurnSessions = 32;

std::string turn_key(const std::string& session_id, const std::string& turn_id) {
  std::string key;
  key.reserve(session_id.size() + 1 + turn_id.size());
  key.append(session_id).append(1, '\x1f').append(turn_id);
  return key;
}

std::int64_t as_sql(std::uint64_t value) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(value, std::numeric_limits<std::int64_t>::max()));
}

void write_rows(SQLite::Database& db, std::uint64_t rows) {
  SQLite::Statement mark(db,
                         "INSERT INTO store_meta(key, value) VALUES (?1, ?2) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  mark.bind(1, kRowsKey);
  mark.bind(2, as_sql(rows));
  mark.exec();
}

std::int64_t limit_as_sql(std::size_t limit) {
  return static_cast<std::int64_t>(std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max()));
}

}  // namespace

void EventTable::load(SQLite::Database& db) {
  SQLite::Statement mark(db, "SELECT value FROM store_meta WHERE key = ?");
  mark.bind(1, kHighWaterKey);
  const std::int64_t stored = mark.executeStep() ? mark.getColumn(0).getInt64() : 0;
  const std::int64_t max_seq = db.execAndGet("SELECT coalesce(max(seq), 0) FROM events").getInt64();
  m_high_water = static_cast<std::uint64_t>(std::max(stored, max_seq));
  SQLite::Statement rows(db, "SELECT value FROM store_meta WHERE key = ?");
  rows.bind(1, kRowsKey);
  if (rows.executeStep()) {
    m_rows = static_cast<std::uint64_t>(rows.getColumn(0).getInt64());
  } else {
    m_rows = static_cast<std::uint64_t>(db.execAndGet("SELECT count(*) FROM events").getInt64());
    write_rows(db, m_rows);
  }
  SQLite::Statement reserved(db, "SELECT value FROM store_meta WHERE key = ?");
  reserved.bind(1, kReservedKey);
  // A file from before reservations (or never used) has none: nothing beyond the high water was handed out.
  m_reserved = reserved.executeStep() ? static_cast<std::uint64_t>(reserved.getColumn(0).getInt64()) : 0;
  m_lost.clear();
  SQLite::Statement lost(db, "SELECT first_seq, last_seq FROM lost_events ORDER BY first_seq");
  while (lost.executeStep()) {
    m_lost.push_back(SeqRange{static_cast<std::uint64_t>(lost.getColumn(0).getInt64()),
                              static_cast<std::uint64_t>(lost.getColumn(1).getInt64())});
  }
}

namespace {

void write_reserved(SQLite::Database& db, std::uint64_t value) {
  SQLite::Statement mark(db,
                         "INSERT INTO store_meta(key, value) VALUES (?1, ?2) "
                         "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  mark.bind(1, kReservedKey);
  mark.bind(2, as_sql(value));
  mark.exec();
}

}  // namespace

std::uint64_t EventTable::recover_and_reserve(SQLite::Database& db, std::uint64_t block) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  std::vector<SeqRange> lost = m_lost;
  if (m_reserved > m_high_water) {
    // The last run handed out seqs up to m_reserved at most, and stored only up to m_high_water: whatever it
    // delivered in between is gone. Recorded, so every later replay through this range says so.
    const SeqRange range{m_high_water + 1, m_reserved};
    // A run killed before it stored anything leaves the previous lost range inside this one: it is replaced.
    SQLite::Statement subsumed(db, "DELETE FROM lost_events WHERE first_seq >= ?");
    subsumed.bind(1, as_sql(range.first));
    subsumed.exec();
    std::erase_if(lost, [&range](const SeqRange& earlier) { return earlier.first >= range.first; });
    SQLite::Statement insert(db, "INSERT INTO lost_events(first_seq, last_seq) VALUES (?, ?)");
    insert.bind(1, as_sql(range.first));
    insert.bind(2, as_sql(range.last));
    insert.exec();
    lost.push_back(range);
  }
  const std::uint64_t continue_after = std::max(m_high_water, m_reserved);
  const std::uint64_t reserved = continue_after + block;
  write_reserved(db, reserved);
  transaction.commit();
  m_lost = std::move(lost);
  m_reserved = reserved;
  return continue_after;
}

void EventTable::reserve_through(SQLite::Database& db, std::uint64_t through) {
  if (through <= m_reserved) return;
  write_reserved(db, through);  // one statement: its own transaction
  m_reserved = through;
}

void EventTable::release_reservation(SQLite::Database& db, std::uint64_t handed_out) {
  const std::uint64_t value = std::max(handed_out, m_high_water);
  if (value >= m_reserved) return;
  write_reserved(db, value);
  m_reserved = value;
}

AppendOutcome EventTable::append(SQLite::Database& db, std::span<const bus::EncodedEventPtr> events,
                                 std::span<const Compaction> compactions, Duplicates duplicates) {
  AppendOutcome outcome;
  std::uint64_t high_water = m_high_water;
  std::uint64_t inserted = 0;
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  if (!events.empty()) {
    SQLite::Statement insert(db,
                             duplicates == Duplicates::Fail
                                 ? "INSERT INTO events(seq, session_id, type, json, turn_id) VALUES (?, ?, ?, ?, ?)"
                                 : "INSERT INTO events(seq, session_id, type, json, turn_id) VALUES (?, ?, ?, ?, ?) "
                                   "ON CONFLICT(seq) DO NOTHING");
    // Per session, the highest seq of this batch (a batch spans few sessions: a linear scan beats a map).
    std::vector<std::pair<const std::string*, std::uint64_t>> session_last;
    for (const bus::EncodedEventPtr& event : events) {
      insert.bind(1, as_sql(event->seq));
      if (event->session_id.empty())
        insert.bind(2);
      else
        insert.bindNoCopy(2, event->session_id);
      insert.bindNoCopy(3, event_type_name(event->kind));
      insert.bindNoCopy(4, event->json);
      // Extracted here, on the store thread, so the reactor's on_event stays a push_back.
      const std::optional<std::string> turn_id = extract_turn_id(event->json);
      if (turn_id) {
        insert.bind(5, *turn_id);
        if (!event->session_id.empty()) remember_turn(event->session_id, *turn_id, event->seq);
      } else {
        insert.bind(5);
      }
      inserted += static_cast<std::uint64_t>(insert.exec());
      insert.reset();
      high_water = std::max(high_water, event->seq);
      if (event->session_id.empty()) continue;
      auto found = std::find_if(session_last.begin(), session_last.end(),
                                [&event](const auto& entry) { return *entry.first == event->session_id; });
      if (found == session_last.end())
        session_last.emplace_back(&event->session_id, event->seq);
      else
        found->second = std::max(found->second, event->seq);
    }
    SQLite::Statement session_update(db, "UPDATE sessions SET last_seq = ?2 WHERE id = ?1 AND last_seq < ?2");
    for (const auto& [session_id, last] : session_last) {
      session_update.bindNoCopy(1, *session_id);
      session_update.bind(2, as_sql(last));
      session_update.exec();
      session_update.reset();
    }
    SQLite::Statement mark(db,
                           "INSERT INTO store_meta(key, value) VALUES (?1, ?2) "
                           "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)");
    mark.bind(1, kHighWaterKey);
    mark.bind(2, as_sql(high_water));
    mark.exec();
    // The search index follows the log in the same transaction: a committed event is findable, and a batch
    // that fails leaves neither.
    index_events(db, events.front()->seq, events.back()->seq);
  }
  std::uint64_t deleted = 0;
  for (const Compaction& compaction : compactions) {
    outcome.compacted.push_back(compact_in_transaction(db, compaction));
    deleted += outcome.compacted.back();
  }
  const std::uint64_t rows = m_rows + inserted - std::min(m_rows + inserted, deleted);
  if (inserted > 0 || deleted > 0) write_rows(db, rows);
  transaction.commit();
  // Only now, so a failed transaction leaves the figures as they were.
  m_high_water = high_water;
  m_rows = rows;
  outcome.committed_through = m_high_water;
  return outcome;
}

std::uint64_t EventTable::trim(SQLite::Database& db, std::uint64_t max_rows, std::uint64_t chunk) {
  if (m_rows <= max_rows) return 0;
  const std::uint64_t count = std::min(m_rows - max_rows, chunk);
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  // The seq of the oldest row to keep, found by walking the rowid b-tree; everything below it goes, which is
  // a range delete on the same b-tree (plus its index entries).
  SQLite::Statement keep(db, "SELECT seq FROM events ORDER BY seq LIMIT 1 OFFSET ?");
  keep.bind(1, as_sql(count));
  std::uint64_t deleted = 0;
  if (keep.executeStep()) {
    const std::int64_t oldest_kept = keep.getColumn(0).getInt64();
    SQLite::Statement remove(db, "DELETE FROM events WHERE seq < ?");
    remove.bind(1, oldest_kept);
    deleted = static_cast<std::uint64_t>(remove.exec());
    forget_text_before(db, static_cast<std::uint64_t>(oldest_kept));
  }
  std::uint64_t rows = m_rows - std::min(m_rows, deleted);
  if (deleted == 0) {
    // The count drifted from the table (it cannot, short of someone editing the file): re-read it.
    rows = static_cast<std::uint64_t>(db.execAndGet("SELECT count(*) FROM events").getInt64());
  }
  write_rows(db, rows);
  transaction.commit();
  m_rows = rows;
  return m_rows > max_rows ? m_rows - max_rows : 0;
}

std::size_t EventTable::compact(SQLite::Database& db, const Compaction& compaction) {
  SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
  const std::size_t deleted = compact_in_transaction(db, compaction);
  const std::uint64_t rows = m_rows - std::min<std::uint64_t>(m_rows, deleted);
  if (deleted > 0) write_rows(db, rows);
  transaction.commit();
  m_rows = rows;
  return deleted;
}

void EventTable::remember_turn(const std::string& session_id, const std::string& turn_id, std::uint64_t seq) {
  auto current = std::find_if(m_current_turns.begin(), m_current_turns.end(),
                              [&session_id](const CurrentTurn& entry) { return entry.session_id == session_id; });
  if (current != m_current_turns.end() && current->turn_id == turn_id) return;  // already remembered
  if (current != m_current_turns.end()) {
    current->turn_id = turn_id;
  } else {
    if (m_current_turns.size() >= kCurrentTurnSessions) m_current_turns.erase(m_current_turns.begin());
    m_current_turns.push_back(CurrentTurn{session_id, turn_id});
  }
  // A failed transaction may leave an entry whose events were rolled back: harmless, its seq is only a lower
  // bound for the scan (the retried batch has the same seqs).
  auto [entry, inserted] = m_turn_first_seq.try_emplace(turn_key(session_id, turn_id), seq);
  if (!inserted) return;
  m_turn_order.push_back(entry->first);
  if (m_turn_order.size() > kRememberedTurns) {
    m_turn_first_seq.erase(m_turn_order.front());
    m_turn_order.pop_front();
  }
}

std::size_t EventTable::compact_in_transaction(SQLite::Database& db, const Compaction& compaction) {
  // From the turn's first seq when we remember it; otherwise the whole session (after a restart, or for a
  // turn older than the remembered ones): either way a range of events_by_session, filtered.
  std::uint64_t from_seq = 0;
  if (const auto found = m_turn_first_seq.find(turn_key(compaction.session_id, compaction.turn_id));
      found != m_turn_first_seq.end()) {
    from_seq = found->second;
  }
  SQLite::Statement remove(db, "DELETE FROM events WHERE session_id = ? AND seq >= ? AND turn_id = ? AND type IN (?, ?)");
  remove.bindNoCopy(1, compaction.session_id);
  remove.bind(2, as_sql(from_seq));
  remove.bindNoCopy(3, compaction.turn_id);
  // Streamed pieces whose whole text a later event repeats: message.completed, tool.completed.
  remove.bindNoCopy(4, event_type_name(protocol::EventKind::MessageDelta));
  remove.bindNoCopy(5, event_type_name(protocol::EventKind::ToolOutput));
  const int deleted = remove.exec();
  SQLite::Statement mark(db, "UPDATE events SET compacted = 1 WHERE session_id = ? AND seq >= ? AND turn_id = ?");
  mark.bindNoCopy(1, compaction.session_id);
  mark.bind(2, as_sql(from_seq));
  mark.bindNoCopy(3, compaction.turn_id);
  mark.exec();
  return static_cast<std::size_t>(deleted);
}

namespace {

std::vector<bus::EncodedEventPtr> read_rows(SQLite::Statement& query, bool& warned_unknown_type) {
  std::vector<bus::EncodedEventPtr> events;
  while (query.executeStep()) {
    auto event = std::make_shared<bus::EncodedEvent>();
    event->seq = static_cast<std::uint64_t>(query.getColumn(0).getInt64());
    const SQLite::Column session = query.getColumn(1);
    if (!session.isNull()) event->session_id.assign(session.getText(), static_cast<std::size_t>(session.getBytes()));
    const SQLite::Column type = query.getColumn(2);
    const std::string_view type_text(type.getText(), static_cast<std::size_t>(type.getBytes()));
    if (const auto kind = event_kind_from_type(type_text)) {
      event->kind = *kind;
    } else if (!warned_unknown_type) {
      // Replayed anyway: the stored bytes are what clients receive, and skipping would leave a hole.
      warned_unknown_type = true;
      spdlog::warn("store: event {} has type '{}', unknown to this build; replaying its bytes as stored", event->seq,
                   type_text);
    }
    const SQLite::Column json = query.getColumn(3);
    event->json.assign(json.getText(), static_cast<std::size_t>(json.getBytes()));
    events.push_back(std::move(event));
  }
  return events;
}

}  // namespace

std::vector<bus::EncodedEventPtr> EventTable::read_after(SQLite::Database& db, std::uint64_t after_seq,
                                                         std::size_t limit) {
  SQLite::Statement query(db, "SELECT seq, session_id, type, json FROM events WHERE seq > ? ORDER BY seq LIMIT ?");
  query.bind(1, as_sql(after_seq));
  query.bind(2, limit_as_sql(limit));
  return read_rows(query, m_warned_unknown_type);
}

std::vector<bus::EncodedEventPtr> EventTable::read_session(SQLite::Database& db, const std::string& session_id,
                                                           std::uint64_t after_seq, std::size_t limit) {
  SQLite::Statement query(db,
                          "SELECT seq, session_id, type, json FROM events WHERE session_id = ? AND seq > ? "
                          "ORDER BY seq LIMIT ?");
  query.bindNoCopy(1, session_id);
  query.bind(2, as_sql(after_seq));
  query.bind(3, limit_as_sql(limit));
  return read_rows(query, m_warned_unknown_type);
}

std::vector<bus::EncodedEventPtr> EventTable::read_session_before(SQLite::Database& db, const std::string& session_id,
                                                                  std::uint64_t after_seq, std::uint64_t before_seq,
                                                                  std::size_t limit) {
  SQLite::Statement query(db,
                          "SELECT seq, session_id, type, json FROM events WHERE session_id = ? AND seq > ? AND seq < ? "
                          "ORDER BY seq DESC LIMIT ?");
  query.bindNoCopy(1, session_id);
  query.bind(2, as_sql(after_seq));
  query.bind(3, as_sql(before_seq));
  query.bind(4, limit_as_sql(limit));
  auto events = read_rows(query, m_warned_unknown_type);
  std::reverse(events.begin(), events.end());
  return events;
}

}  // namespace switchboard::store
