#pragma once

#include <cstddef>
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
  // Two pieces as one unit, without a temporary concatenation.
  void write(std::string_view a, std::string_view b, std::string_view c);

  // Calls `done` once everything written so far has left (or the peer is gone). Used by shutdown.
  void when_drained(std::function<void()> done);
  void on_broken(std::function<void()> callback) { m_on_broken = std::move(callback); }

  std::size_t backlog_bytes() const { return m_pending.size() + m_in_flight.size(); }
  bool broken() const { return m_broken; }

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
  std::string m_pending;    // appended to while a write is in flight
  std::string m_in_flight;  // being written; nothing appends to it
  std::size_t m_offset = 0;  // bytes of m_in_flight already written
  std::size_t m_high_water_logged = 0;
  std::function<void()> m_on_broken;
  std::function<void()> m_when_drained;
};

}  // namespace switchboard::transport
