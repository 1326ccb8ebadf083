#include "switchboard/process/GroupMembers.h"

#include <sys/prctl.h>

#include <set>
#include <string>

#include "process/ProcFs.h"
#include "process/ProcessGroupRegistry.h"

namespace switchboard::process {

std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> members;
  for (const auto& entry : procfs::all_processes()) {
    if (entry.pgrp == pgid) members.push_back(entry.pid);
  }
  return members;
}

std::vector<pid_t> processes_started_by(pid_t leader) {
  const auto entries = procfs::all_processes();
  std::set<pid_t> found;
  for (const auto& entry : entries) {
    if (entry.pgrp == leader && entry.pid != leader) found.insert(entry.pid);
  }
  // Descendants by parentage: grow the set from the leader until no process joins (trees are shallow).
  std::set<pid_t> parents{leader};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& entry : entries) {
      if (parents.count(entry.ppid) != 0 && parents.insert(entry.pid).second) {
        found.insert(entry.pid);
        grew = true;
      }
    }
  }
  return {found.begin(), found.end()};
}

std::vector<pid_t> detached_descendants_of(pid_t leader) {
  const auto entries = procfs::all_processes();
  // The leader's tree by parentage first, then the part of it that left the leader's group, with its subtrees.
  std::set<pid_t> tree{leader};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& entry : entries) {
      if (tree.count(entry.ppid) != 0 && tree.insert(entry.pid).second) grew = true;
    }
  }
  std::set<pid_t> detached;
  for (const auto& entry : entries) {
    if (entry.pid != leader && tree.count(entry.pid) != 0 && entry.pgrp != leader) detached.insert(entry.pid);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& entry : entries) {
      if (detached.count(entry.ppid) != 0 && detached.insert(entry.pid).second) grew = true;
    }
  }
  return {detached.begin(), detached.end()};
}

std::vector<pid_t> processes_with_environment(std::string_view name, std::string_view value,
                                              std::optional<pid_t> first_holder) {
  std::string wanted(name);
  wanted += '=';
  wanted += value;
  unsigned long long not_before = 0;
  if (first_holder) {
    if (const auto holder = procfs::read_stat(*first_holder)) not_before = holder->start_ticks;
  }
  std::vector<pid_t> found;
  for (const auto& entry : procfs::all_processes()) {
    // Kernel threads have no environment to read; nor has anything we may not read (another user's, or gone).
    if (entry.pid == 2 || entry.ppid == 2 || entry.start_ticks < not_before) continue;
    if (procfs::environment_contains(entry.pid, wanted)) found.push_back(entry.pid);
  }
  return found;
}

bool is_child_subreaper() {
  int subreaper = 0;
  return ::prctl(PR_GET_CHILD_SUBREAPER, &subreaper, 0, 0, 0) == 0 && subreaper != 0;
}

bool has_unowned_child() {
  const auto children = procfs::own_children();
  if (!children) return true;
  for (const auto& child : *children) {
    if (!ProcessGroupRegistry::the().contains(child.pid)) return true;
  }
  return false;
}

}  // namespace switchboard::process
