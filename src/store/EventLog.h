#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "store/EventTable.h"
#include "store/SearchIndex.h"
#include "store/StoreError.h"
#include "switchboard/bus/EncodedEvent.h"
#include "switchboard/bus/SeqSupply.h"

namespace switchboard::store {

class StoreWorker;

struct EventLogOptions {
  // Retention: the log keeps at most this many events, deleting the oldest after commits. At ~200 bytes an
  // event (a streamed text delta) the default is ~200 MB of database and ~1 M replayable events, enough for
  // weeks of heavy use; compact_turn keeps the count far lower in practice (deltas are most events).
  std::uint64_t max_events = 1'000'000;
  // A batch is committed once this many events are pending, or flush_delay after the first of them.
  std::size_t flush_events = 512;
  std::chrono::milliseconds flush_delay{5};
  // Commits, compactions and retention nobody waits for run in the store thread's idle class
  // (StoreWorker::submit_background). One still outstanding after this long, because every core is busy
  // elsewhere, is expedited to the normal class, so a saturated machine delays them by about this much, not for
  // as long as the load lasts. A flush() expedites at once.
  std::chrono::milliseconds background_patience{200};
  // Bounds one transaction, and the reactor's hand-over of a batch (moving this many pointers).
  std::size_t max_batch_events = 8192;
  // Retention deletes at most this many rows per transaction (one per commit, more chained while over).
  std::uint64_t trim_chunk_events = 8192;
  // After a failed commit the batch is retried after retry_delay, doubling up to max_retry_delay.
  std::chrono::milliseconds retry_delay{250};
  std::chrono::milliseconds max_retry_delay{10000};
  // Seqs reserved durably ahead of use, per reservation (docs/persistence.md). The next block is reserved when
  // half of this one is handed out: at 100k events/s that leaves over 300 ms for one small commit. A crash
  // reports at most this many seqs (the unused ones among them included) as one lost range.
  std::uint64_t reserve_seqs = 65536;
};

// The durable event log: an egress sink that stores every wire event in the events table, and reads them back
// for replay. Lives on the reactor thread; all SQL runs on the StoreWorker.
//
//  - on_event never blocks: it appends to the pending batch. A batch is committed in one transaction when
//    flush_events are pending or flush_delay after the first pending event (a steady_timer on the reactor),
//    with at most one batch in flight; the next one accumulates meanwhile.
//  - Events not yet committed (pending, in flight, or waiting for a retry) stay in memory, and replay_after /
//    session_events merge them after the stored rows, so a reader never misses the tail and sees no duplicate.
//  - A failed commit (disk full, locked…) is logged once per failure kind, reported to the error callback, and
//    retried with backoff; events are never dropped (the backlog is logged as it grows).
//  - data.turnId is extracted from the event bytes on the store thread (EventFields.h), so sinks need no
//    extra parameter and the egress's EventSink interface stays as it is.
//
//  - It is the egress's seq supply (bus/SeqSupply.h): the egress hands out only seqs below a durable
//    reservation, so a seq a client saw never names another event after a crash; a restart records what the
//    crashed run reserved but never stored as lost, and replays announce it (lost_after).
//
// Owned by Store; construct it with open(), wire it with Egress::take_seqs_from() and Egress::add_sink().
class EventLog : public bus::EventSink, public bus::SeqSupply {
 public:
  // Reads the log's state on the store thread and waits for it. Blocking: startup only.
  static StoreResult<std::unique_ptr<EventLog>> open(boost::asio::io_context& io, StoreWorker& worker,
                                                     EventLogOptions options = {});
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;
  ~EventLog() override;

  void on_event(const bus::EncodedEventPtr& event) override;

  // The highest seq stored or accepted: at open, the stored high-water mark or the earlier run's reservation,
  // whichever is higher, so seqs continue across restarts (never reused, even when compaction removed the
  // newest rows or a crash lost the unsaved tail).
  std::uint64_t last_seq() const override { return m_last_seq; }
  // The durable seq reservation: no seq above it has been handed out.
  std::uint64_t reserved_seq() const { return m_reserved; }

  // Grants the egress only reserved seqs, and reserves the next block (a store job) whenever half of the
  // current one is used. Once, before the first event. The egress must outlive close().
  void start_supplying(bus::SeqConsumer& egress) override;
  void on_running_low() override;

  // Seq ranges above after_seq whose events earlier runs delivered, perhaps, but never stored (they were
  // killed first), in seq order, the first clipped to start after after_seq. Global: the events of every
  // session in such a range are gone.
  std::vector<SeqRange> lost_after(std::uint64_t after_seq) const;
  // The highest seq known to be committed (durable).
  std::uint64_t committed_seq() const { return m_committed_seq; }
  // Events accepted but not yet committed.
  std::size_t unsaved_count() const { return m_pending.size() + (m_in_flight ? m_in_flight->size() : 0); }

