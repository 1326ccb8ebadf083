#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/sinks/base_sink.h>

namespace switchboard::daemon {

// The two log sinks of the daemon. Logging runs on the reactor thread (and the store thread), so neither may
// ever wait for its output: a line that cannot be written now is dropped and counted, and the count is
// reported ("N log lines dropped") as soon as output flows again. See docs/process.md, "Logging".

// stderr, written without ever blocking. A parent that pipes our stderr and never reads it (Node's default
// spawn does) fills the pipe after ~64 KiB; from then on lines are dropped and counted, and the count is
// written before the first line that fits again.
//
// O_NONBLOCK is never set on fd 2 itself: its file description is shared with the parent (and whoever else
// inherited it), which would suddenly get EAGAIN from its own writes. Instead, for a pipe or a terminal the
// sink opens /proc/self/fd/2 afresh: a new file description of the same pipe or terminal, nonblocking on its
// own. A socket gets send(MSG_DONTWAIT), which is per call. Anything else (a regular file, /dev/null) does
// not block and is written as it is.
class NonBlockingStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // `fd` is the descriptor to log to (2 in the daemon; tests pass others).
  explicit NonBlockingStderrSink(int fd = 2);
  ~NonBlockingStderrSink() override;
  NonBlockingStderrSink(const NonBlockingStderrSink&) = delete;
  NonBlockingStderrSink& operator=(const NonBlockingStderrSink&) = delete;

  std::size_t dropped_total();

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override;
  void flush_() override {}

 private:
  enum class Mode { Plain, Reopened, Polled, Socket };
  // Writes what it can of `bytes` now; returns how many bytes went out.
  std::size_t write_some(const char* bytes, std::size_t size);
  // Sends the unfinished tail of a line cut short by a full pipe; true once nothing is left of it.
  bool finish_partial();

  int m_fd;
  Mode m_mode = Mode::Plain;
  bool m_colors = false;
  std::string m_partial;  // the rest of a line the pipe took only part of: sent before anything else
  std::size_t m_dropped = 0;  // since the last report
  std::size_t m_dropped_total = 0;
  spdlog::memory_buf_t m_formatted;
};

// A log file written by a thread of its own: the caller formats the line and queues it (bounded: 10,000 lines
// or 8 MiB); the writer appends and flushes. A disk that stalls fills the queue, and further lines are
// dropped and counted until it drains. The destructor writes what is queued and joins the thread.
class BackgroundFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens (creating, appending) `path`; throws spdlog::spdlog_ex if it cannot.
  explicit BackgroundFileSink(const std::string& path, std::size_t max_lines = 10000,
                              std::size_t max_bytes = 8 * 1024 * 1024);
  ~BackgroundFileSink() override;
  BackgroundFileSink(const BackgroundFileSink&) = delete;
  BackgroundFileSink& operator=(const BackgroundFileSink&) = delete;

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override;
  void flush_() override {}  // the writer flushes after every batch; waiting here would block the caller

 private:
  void writer_main();

  std::FILE* m_file = nullptr;
  std::size_t m_max_lines;
  std::size_t m_max_bytes;
  std::thread m_writer;
  std::mutex m_queue_mutex;
  std::condition_variable m_wake;
  std::deque<std::string> m_queue;  // guarded by m_queue_mutex, like the three below
  std::size_t m_queued_bytes = 0;
  std::size_t m_dropped = 0;
  bool m_stopping = false;
  spdlog::memory_buf_t m_formatted;
};

}  // namespace switchboard::daemon
