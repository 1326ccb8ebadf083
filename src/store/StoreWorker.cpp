#include "store/StoreWorker.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "store/Database.h"
#include "switchboard/support/Bug.h"

namespace switchboard::store {

StoreResult<DatabaseInfo> StoreWorker::open(const std::filesystem::path& path, const DatabaseOptions& options) {
  {
    std::lock_guard lock(m_mutex);
    if (m_thread.joinable() || m_stopping) {
      return StoreError{StoreError::Code::Io,
                        "cannot open database " + path.string() + ": the store was opened before"};
    }
  }
  std::promise<StoreResult<DatabaseInfo>> opened;
  auto result = opened.get_future();
  m_thread = std::thread(&StoreWorker::thread_main, this, path, options, std::move(opened));
  m_thread_id = m_thread.get_id();
  return result.get();
}

namespace {

// The store thread yields the CPU to the reactor when both want it: the reactor's work is latency (a client
// waiting for a reply, a 1 ms timer), the store's is throughput (commits batch whatever piled up meanwhile).
// Linux applies nice per thread. +3 weighs it about half a nice-0 thread: sharing a core with one busy thread
// it still gets a third of it, ~80k events/s at ~4 us each (bench_event_log), above what agents stream; and a
// backlog only costs memory, since batches grow to absorb it.
constexpr int kStoreThreadNiceness = 3;

void lower_thread_priority() {
  const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
  errno = 0;
  const int current = ::getpriority(PRIO_PROCESS, tid);
  if (errno != 0 || ::setpriority(PRIO_PROCESS, tid, current + kStoreThreadNiceness) != 0) {
    spdlog::debug("store: cannot lower the store thread's priority: {}", std::strerror(errno));
  }
}

}  // namespace

void StoreWorker::thread_main(std::filesystem::path path, DatabaseOptions options,
                              std::promise<StoreResult<DatabaseInfo>> opened) {
  lower_thread_priority();
  auto db = Database::open(path, options);
  if (!db) {
    {
      std::lock_guard lock(m_mutex);
      m_stopping = true;
    }
    opened.set_value(db.error());
    return;
  }
  {
    std::lock_guard lock(m_mutex);
    m_accepting = !m_stopping;
  }
  opened.set_value((*db)->info());

  std::deque<std::unique_ptr<Task>> batch;
  for (;;) {
    {
      std::unique_lock lock(m_mutex);
      m_wake.wait(lock, [this] { return !m_queue.empty() || m_stopping; });
      if (m_queue.empty()) break;  // stopping, and everything submitted has run
      batch.swap(m_queue);
    }
    for (auto& task : batch) task->run(db->get());
    batch.clear();  // destroys the tasks (and their callbacks' captures) here, outside the lock
  }
  db->reset();  // closes the connection: checkpoints the WAL into the database file
  spdlog::debug("store: {} closed", path.string());
}

void StoreWorker::enqueue(std::unique_ptr<Task> task) {
  {
    std::lock_guard lock(m_mutex);
    if (m_accepting) {
      m_queue.push_back(std::move(task));
      m_wake.notify_one();
      return;
    }
  }
  task->run(nullptr);  // posts (or sets) the "not open" error; never runs the caller's callback inline
}

class StoreWorker::DisposeTask final : public Task {
 public:
  explicit DisposeTask(std::shared_ptr<const void> object) : m_object(std::move(object)) {}
  void run(Database*) override { m_object.reset(); }

 private:
  std::shared_ptr<const void> m_object;
};

void StoreWorker::dispose(std::shared_ptr<const void> object) {
  // When the worker is not running, enqueue runs the task right here: the reactor pays after all, once.
  enqueue(std::make_unique<DisposeTask>(std::move(object)));
}

void StoreWorker::shutdown() {
  {
    std::lock_guard lock(m_mutex);
    m_accepting = false;
    m_stopping = true;
  }
  m_wake.notify_one();
  if (m_thread.joinable()) {
    SWITCHBOARD_ASSERT(!on_worker_thread(), "StoreWorker::shutdown on the store thread");
    m_thread.join();
  }
}

bool StoreWorker::is_open() const {
  std::lock_guard lock(m_mutex);
  return m_accepting;
}

}  // namespace switchboard::store
