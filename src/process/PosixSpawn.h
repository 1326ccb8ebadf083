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

// The posix_spawn call and nothing else (no PATH lookup, no waiting):
// - three pipes, created O_CLOEXEC, whose child ends are dup2'ed onto 0, 1 and 2 (dup2 clears close-on-exec
//   on the copy, so only the copies cross the exec);
// - every other descriptor closed in the child (posix_spawn_file_actions_addclosefrom_np(3), glibc ≥ 2.34),
//   because Asio creates its sockets, epoll and eventfd descriptors without close-on-exec and an agent must
//   not inherit the daemon's listening socket or client connections;
// - the child leads a new process group (POSIX_SPAWN_SETPGROUP, pgid 0), so kill(-pid) reaches everything it
//   starts unless that calls setsid();
// - every signal reset to its default (POSIX_SPAWN_SETSIGDEF: the daemon ignores SIGPIPE, and an ignored
//   disposition survives exec) and an empty signal mask (POSIX_SPAWN_SETSIGMASK);
// - the working directory set in the child (posix_spawn_file_actions_addchdir_np), never in the daemon.
// `executable` is run as is (execve semantics); `argv` includes argv[0]; `envp` is the complete environment.
ProcessResult<SpawnedChild> spawn_with_pipes(const std::filesystem::path& executable,
                                             const std::vector<std::string>& argv,
                                             const std::vector<std::string>& envp,
                                             const std::filesystem::path& working_directory);

}  // namespace switchboard::process
