#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "switchboard/process/ProcessError.h"
#include "process/UniqueFd.h"

namespace switchboard::process {

// Writes to a child's stdin without ever blocking the reactor and without unbounded memory.
//
// write() queues the bytes and writes what the pipe takes at once (non-blocking); the rest goes out when the
// pipe is writable again (async_wait(wait_write)). The queue is bounded in bytes: a write that would exceed the
// bound is refused whole with StdinQueueFull, so a child that stops reading shows up as an error value at the
// caller, who decides (wait, drop, stop the child), and never as growth. close() sends EOF once the queue has
// drained; abort() closes at once and drops the queue. If the child closes its end (EPIPE), the queue is
// dropped and later writes fail with StdinClosed. The daemon ignores SIGPIPE (ChildProcess makes sure of it),
// so that is an error code, not a signal.
class StdinWriter : public std::enable_shared_from_this<StdinWriter> {
 public:
  // Takes ownership of `fd`, the parent's end of the stdin pipe.
  static std::shared_ptr<StdinWriter> create(boost::asio::io_context& io, UniqueFd fd, std::size_t limit_bytes);
  StdinWriter(boost::asio::io_context& io, UniqueFd fd, std::size_t limit_bytes);

  ProcessResult<void> write(std::string bytes);
  void close();
  void abort();

  std::size_t queued_bytes() const { return m_queued_bytes; }
  std::size_t limit_bytes() const { return m_limit_bytes; }
  // Writes are refused (close() was called, the child closed its end, or the pipe failed).
  bool closed() const { return m_closing || !m_stream.is_open(); }

 private:
  void flush();
  void wait_writable();
  void close_now();

  boost::asio::posix::stream_descriptor m_stream;
  std::size_t m_limit_bytes;
  std::deque<std::string> m_queue;
  std::size_t m_front_offset = 0;  // bytes of m_queue.front() already written
  std::size_t m_queued_bytes = 0;
  bool m_waiting = false;  // an async_wait is pending
  bool m_closing = false;  // close() was called: no more writes, EOF after the drain
  std::string m_closed_reason = "stdin closed";
};

}  // namespace switchboard::process
