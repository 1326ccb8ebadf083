#include "store/EventLog.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "store/Database.h"
#include "store/StoreWorker.h"
#include "switchboard/support/Bug.h"

namespace switchboard::store {
namespace {

// Below this many uncommitted events the backlog is normal batching; above it, it is logged as it doubles.
constexpr std::size_t kBacklogWarning = 65536;

EventLogOptions sanitized(EventLogOptions options) {
  options.max_events = std::max<std::uint64_t>(options.max_events, 1);
  options.flush_events = std::max<std::size_t>(options.flush_events, 1);
  options.max_batch_events = std::max(options.max_batch_events, options.flush_events);
  options.trim_chunk_events = std::max<std::uint64_t>(options.trim_chunk_events, 1);
  options.max_retry_delay = std::max(options.max_retry_delay, options.retry_delay);
  options.reserve_seqs = std::max<std::uint64_t>(options.reserve_seqs, 2);
  return options;
}

// The first position in `events` (sorted by seq) whose seq is above `seq`.
template <class Range>
auto first_after(const Range& events, std::uint64_t seq) {
  return std::upper_bound(events.begin(), events.end(), seq,
                          [](std::uint64_t value, const bus::EncodedEventPtr& event) { return value < event->seq; });
}

}  // namespace

StoreResult<std::unique_ptr<EventLog>> EventLog::open(boost::asio::io_context& io, StoreWorker& worker,
                                                      EventLogOptions options) {
  options = sanitized(options);
  auto table = std::make_shared<EventTable>();
  auto loaded = worker.run_blocking("open event log", [table, block = options.reserve_seqs](Database& db) -> StoreResult<std::uint64_t> {
    table->load(db.sql());
    return table->recover_and_reserve(db.sql(), block);
  });
  if (!loaded) return loaded.error();
  if (!table->lost().empty() && table->lost().back().last == *loaded) {
    const SeqRange& range = table->lost().back();
    spdlog::warn("event log: the last run ended without storing seqs {}..{} (killed?); events it delivered under them "
                 "are lost, and replays announce the range as a gap",
                 range.first, range.last);
  }
  return std::unique_ptr<EventLog>(new EventLog(io, worker, options, std::move(table), *loaded));
}

EventLog::EventLog(boost::asio::io_context& io, StoreWorker& worker, EventLogOptions options,
                   std::shared_ptr<EventTable> table, std::uint64_t continue_after)
    : m_io(io),
      m_worker(worker),
      m_options(options),
      m_table(std::move(table)),
      m_self(std::make_shared<EventLog*>(this)),
      m_last_seq(continue_after),
      m_committed_seq(continue_after),
      m_reserved(m_table->reserved()),
      m_lost(m_table->lost()),
      m_flush_timer(io),
      m_patience_timer(io),
      m_retry_timer(io),
      m_next_retry_delay(options.retry_delay),
      m_reserve_retry_timer(io),
      m_next_reserve_delay(options.retry_delay) {}

EventLog::~EventLog() {
  close();
  m_self.reset();  // handlers still queued find the log gone
}

bus::SeqGrant EventLog::grant() const { return {m_reserved, m_reserved - m_options.reserve_seqs / 2}; }

void EventLog::start_supplying(bus::SeqConsumer& egress) {
  m_egress = &egress;
  egress.grant_seqs(grant());
}

void EventLog::on_running_low() { reserve_more(); }

void EventLog::reserve_more() {
  if (m_reserving || m_closed || m_egress == nullptr) return;
  m_reserving = true;
  // A whole block beyond what is numbered already, so even a burst that outran the last grant is covered.
  const std::uint64_t through = std::max(m_reserved, m_egress->numbered_seq()) + m_options.reserve_seqs;
  // A foreground job: it lifts the store thread out of SCHED_IDLE, so it never waits behind idle-class work.
  m_worker.submit(
      "reserve seqs",
      [table = m_table, through](Database& db) -> StoreResult<std::uint64_t> {
        table->reserve_through(db.sql(), through);
        return through;
      },
      [self = std::weak_ptr(m_self)](StoreResult<std::uint64_t> result) {
        if (const auto log = self.lock()) (*log)->on_reserved(std::move(result));
      });
}

void EventLog::on_reserved(StoreResult<std::uint64_t> result) {
  m_reserving = false;
  if (m_closed || m_egress == nullptr) return;
  if (!result) {
    // The egress holds new events (it never hands out an unreserved seq) until a reservation succeeds.
    if (!std::exchange(m_reserve_failure_reported, true)) {
      spdlog::error("event log: reserving seqs failed ({}): {}; events are held, not delivered, until it succeeds",
                    to_string(result.error().code), result.error().message);
    }
    m_reserve_retry_timer.expires_after(m_next_reserve_delay);
    m_next_reserve_delay = std::min(m_next_reserve_delay * 2, m_options.max_retry_delay);
    m_reserve_retry_timer.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
      const auto log = self.lock();
      if (!log || error) return;
      (*log)->reserve_more();
    });
    return;
  }
  if (std::exchange(m_reserve_failure_reported, false)) {
    spdlog::info("event log: seqs reserved again; {} held events delivered", m_egress->held_count());
  }
  m_next_reserve_delay = m_options.retry_delay;
  m_reserved = std::max(m_reserved, *result);
  m_egress->grant_seqs(grant());
}

