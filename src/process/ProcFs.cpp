#include "process/ProcFs.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>

#include "process/UniqueFd.h"

namespace switchboard::process::procfs {
namespace {

// Reads what one read() gives of a /proc file (procfs answers a small file whole); -1 if it cannot be opened.
// Raw descriptors, not streams: a scan opens hundreds of these files, and a stream's set-up costs more than the read.
ssize_t read_once(const char* path, char* buffer, std::size_t capacity) {
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return -1;
  ssize_t n;
  do {
    n = ::read(fd.get(), buffer, capacity);
  } while (n < 0 && errno == EINTR);
  return n;
}

std::optional<pid_t> parse_pid(std::string_view text) {
  pid_t pid = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + text.size(), pid);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + text.size() || pid <= 0) return std::nullopt;
  return pid;
}

// "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
// priority nice num_threads itrealvalue starttime ...": comm may hold spaces and parentheses, so the fields are
// read after the last ')'.
std::optional<ProcessStat> parse_stat(pid_t pid, std::string_view text) {
  const auto close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  const std::string rest(text.substr(close + 1));
  ProcessStat stat;
  stat.pid = pid;
  long ppid = 0;
  long pgrp = 0;
  const int fields = std::sscanf(rest.c_str(), " %c %ld %ld %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
                                 &stat.state, &ppid, &pgrp, &stat.start_ticks);
  if (fields < 3) return std::nullopt;
  stat.ppid = static_cast<pid_t>(ppid);
  stat.pgrp = static_cast<pid_t>(pgrp);
  return stat;
}

}  // namespace

std::optional<ProcessStat> read_stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::array<char, 1024> buffer;
  const ssize_t n = read_once(path, buffer.data(), buffer.size());
  if (n <= 0) return std::nullopt;
  return parse_stat(pid, std::string_view(buffer.data(), static_cast<std::size_t>(n)));
}

std::vector<ProcessStat> all_processes() {
  std::vector<ProcessStat> processes;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return processes;
  while (const dirent* entry = ::readdir(proc)) {
    const auto pid = parse_pid(entry->d_name);
    if (!pid) continue;
    if (auto stat = read_stat(*pid)) processes.push_back(*stat);
  }
  ::closedir(proc);
  return processes;
}

std::optional<std::vector<ProcessStat>> own_children() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return std::nullopt;
  std::vector<ProcessStat> children;
  bool have_files = true;
  // One read per thread with room for thousands of pids: the kernel builds the list while it fills the buffer,
  // and a list read in pieces may miss a child when the list changes between the pieces.
  std::string buffer(64 * 1024, '\0');
  while (const dirent* entry = ::readdir(tasks)) {
    if (!parse_pid(entry->d_name)) continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    const ssize_t n = read_once((task + "/children").c_str(), buffer.data(), buffer.size());
    if (n < 0) {
      // A thread that ended since the listing took its directory with it; a kernel without the feature has the
      // directory but no children file in it.
      if (::access(task.c_str(), F_OK) != 0) continue;
      have_files = false;
      break;
    }
    std::string_view list(buffer.data(), static_cast<std::size_t>(n));
    while (!list.empty()) {
      const auto end = list.find(' ');
      const auto pid = parse_pid(list.substr(0, end));
      list.remove_prefix(end == std::string_view::npos ? list.size() : end + 1);
      if (!pid) continue;
      // A child that exited and was reaped between the list and this read is simply not there any more.
      if (auto stat = read_stat(*pid)) children.push_back(*stat);
    }
  }
  ::closedir(tasks);
  if (!have_files) return std::nullopt;
  return children;
}

bool environment_contains(pid_t pid, std::string_view entry) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/environ", static_cast<int>(pid));
  const UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  // Variables are NUL-terminated; one may straddle two reads, so the unfinished tail is carried over.
  std::string pending;
  std::array<char, 16 * 1024> buffer;
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return !pending.empty() && pending == entry;  // a last variable without its NUL
    std::string_view chunk(buffer.data(), static_cast<std::size_t>(n));
    while (!chunk.empty()) {
      const auto nul = chunk.find('\0');
      if (nul == std::string_view::npos) {
        pending.append(chunk);
        break;
      }
      if (pending.empty()) {
        if (chunk.substr(0, nul) == entry) return true;
      } else {
        pending.append(chunk.substr(0, nul));
        if (pending == entry) return true;
        pending.clear();
      }
      chunk.remove_prefix(nul + 1);
    }
  }
}

}  // namespace switchboard::process::procfs
