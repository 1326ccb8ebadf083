#include "process/OrphanReaper.h"

#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include <spdlog/spdlog.h>

#include "process/ProcessGroupRegistry.h"

namespace switchboard::process {
namespace {

struct Child {
  pid_t pid = 0;
  char state = '?';
};

// /proc/<pid>/stat: "pid (comm) state ppid ...", where comm may hold spaces and parentheses: read after the last ')'.
bool read_stat(const char* pid, pid_t& ppid, char& state) {
  std::ifstream in(std::string("/proc/") + pid + "/stat");
  std::string text;
  if (!std::getline(in, text)) return false;
  const auto close = text.rfind(')');
  if (close == std::string::npos || close + 4 >= text.size()) return false;
  state = text[close + 2];
  ppid = static_cast<pid_t>(std::atol(text.c_str() + close + 4));
  return true;
}

// The children of this process that ChildProcess does not own (it registers each until it has reaped it).
std::vector<Child> unowned_children() {
  std::vector<Child> children;
  const pid_t self = ::getpid();
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return children;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    pid_t ppid = 0;
    char state = '?';
    if (!read_stat(entry->d_name, ppid, state) || ppid != self) continue;
    const auto pid = static_cast<pid_t>(std::atol(entry->d_name));
    if (ProcessGroupRegistry::the().contains(pid)) continue;
    children.push_back(Child{pid, state});
  }
  ::closedir(proc);
  return children;
}

}  // namespace

OrphanReaper::OrphanReaper(boost::asio::io_context& io) : m_sigchld(io) {
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
    reap();
    wait_for_signal();
  });
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
}

std::vector<pid_t> OrphanReaper::adopted_children() {
  std::vector<pid_t> pids;
  for (const auto& child : unowned_children()) pids.push_back(child.pid);
  return pids;
}

}  // namespace switchboard::process
