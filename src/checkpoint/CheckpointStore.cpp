#include "switchboard/checkpoint/CheckpointStore.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "checkpoint/GitProcess.h"
#include "checkpoint/WorkTreeStore.h"
#include "switchboard/process/ExecutableLookup.h"

namespace switchboard::checkpoint {

namespace fs = std::filesystem;

namespace {

// The working tree as the store knows it: absolute, without "." or ".." or a trailing '/'.
fs::path normal_tree(const fs::path& cwd) {
  auto path = cwd.lexically_normal();
  if (path.has_relative_path() && path.filename().empty()) path = path.parent_path();
  return path;
}

void cap_report(std::vector<std::string>& skipped, std::size_t cap) {
  if (skipped.size() > cap) skipped.resize(cap);
}

}  // namespace

// The store's thread and what runs on it: a queue of operations, the git runner, and one WorkTreeStore per
// working tree, opened (and recovered, after a crash) on first use.
class CheckpointStore::Worker {
 public:
  Worker(boost::asio::io_context& io, CheckpointOptions options) : m_io(io), m_options(std::move(options)) {
    std::string search_path = m_options.search_path;
    if (search_path.empty()) {
      const char* path = std::getenv("PATH");
      search_path = path != nullptr && *path != '\0' ? path : process::default_search_path();
    }
    auto executable = process::find_executable(m_options.git_program, search_path, {});
    if (executable) {
      m_git.emplace(*executable, search_path);
    } else {
      m_missing_git = "file checkpoints need git, which was not found (" + executable.error().message + ")";
      spdlog::warn("checkpoints: {}", m_missing_git);
    }
    m_thread = std::thread([this] { run(); });
  }

  ~Worker() {
    drop_pending();
    {
      std::lock_guard lock(m_mutex);
      m_stopping = true;  // the thread runs the writes still queued, then ends
    }
    m_wake.notify_one();
    m_thread.join();
  }

  // Runs `work` on the store's thread with the working tree's store, then `done` with its result on the reactor.
  // Completions hold a weak_ptr to the worker: a store destroyed meanwhile drops them.
  template <class T>
  void submit(std::weak_ptr<Worker> self, const fs::path& cwd,
              std::function<CheckpointResult<T>(WorkTreeStore&)> work, Then<T> done) {
    auto guard = boost::asio::make_work_guard(m_io);
    queue(Job::Answered, [this, self = std::move(self), tree = normal_tree(cwd), work = std::move(work), done = std::move(done),
               guard = std::move(guard)]() mutable {
      auto result = run_on(tree, work);
      boost::asio::post(m_io, [self, done = std::move(done), result = std::move(result), guard = std::move(guard)]() mutable {
        if (self.expired()) return;
        done(std::move(result));
      });
    });
  }

  // Runs `work` on the store's thread, in order with the operations; no completion. Always run, even once the
  // store is stopping: a log line queued just before a shutdown is kept.
  void run_later(std::function<void()> work) { queue(Job::Unanswered, std::move(work)); }

  // Stopping: operations not started yet are dropped (their completions would never run), the log writes queued
  // stay and run; no git starts any more (GitProcess::refuse_new), so none outlives the daemon's kill of its
  // children.
  void drop_pending() {
    if (m_git) m_git->refuse_new();
    std::deque<Queued> dropped;
    {
      std::lock_guard lock(m_mutex);
      m_dropping = true;
      std::deque<Queued> kept;
      for (auto& job : m_jobs) (job.kind == Job::Answered ? dropped : kept).push_back(std::move(job));
      m_jobs.swap(kept);
    }
    // Destroyed outside the lock: each holds the io_context's work guard of its completion.
  }

  template <class T>
  void submit_plain(std::weak_ptr<Worker> self, std::function<CheckpointResult<T>()> work, Then<T> done) {
    auto guard = boost::asio::make_work_guard(m_io);
    queue(Job::Answered, [this, self = std::move(self), work = std::move(work), done = std::move(done), guard = std::move(guard)]() mutable {
      auto result = work();
      boost::asio::post(m_io, [self, done = std::move(done), result = std::move(result), guard = std::move(guard)]() mutable {
        if (self.expired()) return;
        done(std::move(result));
      });
    });
  }

  fs::path directory_for(const fs::path& cwd) const { return m_options.root / store_name_for(normal_tree(cwd)); }
  const CheckpointOptions& options() const { return m_options; }

 private:
  enum class Job { Answered, Unanswered };  // an operation with a completion, or a log write
  struct Queued {
    Job kind;
    std::function<void()> work;
  };

  void queue(Job kind, std::function<void()> work) {
    {
      std::lock_guard lock(m_mutex);
      if (m_dropping && kind == Job::Answered) return;
      m_jobs.push_back(Queued{kind, std::move(work)});
    }
    m_wake.notify_one();
  }

