#include "switchboard/transport/FdReader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace switchboard::transport {

std::shared_ptr<FdReader> FdReader::create(boost::asio::io_context& io, int fd, OnData on_data, OnEnd on_end) {
  return std::make_shared<FdReader>(io, fd, std::move(on_data), std::move(on_end));
}

FdReader::FdReader(boost::asio::io_context& io, int fd, OnData on_data, OnEnd on_end)
    : m_io(io), m_stream(io), m_on_data(std::move(on_data)), m_on_end(std::move(on_end)) {
  m_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (m_fd < 0) {
    spdlog::error("cannot duplicate input fd {}: {}", fd, std::strerror(errno));
    return;
  }
  boost::system::error_code error;
  m_stream.assign(m_fd, error);
  if (!error) {
    m_pollable = true;
    return;
  }
  // EPERM from epoll: a regular file or /dev/null. Read it directly.
  m_stream.release();
}

FdReader::~FdReader() { close_descriptor(); }

void FdReader::close_descriptor() {
  if (m_fd < 0) return;
  if (m_pollable) {
    // A read in flight completes as aborted, which a stopped reader ignores. The open file stays non-blocking if
    // a read made it so (Asio does not undo that at close): an owner that shares it with a parent restores its
    // flags itself (LocalSocketServer does), since a writer may still be draining into the same file.
    boost::system::error_code ignored;
    m_stream.close(ignored);
  } else {
    ::close(m_fd);
  }
  m_fd = -1;
}

void FdReader::start() {
  if (m_fd < 0) {
    boost::asio::post(m_io, [self = shared_from_this()] { self->finish(); });
    return;
  }
  if (m_pollable) read_async();
  else boost::asio::post(m_io, [self = shared_from_this()] { self->read_blocking(); });
}

void FdReader::stop() {
  m_stopped = true;
  // Closed now rather than when the last handler lets go of this reader: a peer that waits for the other end to
  // be closed (a handed-over stdin, a child's pipe) must not wait for the reactor's next turn.
  close_descriptor();
}

void FdReader::finish() {
  if (m_stopped) return;
  m_stopped = true;
  if (m_on_end) m_on_end();
}

void FdReader::read_async() {
  m_stream.async_read_some(boost::asio::buffer(m_buffer),
                           [self = shared_from_this()](const boost::system::error_code& error, std::size_t n) {
                             if (self->m_stopped) return;
                             if (n > 0) self->m_on_data(std::string_view(self->m_buffer.data(), n));
                             if (self->m_stopped) return;
                             if (error) {
                               if (error != boost::asio::error::eof) spdlog::warn("input read failed: {}", error.message());
                               self->finish();
                               return;
                             }
                             self->read_async();
                           });
}

void FdReader::read_blocking() {
  if (m_stopped || m_fd < 0) return;
  ssize_t n;
  do {
    n = ::read(m_fd, m_buffer.data(), m_buffer.size());
  } while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n < 0) spdlog::warn("input read failed: {}", std::strerror(errno));
    finish();
    return;
  }
  m_on_data(std::string_view(m_buffer.data(), static_cast<std::size_t>(n)));
  boost::asio::post(m_io, [self = shared_from_this()] { self->read_blocking(); });
}

}  // namespace switchboard::transport
