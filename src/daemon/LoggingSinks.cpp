#include "daemon/LoggingSinks.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include <spdlog/details/log_msg.h>
#include <spdlog/spdlog.h>

namespace switchboard::daemon {
namespace {

// The line that reports drops, formatted like any other warning so it reads as part of the log.
void format_drop_note(spdlog::formatter& formatter, std::size_t dropped, std::string_view why,
                      spdlog::memory_buf_t& out) {
  const std::string text = std::to_string(dropped) + " log lines dropped (" + std::string(why) + ")";
  const spdlog::details::log_msg note(spdlog::source_loc{}, "switchboard", spdlog::level::warn, text);
  out.clear();
  formatter.format(note, out);
}

std::string_view color_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "\033[37m";
    case spdlog::level::debug: return "\033[36m";
    case spdlog::level::info: return "\033[32m";
    case spdlog::level::warn: return "\033[33m\033[1m";
    case spdlog::level::err: return "\033[31m\033[1m";
    case spdlog::level::critical: return "\033[1m\033[41m";
    default: return "";
  }
}

}  // namespace

// ---- NonBlockingStderrSink -----------------------------------------------------------------------------

NonBlockingStderrSink::NonBlockingStderrSink(int fd) : m_fd(fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return;
  m_colors = ::isatty(fd) == 1;
  if (S_ISSOCK(info.st_mode)) {
    m_mode = Mode::Socket;
  } else if (S_ISFIFO(info.st_mode) || m_colors) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    const int reopened = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (reopened >= 0) {
      m_fd = reopened;
      m_mode = Mode::Reopened;
    } else {
      // No /proc, or a pipe whose reader is gone (ENXIO): check for room before each write instead.
      m_mode = Mode::Polled;
    }
  }
}

NonBlockingStderrSink::~NonBlockingStderrSink() {
  if (m_mode == Mode::Reopened) ::close(m_fd);
}

std::size_t NonBlockingStderrSink::dropped_total() {
  std::lock_guard lock(mutex_);
  return m_dropped_total;
}

std::size_t NonBlockingStderrSink::write_some(const char* bytes, std::size_t size) {
  std::size_t written = 0;
  while (written < size) {
    ssize_t n;
    if (m_mode == Mode::Socket) {
      n = ::send(m_fd, bytes + written, size - written, MSG_DONTWAIT | MSG_NOSIGNAL);
    } else if (m_mode == Mode::Polled) {
      // A pipe with room for at least one page takes a write of up to PIPE_BUF bytes without blocking.
      pollfd poll_fd{m_fd, POLLOUT, 0};
      if (::poll(&poll_fd, 1, 0) != 1 || (poll_fd.revents & POLLOUT) == 0) return written;
      n = ::write(m_fd, bytes + written, std::min<std::size_t>(size - written, PIPE_BUF));
    } else {
      n = ::write(m_fd, bytes + written, size - written);
    }
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return written;  // full (EAGAIN), or gone (EPIPE): what is left is not written
    written += static_cast<std::size_t>(n);
  }
  return written;
}

bool NonBlockingStderrSink::finish_partial() {
  if (m_partial.empty()) return true;
  const std::size_t n = write_some(m_partial.data(), m_partial.size());
  m_partial.erase(0, n);
  return m_partial.empty();
}

void NonBlockingStderrSink::sink_it_(const spdlog::details::log_msg& message) {
  const auto drop = [this] {
    ++m_dropped;
    ++m_dropped_total;
  };
  if (!finish_partial()) return drop();
  if (m_dropped > 0) {
    spdlog::memory_buf_t note;
    format_drop_note(*formatter_, m_dropped, "stderr was full", note);
    const std::size_t n = write_some(note.data(), note.size());
    if (n == 0) return drop();  // still full
    m_dropped = 0;
    if (n < note.size()) m_partial.assign(note.data() + n, note.size() - n);
    if (!finish_partial()) return drop();
  }
  m_formatted.clear();
  formatter_->format(message, m_formatted);
  std::string_view line(m_formatted.data(), m_formatted.size());
  std::string colored;
  if (m_colors && message.color_range_end > message.color_range_start && message.color_range_end <= line.size()) {
    colored.reserve(line.size() + 16);
    colored.append(line.substr(0, message.color_range_start));
    colored.append(color_of(message.level));
    colored.append(line.substr(message.color_range_start, message.color_range_end - message.color_range_start));
    colored.append("\033[m");
    colored.append(line.substr(message.color_range_end));
    line = colored;
  }
  const std::size_t n = write_some(line.data(), line.size());
  if (n == 0) return drop();  // a line that was not begun is dropped whole
  if (n < line.size()) m_partial.assign(line.data() + n, line.size() - n);  // one that was, is finished later
}

// ---- BackgroundFileSink --------------------------------------------------------------------------------

BackgroundFileSink::BackgroundFileSink(const std::string& path, std::size_t max_lines, std::size_t max_bytes)
    : m_max_lines(max_lines), m_max_bytes(max_bytes) {
  m_file = std::fopen(path.c_str(), "ae");
  if (m_file == nullptr) throw spdlog::spdlog_ex("cannot open " + path + " for appending", errno);
  m_writer = std::thread([this] { writer_main(); });
}

BackgroundFileSink::~BackgroundFileSink() {
  {
    std::lock_guard lock(m_queue_mutex);
    m_stopping = true;
  }
  m_wake.notify_one();
  m_writer.join();  // a regular file: the queue drains in bounded time
  if (m_dropped > 0) {
    spdlog::memory_buf_t note;
    format_drop_note(*formatter_, m_dropped, "the log file could not keep up", note);
    std::fwrite(note.data(), 1, note.size(), m_file);
  }
  std::fclose(m_file);
}

void BackgroundFileSink::sink_it_(const spdlog::details::log_msg& message) {
  m_formatted.clear();
  formatter_->format(message, m_formatted);
  spdlog::memory_buf_t note;
  {
    std::lock_guard lock(m_queue_mutex);
    const bool report = m_dropped > 0;
    if (report) format_drop_note(*formatter_, m_dropped, "the log file could not keep up", note);
    const std::size_t lines = m_queue.size() + (report ? 2 : 1);
    const std::size_t bytes = m_queued_bytes + m_formatted.size() + note.size();
    if (lines > m_max_lines || bytes > m_max_bytes) {
      ++m_dropped;
      return;
    }
    if (report) {
      m_queue.emplace_back(note.data(), note.size());
      m_dropped = 0;
    }
    m_queue.emplace_back(m_formatted.data(), m_formatted.size());
    m_queued_bytes = bytes;
  }
  m_wake.notify_one();
}

void BackgroundFileSink::writer_main() {
  std::deque<std::string> batch;
  for (;;) {
    {
      std::unique_lock lock(m_queue_mutex);
      m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
      if (m_queue.empty()) return;  // stopping, and everything is written
      batch.swap(m_queue);
      m_queued_bytes = 0;
    }
    for (const std::string& line : batch) std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
    batch.clear();
  }
}

}  // namespace switchboard::daemon
