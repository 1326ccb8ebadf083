#include "process/ProcessGroupRegistry.h"

#include <signal.h>

#include <cerrno>

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
  for (const auto& slot : m_groups) {
    const pid_t pgid = slot.load();
    if (pgid <= 1) continue;
    for (const pid_t started : processes_started_by(pgid)) ::kill(started, SIGKILL);
  }
  return kill_all_now();
}

}  // namespace switchboard::process
