#include "process/ProcessGroupRegistry.h"

#include <signal.h>

#include <cerrno>
#include <vector>

#include "switchboard/process/GroupMembers.h"

namespace switchboard::process {

namespace {
constinit ProcessGroupRegistry g_registry;
}  // namespace

ProcessGroupRegistry& ProcessGroupRegistry::the() { return g_registry; }

bool ProcessGroupRegistry::add(pid_t pgid) noexcept {
  if (pgid <= 1) return false;
  for (auto& slot : m_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return true;
  }
  return false;
}

void ProcessGroupRegistry::remove(pid_t pgid) noexcept {
  for (auto& slot : m_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

bool ProcessGroupRegistry::contains(pid_t pgid) const noexcept {
  for (const auto& slot : m_groups) {
    if (slot.load() == pgid) return true;
  }
  return false;
}

std::size_t ProcessGroupRegistry::size() const noexcept {
  std::size_t count = 0;
  for (const auto& slot : m_groups) count += slot.load() != 0 ? 1 : 0;
  return count;
}

std::size_t ProcessGroupRegistry::kill_all_now() const noexcept {
  const int saved_errno = errno;  // a signal handler must not change errno under the code it interrupted
  std::size_t count = 0;
  for (const auto& slot : m_groups) {
    const pid_t pgid = slot.load();
    if (pgid <= 1) continue;
    ::kill(-pgid, SIGKILL);
    ++count;
  }
  errno = saved_errno;
  return count;
}

std::size_t ProcessGroupRegistry::kill_all_and_descendants() const {
  // Listed first, while the group leaders are alive to be the ancestors; killed after the groups, as
  // ChildProcess does, so that no leader sees its children die and exits on its own first.
  std::vector<pid_t> started;
  for (const auto& slot : m_groups) {
    const pid_t pgid = slot.load();
    if (pgid <= 1) continue;
    const auto found = processes_started_by(pgid);
    started.insert(started.end(), found.begin(), found.end());
  }
  const std::size_t groups = kill_all_now();
  for (const pid_t pid : started) ::kill(pid, SIGKILL);
  return groups;
}

}  // namespace switchboard::process
