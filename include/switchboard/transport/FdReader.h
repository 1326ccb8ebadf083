#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

namespace switchboard::transport {

// Reads a file descriptor chunk by chunk on the io_context and hands each chunk to a callback.
//
// Pipes, sockets and terminals are watched with epoll through a stream_descriptor. epoll refuses regular
// files and /dev/null (EPERM), which is what `switchboard stdio < requests.ndjson` gives us; for those the
// reader falls back to plain read() calls, one bounded chunk per posted handler, so the reactor still
// interleaves other work and never blocks for long.
class FdReader : public std::enable_shared_from_this<FdReader> {
 public:
  using OnData = std::function<void(std::string_view chunk)>;
  using OnEnd = std::function<void()>;  // end of input or a read error (logged)

  // Duplicates `fd` (close-on-exec); the original stays open and untouched.
  static std::shared_ptr<FdReader> create(boost::asio::io_context& io, int fd, OnData on_data, OnEnd on_end);

  FdReader(boost::asio::io_context& io, int fd, OnData on_data, OnEnd on_end);
  ~FdReader();

  void start();
  // Stops reading and closes the duplicate at once; on_end is not called afterwards.
  void stop();

 private:
  void read_async();
  void read_blocking();
  void finish();
  void close_descriptor();

  boost::asio::io_context& m_io;
  boost::asio::posix::stream_descriptor m_stream;
  int m_fd = -1;
  bool m_pollable = false;
  bool m_stopped = false;
  OnData m_on_data;
  OnEnd m_on_end;
  // Not zeroed: read() fills what it returns, and zeroing 64 KiB would cost every reader (one per pipe and
  // connection, several per agent) sixteen page faults before its first byte arrives.
  std::array<char, 64 * 1024> m_buffer;
};

}  // namespace switchboard::transport
