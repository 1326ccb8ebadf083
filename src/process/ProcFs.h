#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>
#include <vector>

namespace switchboard::process::procfs {

// What /proc/<pid>/stat says of a process that the process layer needs.
struct ProcessStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  pid_t pgrp = 0;
  char state = '?';  // R, S, D, Z (zombie), X (dead), ...
  unsigned long long start_ticks = 0;  // when it started, in clock ticks since boot: a child never starts before its parent
};

// /proc/<pid>/stat, or nothing when the process is gone (or /proc is not there). One open and one read: these
// run on the io_context thread, once per process on the machine in the worst case.
std::optional<ProcessStat> read_stat(pid_t pid);

// Every process /proc lists now. A snapshot: processes may start or exit right after. Empty if /proc cannot be
// read. Its cost grows with the number of processes on the machine, hundreds on a desktop: prefer
// own_children() where the question allows it.
std::vector<ProcessStat> all_processes();

// The children of this process, from /proc/self/task/<tid>/children (one file per thread, since a child belongs
// to the thread that started it), with their states. Costs what this process's own children cost, not what the
// machine's processes do. Nothing when the kernel lacks these files (CONFIG_PROC_CHILDREN): the caller then falls
// back to all_processes().
std::optional<std::vector<ProcessStat>> own_children();

// True when /proc/<pid>/environ holds `entry` ("NAME=value") exactly as one of its variables. False when it
// cannot be read: another user's process, a kernel thread, or gone.
bool environment_contains(pid_t pid, std::string_view entry);

}  // namespace switchboard::process::procfs
