#include "checkpoint/GitProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "process/ProcessGroupRegistry.h"
#include "process/Spawn.h"
#include "switchboard/process/Environment.h"

namespace switchboard::checkpoint {

namespace {

constexpr std::size_t kStderrCap = 64 * 1024;

std::vector<std::string> environment_for(const GitPlace& place, const std::string& search_path) {
  auto environment = process::Environment::empty();
  environment.set("PATH", search_path)
      .set("HOME", place.git_dir.parent_path().string())
      .set("LC_ALL", "C")
      .set("GIT_DIR", place.git_dir.string())
      .set("GIT_INDEX_FILE", place.index_file.string())
      .set("GIT_WORK_TREE", place.work_tree.string())
      .set("GIT_CONFIG_NOSYSTEM", "1")
      .set("GIT_CONFIG_GLOBAL", "/dev/null")
      .set("GIT_ATTR_NOSYSTEM", "1")
      .set("GIT_TERMINAL_PROMPT", "0")
      .set("GIT_NO_REPLACE_OBJECTS", "1")
      // git frees and grows its heap around every blob it compresses; with glibc's defaults that is a brk system
      // call each time, which made recording a 10,000-file tree take seconds of system time (measured: 39,000
      // brk calls, 70 % of the run). A heap kept once grown costs a few MiB for the life of one git process.
      .set("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=67108864");
  return environment.entries();
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Reads what is there; false at EOF or on an error other than "try again".
bool drain(int fd, std::string& into, std::size_t cap, const GitProcess::Sink* sink, bool& sink_stopped) {
  std::array<char, 64 * 1024> buffer;
  for (;;) {
    const ssize_t got = ::read(fd, buffer.data(), buffer.size());
    if (got > 0) {
      const std::string_view chunk(buffer.data(), static_cast<std::size_t>(got));
      if (sink && *sink) {
        if (!sink_stopped && !(*sink)(chunk)) sink_stopped = true;
      } else if (into.size() < cap) {
        into.append(chunk.substr(0, cap - into.size()));
      }
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

}  // namespace

GitProcess::GitProcess(std::filesystem::path executable, std::string search_path)
    : m_executable(std::move(executable)), m_search_path(std::move(search_path)) {}

CheckpointResult<GitOutput> GitProcess::run(const GitPlace& place, const std::vector<std::string>& args,
                                            std::string_view input, const Sink& sink) const {
  Reply reply;
  if (sink) reply = [&sink](std::string_view chunk, std::string&, bool&) { return sink(chunk); };
  return exchange(place, args, std::string(input), /*input_finished=*/true, reply);
}

CheckpointResult<GitOutput> GitProcess::converse(const GitPlace& place, const std::vector<std::string>& args,
                                                 std::string input, const Reply& reply) const {
  return exchange(place, args, std::move(input), /*input_finished=*/false, reply);
}

CheckpointResult<GitOutput> GitProcess::exchange(const GitPlace& place, const std::vector<std::string>& args,
                                                 std::string input, bool input_finished, const Reply& reply) const {
  if (m_refusing.load(std::memory_order_relaxed)) return store_unavailable("the daemon is shutting down");
  std::vector<std::string> argv{"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  process::SpawnOptions options;
  options.working_directory = place.work_tree;
  options.dies_with_parent = true;
  // This thread is not the reactor's: until git is registered, the daemon's reaper must not take it for adopted.
  auto& registry = process::ProcessGroupRegistry::the();
  registry.begin_spawn();
  auto spawned = process::spawn_with_pipes(m_executable, argv, environment_for(place, m_search_path), options);
  const bool registered = spawned && registry.add(spawned->pid);
  registry.end_spawn();
  if (!spawned) return store_unavailable("cannot run git: " + spawned.error().message);
  auto child = std::move(*spawned);

  GitOutput output;
  bool sink_stopped = false;
  std::size_t written = 0;
  // What a reply asks to write goes after what is still unwritten.
  Sink sink;
  if (reply) {
    sink = [&](std::string_view chunk) {
      std::string more;
      const bool go_on = reply(chunk, more, input_finished);
      input.append(more);
      return go_on;
    };
  }
  if (input.empty() && input_finished) child.stdin_write.reset();
  bool out_open = set_nonblocking(child.stdout_read.get());
  bool err_open = set_nonblocking(child.stderr_read.get());
  if (child.stdin_write) set_nonblocking(child.stdin_write.get());
  while (out_open || err_open) {
    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    int out_slot = -1, err_slot = -1, in_slot = -1;
    if (out_open) { fds[count] = {child.stdout_read.get(), POLLIN, 0}; out_slot = static_cast<int>(count++); }
    if (err_open) { fds[count] = {child.stderr_read.get(), POLLIN, 0}; err_slot = static_cast<int>(count++); }
    if (child.stdin_write && written < input.size()) {
      fds[count] = {child.stdin_write.get(), POLLOUT, 0};
      in_slot = static_cast<int>(count++);
    }
    if (::poll(fds.data(), count, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (in_slot >= 0 && fds[in_slot].revents != 0) {
      if (fds[in_slot].revents & (POLLERR | POLLHUP)) {
        child.stdin_write.reset();
      } else {
        const ssize_t put = ::write(child.stdin_write.get(), input.data() + written, input.size() - written);
        if (put > 0) written += static_cast<std::size_t>(put);
        if (put < 0 && errno != EAGAIN && errno != EINTR) child.stdin_write.reset();
      }
    }
    if (out_slot >= 0 && fds[out_slot].revents != 0)
      out_open = drain(child.stdout_read.get(), output.out, SIZE_MAX, &sink, sink_stopped);
    if (err_slot >= 0 && fds[err_slot].revents != 0)
      err_open = drain(child.stderr_read.get(), output.err, kStderrCap, nullptr, sink_stopped);
    if (sink_stopped) {
      ::kill(-child.pid, SIGKILL);
      break;
    }
    if (child.stdin_write && input_finished && written == input.size()) child.stdin_write.reset();
  }
  child.stdin_write.reset();
  child.stdout_read.reset();
  child.stderr_read.reset();
  // Waits for the exit without reaping, so that the group id cannot have been reused when what the git command
  // started, if anything, is killed with it; then reaps.
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  ::kill(-child.pid, SIGKILL);
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(child.pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  if (registered) registry.remove(child.pid);
  if (done != child.pid) return store_unavailable(std::string("cannot wait for git: ") + std::strerror(errno));
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

CheckpointResult<std::string> GitProcess::output(const GitPlace& place, const std::vector<std::string>& args,
                                                 std::string_view what, std::string_view input) const {
  auto ran = run(place, args, input);
  if (!ran) return ran.error();
  if (ran->exit_code != 0) {
    std::string reason = ran->err.substr(0, ran->err.find('\n'));
    if (reason.empty()) reason = "git exited with " + std::to_string(ran->exit_code);
    return store_unavailable(std::string(what) + ": " + reason);
  }
  return std::move(ran->out);
}

}  // namespace switchboard::checkpoint
