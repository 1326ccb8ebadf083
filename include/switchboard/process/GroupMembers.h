#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>
#include <vector>

namespace switchboard::process {

// The live processes of process group `pgid`, read from /proc (each /proc/<pid>/stat's pgrp field). A snapshot:
// processes may start or exit right after. Empty if /proc cannot be read.
std::vector<pid_t> group_members(pid_t pgid);

// Every process `leader` started, directly or not, that is still alive: the members of its process group and its
// descendants by parentage (which include tools an agent started in a session of their own with setsid, as
// Claude Code does). `leader` itself is not included. Only descendants whose chain of parents is intact are
// found: take the snapshot while the leader is alive.
std::vector<pid_t> processes_started_by(pid_t leader);

// The descendants of `leader` that left its process group (a tool started with setsid, as Codex starts its
// sandboxed commands), with everything below them. Unlike processes_started_by(), the leader's own group stays
// out: an agent whose launcher and real binary share the group (Codex's npm wrapper) is not touched.
std::vector<pid_t> detached_descendants_of(pid_t leader);

// Live processes (of this user) whose environment holds `name=value` exactly. For what an agent started that
// no parentage leads back to: Codex runs commands in a sandbox with a PID namespace of its own, whose setup
// process exits, so the command is reparented to init; Codex marks each command's environment with its thread
// id (CODEX_THREAD_ID), which is how it is found.
// With `first_holder`, the process the variable was first given to (alive or an unreaped zombie), only processes
// started no earlier than it are read: none older can have inherited it, and reading each environment is the
// expensive part of the scan. Without it, or when that process is gone, every process is read.
std::vector<pid_t> processes_with_environment(std::string_view name, std::string_view value,
                                              std::optional<pid_t> first_holder = std::nullopt);

// Whether this process is a child subreaper (PR_SET_CHILD_SUBREAPER, OrphanReaper): the orphans of its
// descendants then become its children instead of init's.
bool is_child_subreaper();

// Whether this process has a child, alive or a zombie, that no ChildProcess owns (ProcessGroupRegistry): an orphan
// it adopted as a subreaper, or one started by other means. True when it cannot tell (a kernel without
// /proc/<pid>/task/<tid>/children). It reads this process's own children, not every process on the machine: the
// question to ask before a scan of all of them, which usually has nothing to find.
bool has_unowned_child();

}  // namespace switchboard::process
