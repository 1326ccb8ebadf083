// exec_timer: runs the program named by $EXEC_TIMER_TARGET with this process's arguments (argv[0] included, so
// the program sees the same argv as when started directly), waits for it, and appends one line to the file named
// by $EXEC_TIMER_LOG: its start and end (CLOCK_MONOTONIC seconds, taken right before the fork and right after
// the wait), its CPU time (user + system seconds) and its peak RSS (KiB), both from wait4. Exits with the
// program's status.
//
// The peak RSS is the program's own only when measured so: a process forked from a larger one (a Python harness)
// starts with the parent's peak, which the kernel keeps across exec; the timer is small, so its child's is not.
//
// bench/run-vs-headless puts it in front of the agent CLI in both columns, `claude -p` and `switchboard run`
// (as the agent's binary), so that a run's wall time splits into what comes before the CLI starts, the CLI's own
// lifetime and what comes after it exits; the timer's own cost (one fork and one exec) is the same in both.
// Standard input, output and error are the program's own: nothing is read or written on them.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

double monotonic_seconds() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

double seconds(const timeval& value) { return static_cast<double>(value.tv_sec) + static_cast<double>(value.tv_usec) / 1e6; }

}  // namespace

int main(int, char** argv) {
  const char* target = std::getenv("EXEC_TIMER_TARGET");
  const char* log = std::getenv("EXEC_TIMER_LOG");
  if (target == nullptr || log == nullptr) {
    std::fprintf(stderr, "exec_timer: set EXEC_TIMER_TARGET and EXEC_TIMER_LOG\n");
    return 2;
  }
  const double started = monotonic_seconds();
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "exec_timer: fork: %s\n", std::strerror(errno));
    return 126;
  }
  if (child == 0) {
    argv[0] = const_cast<char*>(target);  // the program sees the argv it would see started directly
    execv(target, argv);
    std::fprintf(stderr, "exec_timer: cannot run %s: %s\n", target, std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  const double ended = monotonic_seconds();
  if (std::FILE* out = std::fopen(log, "a")) {
    std::fprintf(out, "%.6f %.6f %.6f %ld\n", started, ended, seconds(usage.ru_utime) + seconds(usage.ru_stime),
                 usage.ru_maxrss);
    std::fclose(out);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