  template <class T>
  CheckpointResult<T> run_on(const fs::path& tree, const std::function<CheckpointResult<T>(WorkTreeStore&)>& work) {
    if (!m_git) return CheckpointError{CheckpointError::Code::StoreUnavailable, m_missing_git};
    if (!tree.is_absolute())
      return CheckpointError{CheckpointError::Code::WorkTreeUnreadable,
                             "the working directory '" + tree.string() + "' is not an absolute path"};
    auto found = m_stores.find(tree);
    if (found == m_stores.end()) {
      auto store = std::make_unique<WorkTreeStore>(*m_git, directory_for(tree), tree, m_options);
      if (auto opened = store->open(); !opened) return opened.error();
      found = m_stores.emplace(tree, std::move(store)).first;
    }
    return work(*found->second);
  }

  void run() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(m_mutex);
        m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
        if (m_jobs.empty()) return;  // stopping, and nothing left to write
        job = std::move(m_jobs.front().work);
        m_jobs.pop_front();
      }
      job();
    }
  }

  boost::asio::io_context& m_io;
  CheckpointOptions m_options;
  std::optional<GitProcess> m_git;
  std::string m_missing_git;
  std::map<fs::path, std::unique_ptr<WorkTreeStore>> m_stores;  // the store's thread only
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<Queued> m_jobs;                 // guarded by m_mutex
  bool m_stopping = false;                   // guarded by m_mutex
  bool m_dropping = false;                   // guarded by m_mutex: stop() was called
  std::thread m_thread;                      // last: it starts once everything above exists
};

CheckpointStore::CheckpointStore(boost::asio::io_context& io, CheckpointOptions options)
    : m_worker(std::make_shared<Worker>(io, std::move(options))) {}

CheckpointStore::~CheckpointStore() = default;

void CheckpointStore::snapshot(fs::path cwd, Then<Snapshot> done) {
  const auto cap = m_worker->options().limits.max_reported_skips;
  m_worker->submit<Snapshot>(
      m_worker, cwd,
      [cap](WorkTreeStore& store) -> CheckpointResult<Snapshot> {
        auto taken = store.snapshot();
        if (!taken) return taken.error();
        Snapshot snapshot{std::move(taken->id), std::move(taken->skipped), 0};
        snapshot.skipped_total = snapshot.skipped.size();
        cap_report(snapshot.skipped, cap);
        return snapshot;
      },
      std::move(done));
}

void CheckpointStore::diff(fs::path cwd, std::string from, std::optional<std::string> to, Then<TreeChanges> done) {
  const auto cap = m_worker->options().limits.max_reported_skips;
  m_worker->submit<TreeChanges>(
      m_worker, cwd,
      [cap, from = std::move(from), to = std::move(to)](WorkTreeStore& store) -> CheckpointResult<TreeChanges> {
        auto changes = store.diff(from, to);
        if (changes) cap_report(changes->skipped, cap);
        return changes;
      },
      std::move(done));
}

void CheckpointStore::restore(fs::path cwd, std::string to, Then<Restored> done) {
  const auto cap = m_worker->options().limits.max_reported_skips;
  m_worker->submit<Restored>(
      m_worker, cwd,
      [cap, to = std::move(to)](WorkTreeStore& store) -> CheckpointResult<Restored> {
        auto restored = store.restore(to);
        if (restored) cap_report(restored->skipped, cap);
        return restored;
      },
      std::move(done));
}

namespace {

bool is_log_key(const std::string& key) {
  return !key.empty() && key.size() <= 128 && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

}  // namespace

void CheckpointStore::append_log(std::string key, std::string line) {
  if (!is_log_key(key) || line.find('\n') != std::string::npos) {
    spdlog::warn("checkpoints: a log line for '{}' was not kept (bad key or line)", key.substr(0, 100));
    return;
  }
  m_worker->run_later([root = m_worker->options().root, key = std::move(key), line = std::move(line)] {
    std::error_code error;
    fs::create_directories(root / "logs", error);
    const auto path = root / "logs" / (key + ".log");
    // One write of a whole line with O_APPEND: a crash leaves at most a last line without its '\n'.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const std::string text = line + "\n";
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      spdlog::warn("checkpoints: cannot append to {}", path.string());
    if (fd >= 0) ::close(fd);
  });
}

void CheckpointStore::read_log(std::string key, Then<std::vector<std::string>> done) {
  m_worker->submit_plain<std::vector<std::string>>(
      m_worker,
      [root = m_worker->options().root, key = std::move(key)]() -> CheckpointResult<std::vector<std::string>> {
        std::vector<std::string> lines;
        if (!is_log_key(key)) return lines;
        std::ifstream in(root / "logs" / (key + ".log"), std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), {});
        std::size_t start = 0;
        for (auto end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
          lines.push_back(text.substr(start, end - start));
          start = end + 1;
        }
        return lines;  // what follows the last '\n' was cut short by a crash
      },
      std::move(done));
}

void CheckpointStore::remove_log(std::string key) {
  if (!is_log_key(key)) return;
  m_worker->run_later([root = m_worker->options().root, key = std::move(key)] {
    std::error_code error;
    fs::remove(root / "logs" / (key + ".log"), error);
  });
}

void CheckpointStore::stop() { m_worker->drop_pending(); }

fs::path CheckpointStore::store_directory(const fs::path& cwd) const { return m_worker->directory_for(cwd); }

}  // namespace switchboard::checkpoint
