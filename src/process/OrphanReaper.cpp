#include "process/OrphanReaper.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "process/ProcFs.h"
#include "process/ProcessGroupRegistry.h"
#include "switchboard/process/GroupMembers.h"

namespace switchboard::process {
namespace {

// How long after a SIGCHLD the reaper looks. Most SIGCHLDs are an agent's (or a probe's) own exit, which its
// ChildProcess reaps at once: looking a moment later usually finds no zombie left, and then no process is
// listed at all (a listing reads every process's stat: milliseconds on a desktop). One look serves a burst.
constexpr auto kReapDelay = std::chrono::milliseconds(20);

// Whether any child of this process is a zombie, owned or not: waitid's WNOWAIT leaves it for its reaper.
bool any_zombie_child() {
  siginfo_t info{};
  int rc;
  do {
    rc = ::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc < 0 && errno == EINTR);
  return rc == 0 && info.si_pid != 0;
}

using Child = procfs::ProcessStat;

// The children of this process that ChildProcess does not own (it registers each until it has reaped it).
std::vector<Child> unowned_children() {
  // Every process's stat, not /proc/self/task/*/children: a child adopted onto a thread while the list is read
  // can be missed there, and a zombie the reaper misses stays until the next SIGCHLD (seen once under load).
  std::vector<Child> children;
  const pid_t self = ::getpid();
  for (const auto& process : procfs::all_processes()) {
    if (process.ppid == self) children.push_back(process);
  }
  std::erase_if(children, [](const Child& child) { return ProcessGroupRegistry::the().contains(child.pid); });
  return children;
}

}  // namespace

OrphanReaper::OrphanReaper(boost::asio::io_context& io) : m_sigchld(io), m_reap_timer(io) {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
    spdlog::warn("cannot become a child subreaper ({}): tools an agent detached may outlive it", std::strerror(errno));
    return;
  }
  m_active = true;
  boost::system::error_code error;
  m_sigchld.add(SIGCHLD, error);
  if (error) {
    spdlog::warn("cannot watch SIGCHLD ({}): adopted processes are reaped at shutdown only", error.message());
    return;
  }
  wait_for_signal();
}

OrphanReaper::~OrphanReaper() {
  stop();
  if (m_active) ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

void OrphanReaper::wait_for_signal() {
  m_sigchld.async_wait([this](const boost::system::error_code& error, int) {
    // A SIGCHLD that arrived just before stop() has its handler queued already, without an error: cancelling
    // cannot reach it, so the flag does. Re-arming then would keep the io_context running for ever.
    if (error || m_stopped) return;
    schedule_reap();
    wait_for_signal();
  });
}

void OrphanReaper::schedule_reap() {
  if (m_reap_scheduled) return;
  m_reap_scheduled = true;
  m_reap_timer.expires_after(kReapDelay);
  m_reap_timer.async_wait([this](const boost::system::error_code& timer_error) {
    if (timer_error || m_stopped) return;
    m_reap_scheduled = false;
    reap_if_any_zombie();
  });
}

void OrphanReaper::reap_if_any_zombie() {
  // A child spawned off the reactor may not be registered yet: look again shortly rather than take it.
  if (ProcessGroupRegistry::the().spawning()) return schedule_reap();
  // No zombie child at all: nothing adopted has exited (ChildProcess reaped its own). Otherwise the list of
  // processes says whose it is: a ChildProcess may simply not have reaped its child yet.
  if (any_zombie_child()) reap();
}

std::size_t OrphanReaper::reap() {
  std::size_t reaped = 0;
  for (const auto& child : unowned_children()) {
    if (child.state != 'Z' && child.state != 'X') continue;
    int status = 0;
    pid_t done;
    do {
      done = ::waitpid(child.pid, &status, WNOHANG);  // this pid only
    } while (done < 0 && errno == EINTR);
    if (done == child.pid) ++reaped;
  }
  if (reaped > 0) spdlog::debug("reaped {} adopted process(es)", reaped);
  return reaped;
}

std::size_t OrphanReaper::kill_adopted() {
  // Usually nothing was adopted: the scan of every process (unowned_children) is for when something was.
  if (!has_unowned_child()) return 0;
  std::size_t killed = 0;
  for (const auto& child : unowned_children()) {
    if (child.state == 'Z' || child.state == 'X') continue;
    if (::kill(child.pid, SIGKILL) == 0) ++killed;
  }
  if (killed > 0) spdlog::info("killed {} adopted process(es) agents had left behind", killed);
  return killed;
}

void OrphanReaper::stop() {
  m_stopped = true;
  boost::system::error_code ignored;
  m_sigchld.cancel(ignored);
  m_reap_timer.cancel();
}

std::vector<pid_t> OrphanReaper::adopted_children() {
  std::vector<pid_t> pids;
  for (const auto& child : unowned_children()) pids.push_back(child.pid);
  return pids;
}

}  // namespace switchboard::process