std::vector<SeqRange> EventLog::lost_after(std::uint64_t after_seq) const {
  std::vector<SeqRange> ranges;
  for (const SeqRange& range : m_lost) {
    if (range.last <= after_seq) continue;
    ranges.push_back(SeqRange{std::max(range.first, after_seq + 1), range.last});
  }
  return ranges;
}

void EventLog::on_event(const bus::EncodedEventPtr& event) {
  if (m_closed) {
    if (!std::exchange(m_warned_after_close, true)) {
      spdlog::error("event log: event {} arrived after close and is not stored (remove the log from the egress first)",
                    event->seq);
    }
    return;
  }
  SWITCHBOARD_ASSERT(event->seq > m_last_seq,
                     "event seq not after the log's last seq (Egress::take_seqs_from missing?)");
  if (event->seq <= m_last_seq) {
    spdlog::error("event log: event {} is not after seq {}; not stored (a stored seq is never overwritten)", event->seq,
                  m_last_seq);
    return;
  }
  m_last_seq = event->seq;
  if (m_pending.empty()) m_first_pending_at = std::chrono::steady_clock::now();
  m_pending.push_back(event);
  maybe_flush();
}

void EventLog::maybe_flush() {
  if (m_in_flight || m_waiting_retry || m_closed || m_pending.empty()) return;
  // Someone waiting (a flush, a compaction riding the batch) is worth an early, smaller batch.
  if (m_pending.size() >= m_options.flush_events || !m_flush_waiters.empty() || !m_compactions.empty()) {
    return start_batch();
  }
  if (m_flush_timer_armed) return;  // it fires at the deadline of the oldest pending event
  if (std::chrono::steady_clock::now() - m_first_pending_at >= m_options.flush_delay) return start_batch();
  arm_flush_timer();
}

void EventLog::arm_flush_timer() {
  m_flush_timer_armed = true;
  m_flush_timer.expires_at(m_first_pending_at + m_options.flush_delay);
  m_flush_timer.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
    const auto log = self.lock();
    if (!log || error) return;  // gone, or cancelled by close()
    (*log)->m_flush_timer_armed = false;
    (*log)->maybe_flush();
  });
}

