#pragma once

// What the stdio benchmarks share: a child on pipes, a blocking line reader, and percentile statistics. A
// benchmark is a client measuring wall-clock round trips, so everything here is plain blocking POSIX I/O with no
// event loop in between that could add its own latency.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

extern char** environ;

namespace bench {

using Clock = std::chrono::steady_clock;

inline const char* g_program = "bench";

[[noreturn]] inline void die(const char* what) {
  std::fprintf(stderr, "%s: %s: %s\n", g_program, what, std::strerror(errno));
  std::exit(1);
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", g_program, what.c_str());
  std::exit(1);
}

// The relay benchmarks' clock: the fake agents stamp each delta with it and bench_relay reads it when the line
// arrives, so both sides read the same clock. A stamp is written in kStampDigits digits (CLOCK_MONOTONIC in ns
// fits in 19 for ~317 years of uptime).
constexpr int kStampDigits = 19;
inline std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return std::int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
}

inline double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// A child process with its stdin and stdout on pipes (stderr inherited, or /dev/null).
struct Child {
  pid_t pid = -1;
  int to_child = -1;    // write end of the child's stdin
  int from_child = -1;  // read end of the child's stdout
};

// Spawns `args` (looked up in PATH) with `env` (nullptr: this process's environment).
inline Child spawn(const std::vector<std::string>& args, char* const* env = nullptr, bool quiet_stderr = false) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) die("pipe2");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  if (quiet_stderr) posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  Child child;
  const int rc = ::posix_spawnp(&child.pid, argv[0], &actions, nullptr, argv.data(), env ? env : environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    errno = rc;
    die(("posix_spawn " + args[0]).c_str());
  }
  ::close(in[0]);
  ::close(out[1]);
  child.to_child = in[1];
  child.from_child = out[0];
  return child;
}

inline void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      die("write");
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Blocking line reader over a descriptor; lines are returned without their '\n'.
class LineReader {
 public:
  explicit LineReader(int fd) : m_fd(fd), m_buffer(64 * 1024) {}

  // The next line, or false at end of input.
  bool next(std::string_view& line) {
    for (;;) {
      if (const void* nl = std::memchr(m_buffer.data() + m_begin, '\n', m_end - m_begin)) {
        const auto length = static_cast<std::size_t>(static_cast<const char*>(nl) - (m_buffer.data() + m_begin));
        line = std::string_view(m_buffer.data() + m_begin, length);
        m_begin += length + 1;
        return true;
      }
      if (m_begin == m_end) m_begin = m_end = 0;
      if (m_end == m_buffer.size()) {
        if (m_begin > 0) {
          std::memmove(m_buffer.data(), m_buffer.data() + m_begin, m_end - m_begin);
          m_end -= m_begin;
          m_begin = 0;
        } else {
          m_buffer.resize(m_buffer.size() * 2);
        }
      }
      const ssize_t n = ::read(m_fd, m_buffer.data() + m_end, m_buffer.size() - m_end);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("read");
      }
      if (n == 0) return false;
      m_end += static_cast<std::size_t>(n);
    }
  }

 private:
  int m_fd;
  std::vector<char> m_buffer;
  std::size_t m_begin = 0;
  std::size_t m_end = 0;
};

// True if `line` is a successful response to request `id` (with or without a "jsonrpc" member before it).
inline bool is_result_for(std::string_view line, std::int64_t id) {
  char needle[40];
  const int n = std::snprintf(needle, sizeof needle, "\"id\":%" PRId64 ",", id);
  return line.find(std::string_view(needle, static_cast<std::size_t>(n))) != std::string_view::npos &&
         line.find("\"result\":") != std::string_view::npos;
}

// Closes the child's stdin, reads its stdout to the end and returns its exit status (or -1 if it did not
// exit normally).
inline int finish(Child& child, LineReader& reader) {
  ::close(child.to_child);
  std::string_view line;
  while (reader.next(line)) {
  }
  ::close(child.from_child);
  int status = 0;
  while (::waitpid(child.pid, &status, 0) < 0) {
    if (errno != EINTR) die("waitpid");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct Stats {
  double median, p90, p99, max, min, mean;
};

inline Stats stats_of(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) {
    const auto i = static_cast<std::size_t>(q * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(i, samples.size() - 1)];
  };
  double sum = 0;
  for (const double s : samples) sum += s;
  return Stats{at(0.5), at(0.9), at(0.99), samples.back(), samples.front(), sum / static_cast<double>(samples.size())};
}

inline const char* verdict(double value, double target) { return value <= target ? "ok" : "MISSED"; }

}  // namespace bench
