#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <utility>

#include <catch2/catch.hpp>

namespace switchboard::testing {

// A pipe (close-on-exec) that closes whichever of its ends the test has not closed itself.
class Pipe {
 public:
  Pipe() { REQUIRE(::pipe2(m_fds, O_CLOEXEC) == 0); }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int read_end() const { return m_fds[0]; }
  int write_end() const { return m_fds[1]; }
  void close_read() {
    if (m_fds[0] >= 0) ::close(std::exchange(m_fds[0], -1));
  }
  void close_write() {
    if (m_fds[1] >= 0) ::close(std::exchange(m_fds[1], -1));
  }

 private:
  int m_fds[2]{-1, -1};
};

}  // namespace switchboard::testing