void EventLog::start_batch() {
  const std::size_t count = std::min(m_pending.size(), m_options.max_batch_events);
  auto events = std::make_shared<std::vector<bus::EncodedEventPtr>>();
  events->reserve(count);
  const auto end = m_pending.begin() + static_cast<std::ptrdiff_t>(count);
  std::move(m_pending.begin(), end, std::back_inserter(*events));
  m_pending.erase(m_pending.begin(), end);
  // What is left (over max_batch_events) keeps m_first_pending_at: it is overdue, and goes right after.
  if (m_pending.empty() && m_flush_timer_armed) {
    // Taken early (a flush, a full batch): a timer left armed would hold the io_context for nothing, and a
    // daemon at its end would wait it out. Its handler, already queued or not, sees the cancellation.
    m_flush_timer_armed = false;
    m_flush_timer.cancel();
  }

  // Compactions whose events all ride in this batch commit with it, in the same transaction.
  const std::uint64_t through = events->back()->seq;
  std::vector<Compaction> compactions;
  for (const auto& pending : m_compactions) {
    if (pending.compaction.through_seq > through) break;
    compactions.push_back(pending.compaction);
  }
  const std::size_t compaction_count = compactions.size();
  m_in_flight = events;
  note_backlog();

  auto commit = [table = m_table, events, compactions = std::move(compactions), max_events = m_options.max_events,
                 chunk = m_options.trim_chunk_events](Database& db) -> StoreResult<AppendOutcome> {
    AppendOutcome outcome = table->append(db.sql(), *events, compactions, EventTable::Duplicates::Fail);
    // Retention right after the commit (already durable): one bounded chunk per batch keeps pace with
    // appends, since a batch never holds more than max_batch_events; start_trim() chains more if needed.
    try {
      outcome.excess_rows = table->trim(db.sql(), max_events, chunk);
    } catch (...) {
      outcome.trim_error = error_from_current_exception("event log retention");
    }
    return outcome;
  };
  auto done = [self = std::weak_ptr(m_self), compaction_count](StoreResult<AppendOutcome> result) {
    if (const auto log = self.lock()) (*log)->on_batch_done(std::move(result), compaction_count);
  };
  // Somebody waiting for a flush makes this commit foreground work; otherwise it may use the idle class, for a
  // while (arm_patience_timer).
  if (!m_flush_waiters.empty()) {
    m_worker.submit("event log commit", std::move(commit), std::move(done));
    return;
  }
  submit_patiently("event log commit", std::move(commit), std::move(done));
}

template <class Job, class Done>
void EventLog::submit_patiently(const char* what, Job job, Done done) {
  ++m_background_jobs;
  m_worker.submit_background(what, std::move(job),
                             [self = std::weak_ptr(m_self), done = std::move(done)](auto result) mutable {
                               if (const auto log = self.lock()) {
                                 // Nothing left to watch: a timer still armed would only hold the io_context
                                 // (a daemon shutting down would wait out the patience for nothing).
                                 if (--(*log)->m_background_jobs == 0) (*log)->disarm_patience_timer();
                               }
                               done(std::move(result));
                             });
  arm_patience_timer();
}

void EventLog::arm_patience_timer() {
  if (m_patience_timer_armed) return;  // it fires within background_patience of this job's submission anyway
  m_patience_timer_armed = true;
  m_patience_timer.expires_after(m_options.background_patience);
  m_patience_timer.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& error) {
    const auto log = self.lock();
    if (!log || error) return;  // gone, or cancelled: by close(), or because no job is left to watch
    (*log)->m_patience_timer_armed = false;
    // Some may be younger than background_patience: lifting them early costs nothing but their idle class.
    if ((*log)->m_background_jobs > 0) (*log)->m_worker.expedite();
  });
}

void EventLog::disarm_patience_timer() {
  if (!m_patience_timer_armed) return;
  m_patience_timer_armed = false;
  m_patience_timer.cancel();  // its handler sees operation_aborted and leaves the flag to whoever arms it next
}

void EventLog::on_batch_done(StoreResult<AppendOutcome> result, std::size_t compactions) {
  Batch batch = std::exchange(m_in_flight, nullptr);
  if (m_closed) return;  // close() handed these events over again, with everything else
  if (!result) {
    // Back to the front of the queue, in order, and due at once when the retry comes.
    m_pending.insert(m_pending.begin(), batch->begin(), batch->end());
    m_first_pending_at = std::chrono::steady_clock::now() - m_options.flush_delay;
    return on_batch_failed(result.error());
  }
  // The log often holds the last reference to these events (the transports have written them): freeing a
  // few thousand of them is the store thread's work, not a stall of the reactor.
  m_worker.dispose(std::move(batch));
  const AppendOutcome& outcome = *result;
  if (m_failed_attempts > 0) {
    spdlog::info("event log: commits succeed again after {} failed attempts", m_failed_attempts);
    m_failed_attempts = 0;
    m_reported_failures.clear();
    m_next_retry_delay = m_options.retry_delay;
  }
  m_committed_seq = std::max(m_committed_seq, outcome.committed_through);
  if (unsaved_count() < kBacklogWarning / 2) m_backlog_warning_at = 0;

  // Collect the callbacks first and call them once the log's state is consistent: they may call back in.
  std::vector<std::pair<StoreCallback<std::size_t>, std::size_t>> compacted;
  SWITCHBOARD_ASSERT(outcome.compacted.size() == compactions, "a commit applied another number of compactions");
  for (std::size_t i = 0; i < compactions && i < outcome.compacted.size() && !m_compactions.empty(); ++i) {
    compacted.emplace_back(std::move(m_compactions.front().done), outcome.compacted[i]);
    m_compactions.pop_front();
  }
  // Compactions whose events were all committed by earlier batches go on their own.
  while (!m_compactions.empty() && m_compactions.front().compaction.through_seq <= m_committed_seq) {
    submit_compaction(std::move(m_compactions.front()));
    m_compactions.pop_front();
  }
  std::vector<StoreCallback<std::uint64_t>> flushed;
  std::erase_if(m_flush_waiters, [this, &flushed](FlushWaiter& waiter) {
    if (waiter.through_seq > m_committed_seq) return false;
    flushed.push_back(std::move(waiter.done));
    return true;
  });
  if (outcome.trim_error) {
    spdlog::warn("event log: {}", outcome.trim_error->message);
  } else if (outcome.excess_rows > 0) {
    start_trim();
  }
  maybe_flush();

  for (auto& [done, rows] : compacted) {
    if (done) done(rows);
  }
  for (auto& done : flushed) done(m_committed_seq);
  if (m_on_commit) m_on_commit(m_committed_seq);
}

