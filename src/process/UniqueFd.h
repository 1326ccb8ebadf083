#pragma once

#include <unistd.h>

#include <utility>

namespace switchboard::process {

// Owns one file descriptor and closes it on destruction; move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : m_fd(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.m_fd, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return m_fd; }
  explicit operator bool() const { return m_fd >= 0; }
  // Gives up ownership (e.g. to an Asio descriptor, which closes it itself).
  int release() { return std::exchange(m_fd, -1); }
  void reset(int fd = -1) {
    // close() is not retried on EINTR: on Linux the descriptor is released even then.
    if (m_fd >= 0) ::close(m_fd);
    m_fd = fd;
  }

 private:
  int m_fd = -1;
};

}  // namespace switchboard::process
