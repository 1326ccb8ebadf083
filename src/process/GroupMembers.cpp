#include "switchboard/process/GroupMembers.h"

#include <fstream>
#include <string>

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

namespace switchboard::process {
namespace {

// The pgrp field of /proc/<pid>/stat: "pid (comm) state ppid pgrp ...". comm may contain spaces and
// parentheses, so parsing starts after the last ')'.
bool read_stat(const char* pid, pid_t& ppid_out, pid_t& pgrp) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%s/stat", pid);
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return false;
  char buffer[1024];
  const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, file);
  std::fclose(file);
  buffer[n] = '\0';
  const char* close = std::strrchr(buffer, ')');
  if (close == nullptr) return false;
  char state = 0;
  long ppid = 0;
  long group = 0;
  if (std::sscanf(close + 1, " %c %ld %ld", &state, &ppid, &group) != 3) return false;
  pgrp = static_cast<pid_t>(group);
  ppid_out = static_cast<pid_t>(ppid);
  return true;
}

struct ProcessEntry {
  pid_t pid;
  pid_t ppid;
  pid_t pgrp;
};

std::vector<ProcessEntry> snapshot() {
  std::vector<ProcessEntry> entries;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return entries;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    pid_t ppid = 0;
    pid_t group = 0;
    if (read_stat(entry->d_name, ppid, group)) entries.push_back({static_cast<pid_t>(std::atol(entry->d_name)), ppid, group});
  }
  ::closedir(proc);
  return entries;
}

}  // namespace

std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> members;
  for (const auto& entry : snapshot()) {
    if (entry.pgrp == pgid) members.push_back(entry.pid);
  }
  return members;
}

std::vector<pid_t> processes_started_by(pid_t leader) {
  const auto entries = snapshot();
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
  const auto entries = snapshot();
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

std::vector<pid_t> processes_with_environment(std::string_view name, std::string_view value) {
  std::string wanted(name);
  wanted += '=';
  wanted += value;
  std::vector<pid_t> found;
  for (const auto& entry : snapshot()) {
    // Unreadable (another user's process, or gone): not ours to find.
    std::ifstream in("/proc/" + std::to_string(entry.pid) + "/environ", std::ios::binary);
    if (!in) continue;
    for (std::string variable; std::getline(in, variable, '\0');) {
      if (variable == wanted) {
        found.push_back(entry.pid);
        break;
      }
    }
  }
  return found;
}

}  // namespace switchboard::process