void EventLog::on_batch_failed(const StoreError& error) {
  ++m_failed_attempts;
  if (m_reported_failures.insert(error.code).second) {
    spdlog::error("event log: commit failed ({}): {}; {} events kept in memory, retrying", to_string(error.code),
                  error.message, unsaved_count());
    if (m_on_error) m_on_error(error);
  }
  note_backlog();
  m_waiting_retry = true;
  m_retry_timer.expires_after(m_next_retry_delay);
  m_retry_timer.async_wait([self = std::weak_ptr(m_self)](const boost::system::error_code& wait_error) {
    const auto log = self.lock();
    if (!log || wait_error) return;
    (*log)->m_waiting_retry = false;
    (*log)->maybe_flush();
  });
  m_next_retry_delay = std::min(m_next_retry_delay * 2, m_options.max_retry_delay);
  // Whoever asked for a flush learns that it did not happen (the events stay queued).
  for (auto& waiter : std::exchange(m_flush_waiters, {})) waiter.done(error);
}

void EventLog::submit_compaction(PendingCompaction pending) {
  StoreCallback<std::size_t> done = std::move(pending.done);
  if (!done) done = [](StoreResult<std::size_t>) {};
  submit_patiently(
      "compact turn",
      [table = m_table, compaction = std::move(pending.compaction)](Database& db) -> StoreResult<std::size_t> {
        return table->compact(db.sql(), compaction);
      },
      std::move(done));
}

void EventLog::start_trim() {
  if (m_trim_queued) return;
  m_trim_queued = true;
  submit_patiently(
      "event log retention",
      [table = m_table, max_events = m_options.max_events, chunk = m_options.trim_chunk_events](
          Database& db) -> StoreResult<std::uint64_t> { return table->trim(db.sql(), max_events, chunk); },
      [self = std::weak_ptr(m_self)](StoreResult<std::uint64_t> excess) {
        const auto log = self.lock();
        if (!log) return;
        (*log)->m_trim_queued = false;
        if (!excess) {
          spdlog::warn("event log: {}", excess.error().message);  // the next commit tries again
          return;
        }
        if (*excess > 0 && !(*log)->m_closed) (*log)->start_trim();
      });
}

void EventLog::note_backlog() {
  const std::size_t unsaved = unsaved_count();
  if (unsaved < kBacklogWarning || unsaved < 2 * m_backlog_warning_at) return;
  m_backlog_warning_at = unsaved;
  spdlog::warn("event log: {} events waiting to be committed (seq {}..{})", unsaved, m_committed_seq + 1, m_last_seq);
}

void EventLog::compact_turn(std::string session_id, std::string turn_id, StoreCallback<std::size_t> done) {
  PendingCompaction pending{Compaction{std::move(session_id), std::move(turn_id), m_last_seq}, std::move(done)};
  if (pending.compaction.through_seq <= m_committed_seq || m_closed) return submit_compaction(std::move(pending));
  m_compactions.push_back(std::move(pending));
  maybe_flush();
}

