#include "switchboard/transport/FdWriter.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

namespace switchboard::transport {
namespace {

// Log a backlog warning each time it doubles past this size: the peer is not reading.
constexpr std::size_t kBacklogWarning = 16 * 1024 * 1024;

}  // namespace

FdWriter::FdWriter(boost::asio::io_context& io, int fd) : m_io(io), m_stream(io) {
  m_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (m_fd < 0) {
    spdlog::error("cannot duplicate output fd {}: {}", fd, std::strerror(errno));
    m_broken = true;
    return;
  }
  boost::system::error_code error;
  m_stream.assign(m_fd, error);
  if (!error) {
    m_pollable = true;
    m_stream.native_non_blocking(true, error);
    // A bigger pipe buffer means fewer waits for the reader (best effort; not every pipe allows it).
    struct stat info {};
    if (::fstat(m_fd, &info) == 0 && S_ISFIFO(info.st_mode)) (void)::fcntl(m_fd, F_SETPIPE_SZ, 1 << 20);
    return;
  }
  m_stream.release();
}

FdWriter::~FdWriter() { close(); }

void FdWriter::close() {
  if (m_fd < 0) return;
  // Broken first: what the close cancels completes with an error that is ours, not the peer's, and is not logged.
  m_broken = true;
  m_pending.clear();
  m_in_flight.clear();
  m_offset = 0;
  if (m_pollable) {
    boost::system::error_code ignored;
    // O_NONBLOCK belongs to the open file, which we may share with our parent (a terminal, say): hand it back
    // in blocking mode.
    m_stream.native_non_blocking(false, ignored);
    m_stream.close(ignored);
  } else {
    ::close(m_fd);
  }
  m_fd = -1;
}

void FdWriter::Buffer::grow(std::size_t n) {
  const std::size_t capacity = std::max({m_size + n, 2 * m_capacity, std::size_t{4096}});
  auto data = std::make_unique_for_overwrite<char[]>(capacity);
  if (m_size != 0) std::memcpy(data.get(), m_data.get(), m_size);
  m_data = std::move(data);
  m_capacity = capacity;
}

void FdWriter::write(std::string_view bytes) {
  if (m_broken) return;
  m_pending.append(bytes);
  kick();
}

void FdWriter::kick() {
  if (m_writing) {
    if (m_pending.size() >= kBacklogWarning && m_pending.size() >= 2 * m_high_water_logged) {
      m_high_water_logged = m_pending.size();
      spdlog::warn("output backlog at {} bytes: the reader is not keeping up", m_pending.size());
    }
    return;
  }
  if (m_pollable) start_write();
  else write_directly();
}

void FdWriter::start_write() {
  m_writing = true;
  m_in_flight.swap(m_pending);
  m_offset = 0;
  write_now();
}

// Writes as much as the descriptor accepts right now, in as few write() calls as it takes (no 64 KiB cap,
// no handler turn per chunk); waits for writability only when the pipe is full.
void FdWriter::write_now() {
  if (m_fd < 0) return;  // closed while a wait was pending
  while (m_offset < m_in_flight.size()) {
    const ssize_t n = ::write(m_fd, m_in_flight.data() + m_offset, m_in_flight.size() - m_offset);
    if (n >= 0) {
      m_offset += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      m_stream.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                          [self = shared_from_this()](const boost::system::error_code& error) {
                            if (error) {
                              self->m_writing = false;
                              self->fail(error.message());
                              return;
                            }
                            self->write_now();
                          });
      return;
    }
    m_writing = false;
    fail(std::strerror(errno));
    return;
  }
  // Like an asio completion, finish in a posted handler, so output appended during this turn is batched.
  boost::asio::post(m_io, [self = shared_from_this()] { self->after_write(); });
}

void FdWriter::after_write() {
  m_writing = false;
  m_in_flight.clear();
  if (!m_pending.empty()) start_write();
  else check_drained();
}

void FdWriter::write_directly() {
  std::string_view rest(m_pending.data(), m_pending.size());
  while (!rest.empty()) {
    const ssize_t n = ::write(m_fd, rest.data(), rest.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(std::strerror(errno));
      return;
    }
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  m_pending.clear();
  check_drained();
}

void FdWriter::fail(const std::string& why) {
  if (m_broken) return;
  m_broken = true;
  m_pending.clear();
  spdlog::info("output closed: {}", why);
  if (m_on_broken) m_on_broken();
  check_drained();
}

void FdWriter::when_drained(std::function<void()> done) {
  m_when_drained = std::move(done);
  check_drained();
}

void FdWriter::check_drained() {
  if (!m_when_drained) return;
  if (!m_broken && (m_writing || !m_pending.empty())) return;
  auto done = std::move(m_when_drained);
  m_when_drained = nullptr;
  boost::asio::post(m_io, std::move(done));
}

}  // namespace switchboard::transport