  using Events = std::vector<bus::EncodedEventPtr>;
  // Events with seq > after_seq, in seq order, at most `limit`: stored rows, then the in-memory tail. Compacted
  // deltas and events trimmed by retention are absent (compare the first seq with after_seq + 1 to see it).
  void replay_after(std::uint64_t after_seq, std::size_t limit, StoreCallback<Events> done);
  // The same for one session's events: pages of a session transcript.
  void session_events(std::string session_id, std::uint64_t after_seq, std::size_t limit, StoreCallback<Events> done);
  // Read from the end: one session's events with after_seq < seq < before_seq, the newest `limit` of them, in seq
  // order (stored rows read backward, with the in-memory tail, which is newer than any stored row).
  void session_events_before(std::string session_id, std::uint64_t after_seq, std::uint64_t before_seq,
                             std::size_t limit, StoreCallback<Events> done);
  // Full-text search over the stored events (SearchIndex.h), read on the store thread. The index is written
  // with each commit, so events not committed yet (the last few milliseconds) are not found.
  void search(SearchQuery query, StoreCallback<SearchPage> done);
  // Deletes the message.delta and tool.output rows of a finished turn (the full message events stay), once every event seen so
  // far is committed (with the batch that carries them, or at once). Gets the number of rows deleted.
  void compact_turn(std::string session_id, std::string turn_id, StoreCallback<std::size_t> done);
  // Commits everything accepted so far without waiting for the batch timer, in the store thread's normal class
  // (a batch already in flight is expedited); gets the committed seq, or the error of a failed attempt (the
  // events stay queued for retry).
  void flush(StoreCallback<std::uint64_t> done);

  // Called once per failure kind while commits keep failing (e.g. to publish an error event); again after
  // a success followed by new failures.
  void on_error(std::function<void(const StoreError&)> callback) { m_on_error = std::move(callback); }
  // Called after each commit with the highest committed seq.
  void on_commit(std::function<void(std::uint64_t committed_seq)> callback) { m_on_commit = std::move(callback); }

  // Shutdown: hands every uncommitted event and compaction to the store thread as one last job (which
  // StoreWorker::shutdown then runs) and stops accepting events. Remove the log from the egress first.
  void close();

 private:
  EventLog(boost::asio::io_context& io, StoreWorker& worker, EventLogOptions options,
           std::shared_ptr<EventTable> table, std::uint64_t continue_after);

  struct PendingCompaction {
    Compaction compaction;
    StoreCallback<std::size_t> done;
  };
  struct FlushWaiter {
    std::uint64_t through_seq;
    StoreCallback<std::uint64_t> done;
  };
  using Batch = std::shared_ptr<const std::vector<bus::EncodedEventPtr>>;

  void maybe_flush();
  void arm_flush_timer();
  void start_batch();
  // Submits background work (a commit, a compaction, retention) that arm_patience_timer watches.
  template <class Job, class Done>
  void submit_patiently(const char* what, Job job, Done done);
  // Unless armed already: expedites the store's queue when background_patience has passed and some of the
  // log's background jobs are still outstanding.
  void arm_patience_timer();
  void disarm_patience_timer();
  void on_batch_done(StoreResult<AppendOutcome> result, std::size_t compactions);
  void on_batch_failed(const StoreError& error);
  void submit_compaction(PendingCompaction pending);
  void start_trim();
  void note_backlog();
  // The reservation as a grant: all of it, and a request for more at half of the last block.
  bus::SeqGrant grant() const;
  void reserve_more();
  void on_reserved(StoreResult<std::uint64_t> result);
  // Appends to `rows` the in-memory events after both after_seq and rows' last seq (and of `session_id`, if
  // given), up to `limit`.
  void merge_unsaved(Events& rows, std::uint64_t after_seq, std::size_t limit, const std::string* session_id) const;
  void merge_unsaved_before(Events& rows, std::uint64_t after_seq, std::uint64_t before_seq, std::size_t limit,
                            const std::string& session_id) const;

  boost::asio::io_context& m_io;
  StoreWorker& m_worker;
  EventLogOptions m_options;
  // Shared with the jobs on the store thread and touched only there (jobs run one at a time, in order).
  std::shared_ptr<EventTable> m_table;
  // Handlers hold a weak_ptr to this, so a result arriving after the log is gone is dropped, not run.
  std::shared_ptr<EventLog*> m_self;

  std::uint64_t m_last_seq = 0;
  std::uint64_t m_committed_seq = 0;
  std::uint64_t m_reserved = 0;
  std::vector<SeqRange> m_lost;  // a copy of the table's, for the reactor
  std::deque<bus::EncodedEventPtr> m_pending;
  std::chrono::steady_clock::time_point m_first_pending_at;
  Batch m_in_flight;  // being committed; read by replays meanwhile (the store thread only reads it too)
  std::deque<PendingCompaction> m_compactions;  // in through_seq order
  std::vector<FlushWaiter> m_flush_waiters;

  boost::asio::steady_timer m_flush_timer;
  bool m_flush_timer_armed = false;
  boost::asio::steady_timer m_patience_timer;
  bool m_patience_timer_armed = false;
  std::size_t m_background_jobs = 0;  // submitted with submit_patiently, result not back yet
  boost::asio::steady_timer m_retry_timer;
  bool m_waiting_retry = false;
  std::chrono::milliseconds m_next_retry_delay;
  std::set<StoreError::Code> m_reported_failures;  // this failure streak's kinds, logged and reported once
  std::uint64_t m_failed_attempts = 0;
  bool m_trim_queued = false;
  std::size_t m_backlog_warning_at = 0;
  bool m_closed = false;
  bool m_warned_after_close = false;

  bus::SeqConsumer* m_egress = nullptr;  // supplied with seqs (start_supplying), until close()
  bool m_reserving = false;
  boost::asio::steady_timer m_reserve_retry_timer;
  std::chrono::milliseconds m_next_reserve_delay;
  bool m_reserve_failure_reported = false;

  std::function<void(const StoreError&)> m_on_error;
  std::function<void(std::uint64_t)> m_on_commit;
};

}  // namespace switchboard::store