void EventLog::flush(StoreCallback<std::uint64_t> done) {
  if (m_closed || m_last_seq <= m_committed_seq) {
    StoreResult<std::uint64_t> result = m_committed_seq;
    if (m_closed) result = StoreError{StoreError::Code::Io, "event log flush: the log is closed"};
    boost::asio::post(m_io, [done = std::move(done), result]() mutable { done(std::move(result)); });
    return;
  }
  m_flush_waiters.push_back(FlushWaiter{m_last_seq, std::move(done)});
  // The batch in flight (maybe in the idle class) now has somebody waiting behind it; the next one is started
  // as foreground work once it is back.
  if (m_in_flight) m_worker.expedite();
  maybe_flush();
}

void EventLog::merge_unsaved(Events& rows, std::uint64_t after_seq, std::size_t limit,
                             const std::string* session_id) const {
  if (rows.size() >= limit) return;  // full: the reader asks again from the last row
  std::uint64_t floor = rows.empty() ? after_seq : std::max(after_seq, rows.back()->seq);
  const auto take_from = [&](const auto& events) {
    for (auto it = first_after(events, floor); it != events.end(); ++it) {
      if (session_id != nullptr && (*it)->session_id != *session_id) continue;
      rows.push_back(*it);
      if (rows.size() >= limit) return false;
    }
    return true;
  };
  // In flight, then pending: both in seq order, all above any committed seq.
  if (m_in_flight && !take_from(*m_in_flight)) return;
  if (!rows.empty()) floor = std::max(floor, rows.back()->seq);
  take_from(m_pending);
}

void EventLog::replay_after(std::uint64_t after_seq, std::size_t limit, StoreCallback<Events> done) {
  // The read is queued behind every commit submitted so far, and results come back in submission order, so
  // anything the rows miss is still in memory when the rows arrive; merge_unsaved fills it in.
  m_worker.submit(
      "event log replay",
      [table = m_table, after_seq, limit](Database& db) -> StoreResult<Events> {
        return table->read_after(db.sql(), after_seq, limit);
      },
      [self = std::weak_ptr(m_self), after_seq, limit, done = std::move(done)](StoreResult<Events> rows) {
        if (rows) {
          if (const auto log = self.lock()) (*log)->merge_unsaved(*rows, after_seq, limit, nullptr);
        }
        done(std::move(rows));
      });
}

void EventLog::session_events(std::string session_id, std::uint64_t after_seq, std::size_t limit,
                              StoreCallback<Events> done) {
  auto id = std::make_shared<const std::string>(std::move(session_id));
  m_worker.submit(
      "session events",
      [table = m_table, id, after_seq, limit](Database& db) -> StoreResult<Events> {
        return table->read_session(db.sql(), *id, after_seq, limit);
      },
      [self = std::weak_ptr(m_self), id, after_seq, limit, done = std::move(done)](StoreResult<Events> rows) {
        if (rows) {
          if (const auto log = self.lock()) (*log)->merge_unsaved(*rows, after_seq, limit, id.get());
        }
        done(std::move(rows));
      });
}

void EventLog::merge_unsaved_before(Events& rows, std::uint64_t after_seq, std::uint64_t before_seq, std::size_t limit,
                                    const std::string& session_id) const {
  // Uncommitted events are above every committed seq, so they are the newest of the page: they come after the
  // rows and push the oldest rows out when the page would be over its limit.
  Events newer;
  const std::uint64_t floor = std::max(after_seq, rows.empty() ? std::uint64_t{0} : rows.back()->seq);
  const auto take_from = [&](const auto& events) {
    for (auto it = first_after(events, floor); it != events.end() && (*it)->seq < before_seq; ++it) {
      if ((*it)->session_id == session_id) newer.push_back(*it);
    }
  };
  if (m_in_flight) take_from(*m_in_flight);
  take_from(m_pending);
  if (newer.empty()) return;
  if (newer.size() >= limit) {
    rows.assign(newer.end() - static_cast<std::ptrdiff_t>(limit), newer.end());
    return;
  }
  const std::size_t keep = limit - newer.size();
  if (rows.size() > keep) rows.erase(rows.begin(), rows.end() - static_cast<std::ptrdiff_t>(keep));
  rows.insert(rows.end(), newer.begin(), newer.end());
}

