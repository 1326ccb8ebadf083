#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchboard::process {

// The exec shim: the daemon's own binary, run as `switchboard __exec-shim --parent-pid=P --exec=PATH -- ARGV0
// ARGS...`, sets PR_SET_PDEATHSIG(SIGKILL), checks that its parent is still P (the daemon may have died before
// the prctl), and then execs PATH with ARGV0 ARGS... in place. The agent CLI thus runs with a parent-death
// signal: if the daemon is SIGKILLed (no handler can run, so ProcessGroupRegistry cannot help), the kernel
// kills the agent.
//
// Why a shim: posix_spawn runs no code of ours in the child, so it cannot call prctl; fork + prctl + exec
// would, but forking a daemon with threads and a large address space is what posix_spawn avoids.
//
// Limits, by design of PR_SET_PDEATHSIG:
// - it fires when the *thread* that spawned the child exits, not the process: spawn from the io_context thread
//   (the main thread), never from a short-lived helper thread;
// - it covers the direct child only. Tools the agent started (grandchildren) are not killed by it; they get
//   EOF/SIGPIPE on pipes they share with the agent, and otherwise survive a SIGKILLed daemon;
// - it is cleared when the agent execs a set-user-ID or file-capability binary.
//
// main() calls run_exec_shim() before anything else when argv[1] is kExecShimCommand (see is_exec_shim_call).
inline constexpr std::string_view kExecShimCommand = "__exec-shim";

// True when `argv` asks for the shim; main() then returns run_exec_shim(argc, argv).
bool is_exec_shim_call(int argc, char** argv);

// Never returns on success (the process becomes the target). Returns 127 if the target cannot be found, 126 if
// it cannot be executed (shell conventions) and 2 on a malformed command line; it raises SIGKILL on itself if
// the parent is already gone. Diagnostics go to stderr, which the daemon keeps in the child's stderr tail.
int run_exec_shim(int argc, char** argv);

// The argv that runs `executable` (with `argv` as its argv, argv[0] included) through the shim at `shim_path`,
// on behalf of the parent `parent_pid`.
std::vector<std::string> exec_shim_argv(const std::string& shim_path, pid_t parent_pid, const std::string& executable,
                                        const std::vector<std::string>& argv);

}  // namespace switchboard::process
