#pragma once

#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace switchboard::transport {

// The single writer of an output descriptor (stdout): bytes appended while a write is in flight are batched
// into the next write, so there is one write in flight at a time, lines are never interleaved and many small
// events cost one syscall. Never blocks the reactor on a pipe or socket; a regular file (or /dev/null) cannot
// be polled and is written directly, which does not block either.
//
// Output is never dropped while the peer reads; if the peer stops reading the backlog grows and its
// high-water mark is logged. Once the peer is gone (EPIPE), further output is discarded and on_broken fires.
class FdWriter : public std::enable_shared_from_this<FdWriter> {
 public:
  FdWriter(boost::asio::io_context& io, int fd);
  ~FdWriter();

  void write(std::string_view bytes);
  // Three pieces as one unit, without a temporary concatenation. Inline: the transport's envelope pieces are
  // literals, whose copies then compile to a few moves.
  void write(std::string_view a, std::string_view b, std::string_view c) {
    if (m_broken) return;
    m_pending.append(a, b, c);
    kick();
  }

  // Closes the descriptor now, discarding what was not written, even while a wait for writability is pending
  // (which would otherwise keep it open for as long as the peer does not read). Idempotent; the destructor
  // calls it.
  void close();

  // Calls `done` once everything written so far has left (or the peer is gone). Used by shutdown.
  void when_drained(std::function<void()> done);
  void on_broken(std::function<void()> callback) { m_on_broken = std::move(callback); }

 private:
  void kick();
  void start_write();
  void write_now();
  void after_write();
  void write_directly();
  void fail(const std::string& why);
  void check_drained();

  boost::asio::io_context& m_io;
  boost::asio::posix::stream_descriptor m_stream;
  int m_fd = -1;
  bool m_pollable = false;
  bool m_writing = false;
  bool m_broken = false;
  // Bytes waiting to be written. Not a std::string: appending an event (envelope, event, envelope) is on the
  // hot path, and std::string checks capacity and calls out once per piece; this checks once, copies the three.
  class Buffer {
   public:
    void append(std::string_view a, std::string_view b = {}, std::string_view c = {}) {
      const std::size_t n = a.size() + b.size() + c.size();
      if (n == 0) return;
      if (m_capacity - m_size < n) grow(n);
      char* out = m_data.get() + m_size;
      for (const std::string_view piece : {a, b, c}) {
        if (piece.empty()) continue;  // its data() may be null, which memcpy must not get
        std::memcpy(out, piece.data(), piece.size());
        out += piece.size();
      }
      m_size += n;
    }
    const char* data() const { return m_data.get(); }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    void clear() { m_size = 0; }  // keeps the capacity: the next batch reuses it
    void swap(Buffer& other) noexcept {
      std::swap(m_data, other.m_data);
      std::swap(m_size, other.m_size);
      std::swap(m_capacity, other.m_capacity);
    }

   private:
    void grow(std::size_t n);

    std::unique_ptr<char[]> m_data;
    std::size_t m_size = 0;
    std::size_t m_capacity = 0;
  };

  Buffer m_pending;    // appended to while a write is in flight
  Buffer m_in_flight;  // being written; nothing appends to it
  std::size_t m_offset = 0;  // bytes of m_in_flight already written
  std::size_t m_high_water_logged = 0;
  std::function<void()> m_on_broken;
  std::function<void()> m_when_drained;
};

}  // namespace switchboard::transport