void EventLog::session_events_before(std::string session_id, std::uint64_t after_seq, std::uint64_t before_seq,
                                     std::size_t limit, StoreCallback<Events> done) {
  auto id = std::make_shared<const std::string>(std::move(session_id));
  // Ordered behind the commits submitted so far, like session_events: what the rows miss is still in memory.
  m_worker.submit(
      "session events before",
      [table = m_table, id, after_seq, before_seq, limit](Database& db) -> StoreResult<Events> {
        return table->read_session_before(db.sql(), *id, after_seq, before_seq, limit);
      },
      [self = std::weak_ptr(m_self), id, after_seq, before_seq, limit,
       done = std::move(done)](StoreResult<Events> rows) {
        if (rows) {
          if (const auto log = self.lock()) (*log)->merge_unsaved_before(*rows, after_seq, before_seq, limit, *id);
        }
        done(std::move(rows));
      });
}

void EventLog::search(SearchQuery query, StoreCallback<SearchPage> done) {
  m_worker.submit(
      "search events",
      [query = std::move(query)](Database& db) -> StoreResult<SearchPage> { return search_events(db.sql(), query); },
      std::move(done));
}

void EventLog::close() {
  if (m_closed) return;
  m_closed = true;
  m_flush_timer.cancel();
  disarm_patience_timer();
  m_retry_timer.cancel();

  // Everything not known to be committed, the in-flight batch included: its outcome is not known yet, so the
  // final job ignores seqs that are stored already.
  auto events = std::make_shared<std::vector<bus::EncodedEventPtr>>();
  if (m_in_flight) *events = *m_in_flight;
  events->insert(events->end(), m_pending.begin(), m_pending.end());
  m_pending.clear();
  std::vector<Compaction> compactions;
  std::vector<StoreCallback<std::size_t>> compaction_callbacks;
  for (auto& pending : m_compactions) {
    compactions.push_back(std::move(pending.compaction));
    compaction_callbacks.push_back(std::move(pending.done));
  }
  m_compactions.clear();
  auto waiters = std::exchange(m_flush_waiters, {});
  m_reserve_retry_timer.cancel();
  // Every seq the egress delivered is in `events` or stored; none above it was seen by anyone (held events
  // were not), so once the final commit succeeds the reservation comes down to it and the next run continues
  // right after it, with nothing to report lost.
  std::uint64_t handed_out = m_last_seq;
  if (m_egress != nullptr) {
    handed_out = std::max(handed_out, m_egress->last_seq());
    if (m_egress->held_count() > 0) {
      spdlog::error("event log: closing with {} events never delivered (seqs could not be reserved)",
                    m_egress->held_count());
    }
    m_egress->end_supply();
    m_egress = nullptr;
  }

  const std::uint64_t first = events->empty() ? 0 : events->front()->seq;
  const std::uint64_t last = events->empty() ? 0 : events->back()->seq;
  if (!events->empty() && !m_worker.is_open()) {
    spdlog::error("event log: {} events (seq {}..{}) could not be stored: the store closed before the log",
                  events->size(), first, last);
  }
  m_worker.submit(
      "event log final commit",
      [table = m_table, events, compactions = std::move(compactions), first, last,
       handed_out](Database& db) -> StoreResult<AppendOutcome> {
        try {
          AppendOutcome outcome = table->append(db.sql(), *events, compactions, EventTable::Duplicates::Ignore);
          table->release_reservation(db.sql(), handed_out);
          return outcome;
        } catch (...) {
          // Logged here, on the store thread: at shutdown the reactor may never run the callback.
          StoreError error = error_from_current_exception("event log final commit");
          spdlog::error("event log: {} events (seq {}..{}) could not be stored at shutdown: {}", events->size(), first,
                        last, error.message);
          return error;
        }
      },
      [compaction_callbacks = std::move(compaction_callbacks),
       waiters = std::move(waiters)](StoreResult<AppendOutcome> result) mutable {
        for (std::size_t i = 0; i < compaction_callbacks.size(); ++i) {
          if (!compaction_callbacks[i]) continue;
          if (!result)
            compaction_callbacks[i](result.error());
          else if (i < result->compacted.size())
            compaction_callbacks[i](result->compacted[i]);
        }
        for (auto& waiter : waiters) {
          if (result)
            waiter.done(result->committed_through);
          else
            waiter.done(result.error());
        }
      });
}

}  // namespace switchboard::store
