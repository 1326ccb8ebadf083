#include "store/StoreWorker.h"

#include <sched.h>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

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

// Whether this thread could leave SCHED_IDLE again. Linux lets a thread out of the idle class only as far as it
// may lower its nice value (CAP_SYS_NICE, or an RLIMIT_NICE that allows the current nice value); without that,
// idle-class background work would strand every later job in the idle class, so it is not used at all.
bool may_leave_idle_class() {
  std::ifstream status("/proc/thread-self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const unsigned long long effective = std::strtoull(line.c_str() + 7, nullptr, 16);
    constexpr int kCapSysNice = 23;
    if ((effective >> kCapSysNice) & 1ULL) return true;
  }
  errno = 0;
  const int nice = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  rlimit limit{};
  if (errno != 0 || ::getrlimit(RLIMIT_NICE, &limit) != 0) return false;
  return limit.rlim_cur == RLIM_INFINITY || static_cast<long long>(limit.rlim_cur) >= 20 - nice;
}

}  // namespace

void StoreWorker::thread_main(std::filesystem::path path, DatabaseOptions options,
                              std::promise<StoreResult<DatabaseInfo>> opened) {
  lower_thread_priority();
  const bool idle_class_usable = may_leave_idle_class();
  if (!idle_class_usable) {
    spdlog::info("store: background writes run at nice +{}, not in SCHED_IDLE (that needs CAP_SYS_NICE or RLIMIT_NICE)",
                 kStoreThreadNiceness);
  }
  {
    std::lock_guard lock(m_mutex);
    if (idle_class_usable) m_native_tid = static_cast<pid_t>(::syscall(SYS_gettid));
  }
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
    for (auto& task : batch) run_task(*task, db->get());
    batch.clear();  // destroys the tasks (and their callbacks' captures) here, outside the lock
  }
  db->reset();  // closes the connection: checkpoints the WAL into the database file
  spdlog::debug("store: {} closed", path.string());
}

void StoreWorker::run_task(Task& task, Database* db) {
  {
    std::lock_guard lock(m_mutex);
    set_idle_class(task.background && m_foreground_pending == 0 && task.number > m_expedited_through);
  }
  task.run(db);
  std::lock_guard lock(m_mutex);
  if (!task.background) --m_foreground_pending;
}

void StoreWorker::set_idle_class(bool idle) {
  if (idle == m_idle_class || m_native_tid == 0) return;
  // A fair-class thread keeps its nice value across the round trip through SCHED_IDLE.
  sched_param param{};
  if (::sched_setscheduler(m_native_tid, idle ? SCHED_IDLE : SCHED_OTHER, &param) != 0) {
    spdlog::debug("store: cannot move the store thread {} SCHED_IDLE: {}", idle ? "into" : "out of", std::strerror(errno));
    return;
  }
  m_idle_class = idle;
}

void StoreWorker::enqueue(std::unique_ptr<Task> task) {
  {
    std::lock_guard lock(m_mutex);
    if (m_accepting) {
      task->number = ++m_enqueued;
      if (!task->background) {
        ++m_foreground_pending;
        set_idle_class(false);  // the worker may be in idle-class work that this job now waits behind
      }
      m_queue.push_back(std::move(task));
      m_wake.notify_one();
      return;
    }
  }
  task->run(nullptr);  // posts (or sets) the "not open" error; never runs the caller's callback inline
}

void StoreWorker::expedite() {
  std::lock_guard lock(m_mutex);
  m_expedited_through = m_enqueued;
  set_idle_class(false);
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
  auto task = std::make_unique<DisposeTask>(std::move(object));
  task->background = true;
  enqueue(std::move(task));
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
