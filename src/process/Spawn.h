#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "switchboard/process/ProcessError.h"
#include "process/UniqueFd.h"

namespace switchboard::process {

// A child just started by spawn_with_pipes: its pid (= its process group id) and the parent's pipe ends.
struct SpawnedChild {
  pid_t pid = -1;
  UniqueFd stdin_write;   // parent → child stdin
  UniqueFd stdout_read;   // child stdout → parent
  UniqueFd stderr_read;   // child stderr → parent
};

struct SpawnOptions {
  // Empty: the child starts in the daemon's working directory.
  std::filesystem::path working_directory;
  // The child is SIGKILLed by the kernel when the thread that spawned it ends (PR_SET_PDEATHSIG): if the daemon
  // is SIGKILLed, no handler of ours runs, and this is what still takes its agents down. Spawn from the
  // io_context thread (the main thread), never from a short-lived helper thread.
  bool dies_with_parent = false;
};

// Starts `executable` (execve semantics: no PATH lookup; `argv` includes argv[0]; `envp` is the complete
// environment) and nothing else (no waiting). The way posix_spawn does it, without copying the daemon's memory:
// clone(CLONE_VM | CLONE_VFORK) runs a few system calls in the child on a stack of its own while this thread
// waits, until the child has exec'd or failed. posix_spawn itself cannot be used because it runs no code of
// ours in the child, and the parent-death signal must be set there. In the child, in this order:
// - every signal back to its default disposition (the daemon ignores SIGPIPE, and an ignored disposition
//   survives exec); all signals stay blocked until just before execve, so no handler of the daemon can run in a
//   child that shares the daemon's memory;
// - a new process group led by the child (pgid = pid), so kill(-pid) reaches everything it starts unless that
//   calls setsid();
// - three pipes, created O_CLOEXEC, whose child ends are dup2'ed onto 0, 1 and 2 (dup2 clears close-on-exec on
//   the copy, so only the copies cross the exec);
// - every other descriptor closed (close_range(3, ~0), or one close each below the descriptor limit on a kernel
//   older than 5.9): Asio creates its sockets, epoll and eventfd descriptors
//   without close-on-exec, and an agent must not inherit the daemon's listening socket or client connections;
// - the working directory set in the child, never in the daemon;
// - the parent-death signal, if asked, then a check that the parent is still the same (it may have died before
//   the prctl, and then nobody would ever send the signal);
// - an empty signal mask, and execve.
// A step that fails makes the spawn fail with that step's errno (ENOENT for a missing executable, and so on).
ProcessResult<SpawnedChild> spawn_with_pipes(const std::filesystem::path& executable,
                                             const std::vector<std::string>& argv,
                                             const std::vector<std::string>& envp, const SpawnOptions& options);

}  // namespace switchboard::process
