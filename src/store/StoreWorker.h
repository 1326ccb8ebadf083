#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "store/DatabaseOptions.h"
#include "store/StoreError.h"

namespace switchboard::store {

class Database;  // jobs get a Database&; only files that run SQL include store/Database.h

// The store's own thread: it owns the daemon's single SQLite connection and runs the jobs posted to it, one at
// a time, in submission order (a mutex + condition variable queue). A job is a function of Database& that
// returns a StoreResult; its result is posted back to the io_context given at construction, so completion
// callbacks always run on the reactor thread and never inline in submit(). SQLite exceptions thrown by a job
// become StoreError values here; they never reach the reactor.
//
// Every submitted job holds a work guard on the io_context until its result is posted, so io_context::run()
// does not return while store work is outstanding (graceful shutdown waits for it; tests can just run()).
// Owned by the daemon (through Store); the io_context must outlive it.
class StoreWorker {
 public:
  explicit StoreWorker(boost::asio::io_context& io) : m_io(io) {}
  StoreWorker(const StoreWorker&) = delete;
  StoreWorker& operator=(const StoreWorker&) = delete;
  ~StoreWorker() { shutdown(); }

  // Starts the thread, which opens and migrates the database, and waits for that to finish. Blocking: call it
  // at startup, before the reactor runs. On failure the thread has ended and every later job gets an error.
  StoreResult<DatabaseInfo> open(const std::filesystem::path& path, const DatabaseOptions& options = {});

  // Runs `job(Database&)` on the worker thread after every job submitted before it, and posts its result to
  // `done` on the io_context. `what` names the job in error messages ("list sessions: database is locked").
  // Safe to call from any thread; after shutdown (or a failed open) `done` receives an Io error, still posted.
  template <class Job>
  void submit(const char* what, Job job, std::function<void(std::invoke_result_t<Job&, Database&>)> done);
  // The same for work nobody waits on (the event log's commits, retention, compaction): it runs in the
  // SCHED_IDLE class, so it takes only CPU time no other thread wants and never delays the reactor relaying a
  // stream. It goes back to the thread's normal class the moment any other job is queued, so a client's request
  // never waits behind idle-class work (see enqueue()).
  template <class Job>
  void submit_background(const char* what, Job job, std::function<void(std::invoke_result_t<Job&, Database&>)> done);

  // Lifts every job queued so far, the one running included, out of the idle class: background work somebody
  // now waits for, or that has waited too long. On a machine whose cores are all busy (an agent compiling) an
  // idle-class job gets almost no CPU, so without this an event log commit could wait for as long as the load
  // lasts. Background jobs queued after the call use the idle class again. Safe to call from any thread.
  void expedite();

  // Drops `object` on the worker thread, after the jobs submitted before. For the last reference to something
  // expensive to destroy (a committed batch of thousands of events), so the reactor does not pay for it.
  void dispose(std::shared_ptr<const void> object);

  // Runs a job and waits for its result. For startup and tests only: never call it on a running reactor.
  template <class Job>
  std::invoke_result_t<Job&, Database&> run_blocking(const char* what, Job job);

  // Runs every job already submitted, closes the database (checkpointing the WAL) and joins the thread.
  // Idempotent. It blocks for as long as the queue takes: call it last in the daemon's shutdown, after the
  // event log has handed over its final batch (Store::close does both).
  void shutdown();

  bool is_open() const;
  bool on_worker_thread() const { return std::this_thread::get_id() == m_thread_id; }

 private:
  // One queued job, type-erased (move-only: it holds a work guard and the caller's callback).
  class Task {
   public:
    virtual ~Task() = default;
    virtual void run(Database* db) = 0;  // db is null when the database is not open
    bool background = false;             // may run in the SCHED_IDLE class
    std::uint64_t number = 0;            // its place in submission order, from 1 (set by enqueue)
  };
  template <class Job, class Result>
  class PostingTask;
  template <class Job, class Result>
  class BlockingTask;
  class DisposeTask;

  template <class Result, class Job>
  static Result run_job(const char* what, Job& job, Database* db);

