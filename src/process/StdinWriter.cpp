#include "process/StdinWriter.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

namespace switchboard::process {

namespace {
// Queued messages gathered into one writev; more only means more work per syscall for a pipe of 64 KiB.
constexpr std::size_t kMaxIovecs = 64;
}  // namespace

std::shared_ptr<StdinWriter> StdinWriter::create(boost::asio::io_context& io, UniqueFd fd, std::size_t limit_bytes) {
  return std::make_shared<StdinWriter>(io, std::move(fd), limit_bytes);
}

StdinWriter::StdinWriter(boost::asio::io_context& io, UniqueFd fd, std::size_t limit_bytes)
    : m_stream(io), m_limit_bytes(limit_bytes) {
  // Our end only: a pipe's two ends are separate open file descriptions, so the child's stdin stays blocking.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK);
  boost::system::error_code error;
  m_stream.assign(fd.get(), error);
  if (error) {
    spdlog::warn("cannot watch a child's stdin: {}", error.message());
    m_closed_reason = "stdin unavailable: " + error.message();
    return;  // fd closes with the UniqueFd; every write reports StdinClosed
  }
  fd.release();
}

ProcessResult<void> StdinWriter::write(std::string bytes) {
  if (closed()) return ProcessError{ProcessError::Code::StdinClosed, m_closed_reason, 0};
  if (bytes.empty()) return {};
  if (bytes.size() > m_limit_bytes - m_queued_bytes) {
    return ProcessError{ProcessError::Code::StdinQueueFull,
                        "stdin queue full: " + std::to_string(m_queued_bytes) + " of " +
                            std::to_string(m_limit_bytes) + " bytes waiting, " + std::to_string(bytes.size()) +
                            " more refused (the child is not reading its stdin)",
                        0};
  }
  m_queued_bytes += bytes.size();
  m_queue.push_back(std::move(bytes));
  if (!m_waiting) flush();
  // The child may have closed its end just now; the bytes were not delivered.
  if (!m_stream.is_open()) return ProcessError{ProcessError::Code::StdinClosed, m_closed_reason, EPIPE};
  return {};
}

void StdinWriter::close() {
  if (m_closing) return;
  m_closing = true;
  m_closed_reason = "stdin closed";
  if (m_queue.empty()) close_now();
}

void StdinWriter::abort() {
  m_closing = true;
  m_closed_reason = "stdin closed";
  close_now();
}

void StdinWriter::close_now() {
  m_queue.clear();
  m_queued_bytes = 0;
  m_front_offset = 0;
  boost::system::error_code ignored;
  m_stream.close(ignored);  // also cancels a pending wait
}

void StdinWriter::flush() {
  while (!m_queue.empty() && m_stream.is_open()) {
    std::array<iovec, kMaxIovecs> vectors{};
    std::size_t count = 0;
    for (auto it = m_queue.begin(); it != m_queue.end() && count < vectors.size(); ++it, ++count) {
      const std::size_t skip = count == 0 ? m_front_offset : 0;
      vectors[count].iov_base = it->data() + skip;
      vectors[count].iov_len = it->size() - skip;
    }
    const ssize_t written = ::writev(m_stream.native_handle(), vectors.data(), static_cast<int>(count));
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return wait_writable();
      const bool child_closed = errno == EPIPE;
      if (!child_closed) spdlog::warn("writing a child's stdin failed: {}", std::strerror(errno));
      m_closed_reason = child_closed ? "the child closed its stdin" : std::string("stdin write failed: ") +
                                                                         std::strerror(errno);
      m_closing = true;
      return close_now();
    }
    auto remaining = static_cast<std::size_t>(written);
    m_queued_bytes -= remaining;
    while (remaining > 0) {
      const std::size_t front_left = m_queue.front().size() - m_front_offset;
      if (remaining < front_left) {
        m_front_offset += remaining;
        break;
      }
      remaining -= front_left;
      m_queue.pop_front();
      m_front_offset = 0;
    }
  }
  if (m_queue.empty() && m_closing) close_now();
}

void StdinWriter::wait_writable() {
  m_waiting = true;
  m_stream.async_wait(boost::asio::posix::stream_descriptor::wait_write,
                      [self = shared_from_this()](const boost::system::error_code& error) {
                        self->m_waiting = false;
                        if (error) return;  // closed or cancelled
                        self->flush();
                      });
}

}  // namespace switchboard::process