  // Queues `task`, or runs it at once with no database when the worker is not accepting work.
  void enqueue(std::unique_ptr<Task> task);
  void thread_main(std::filesystem::path path, DatabaseOptions options, std::promise<StoreResult<DatabaseInfo>> opened);
  // Runs one task of a batch, in the idle class when it is background work and no other work is waiting.
  void run_task(Task& task, Database* db);
  // Moves the worker thread into or out of SCHED_IDLE. Called with m_mutex held.
  void set_idle_class(bool idle);

  boost::asio::io_context& m_io;
  std::thread m_thread;
  std::thread::id m_thread_id;

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::unique_ptr<Task>> m_queue;  // guarded by m_mutex
  bool m_accepting = false;                   // guarded by m_mutex: open succeeded and shutdown not begun
  bool m_stopping = false;                    // guarded by m_mutex
  // Scheduling: the worker's kernel thread id, whether it runs in SCHED_IDLE now, and how many jobs that are not
  // background work are queued or running. All guarded by m_mutex, so a job queued while the worker is in the idle
  // class always moves it out (enqueue) and the worker never enters it with such a job waiting (run_task).
  pid_t m_native_tid = 0;
  bool m_idle_class = false;
  std::size_t m_foreground_pending = 0;
  // Jobs are numbered as they are queued; those numbered up to m_expedited_through never use the idle class.
  std::uint64_t m_enqueued = 0;
  std::uint64_t m_expedited_through = 0;
};

// ---- templates ---------------------------------------------------------------------------------------------

template <class Result, class Job>
Result StoreWorker::run_job(const char* what, Job& job, Database* db) {
  static_assert(std::is_constructible_v<Result, StoreError>, "a store job returns a StoreResult<T>");
  if (db == nullptr) return StoreError{StoreError::Code::Io, std::string(what) + ": the store is not open"};
  try {
    return job(*db);
  } catch (...) {
    return error_from_current_exception(what);
  }
}

template <class Job, class Result>
class StoreWorker::PostingTask final : public Task {
 public:
  PostingTask(boost::asio::io_context& io, const char* what, Job job, std::function<void(Result)> done)
      : m_work(io.get_executor()), m_what(what), m_job(std::move(job)), m_done(std::move(done)) {}

  void run(Database* db) override {
    Result result = run_job<Result>(m_what, m_job, db);
    boost::asio::post(m_work.get_executor(),
                      [done = std::move(m_done), result = std::move(result)]() mutable { done(std::move(result)); });
    // Only now: the posted handler is outstanding work of its own, so run() cannot return in between.
    m_work.reset();
  }

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> m_work;
  const char* m_what;
  Job m_job;
  std::function<void(Result)> m_done;
};

template <class Job, class Result>
class StoreWorker::BlockingTask final : public Task {
 public:
  BlockingTask(const char* what, Job job, std::promise<Result> promise)
      : m_what(what), m_job(std::move(job)), m_promise(std::move(promise)) {}

  void run(Database* db) override { m_promise.set_value(run_job<Result>(m_what, m_job, db)); }

 private:
  const char* m_what;
  Job m_job;
  std::promise<Result> m_promise;
};

template <class Job>
void StoreWorker::submit(const char* what, Job job, std::function<void(std::invoke_result_t<Job&, Database&>)> done) {
  using Result = std::invoke_result_t<Job&, Database&>;
  if (!done) done = [](Result) {};  // a caller that does not care about the outcome
  enqueue(std::make_unique<PostingTask<Job, Result>>(m_io, what, std::move(job), std::move(done)));
}

template <class Job>
void StoreWorker::submit_background(const char* what, Job job,
                                    std::function<void(std::invoke_result_t<Job&, Database&>)> done) {
  using Result = std::invoke_result_t<Job&, Database&>;
  if (!done) done = [](Result) {};
  auto task = std::make_unique<PostingTask<Job, Result>>(m_io, what, std::move(job), std::move(done));
  task->background = true;
  enqueue(std::move(task));
}

template <class Job>
std::invoke_result_t<Job&, Database&> StoreWorker::run_blocking(const char* what, Job job) {
  using Result = std::invoke_result_t<Job&, Database&>;
  std::promise<Result> promise;
  auto future = promise.get_future();
  if (on_worker_thread())
    return StoreError{StoreError::Code::Io, std::string(what) + ": run_blocking on the store thread"};
  enqueue(std::make_unique<BlockingTask<Job, Result>>(what, std::move(job), std::move(promise)));
  return future.get();
}

}  // namespace switchboard::store
