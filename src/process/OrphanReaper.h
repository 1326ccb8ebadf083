#pragma once

#include <sys/types.h>

#include <cstddef>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

namespace switchboard::process {

// Makes the daemon the child subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a process an agent's
// tool started in a session of its own (setsid) whose parent dies is reparented to the daemon instead of init,
// so it stays within reach, and ChildProcess kills it when the agent it came from exits (kOriginVariable).
//
// Adopted processes are the daemon's children, so the daemon must reap them: shortly after a SIGCHLD (an asio
// signal_set, which only notices the signal) it reaps each zombie child that no ChildProcess owns, one pid at a
// time with waitpid(pid). The children ChildProcess spawned are registered in ProcessGroupRegistry until their owner has
// reaped them, and are never touched here: their exit statuses are not stolen. There is still no waitpid(-1).
//
// One per daemon, on the io_context thread. Destroying it (or stop()) cancels the signal wait; the subreaper
// attribute is cleared again by the destructor.
class OrphanReaper {
 public:
  explicit OrphanReaper(boost::asio::io_context& io);
  ~OrphanReaper();
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

  // False when the kernel refused to make this process a subreaper (it then keeps working as before).
  bool active() const { return m_active; }
  // Reaps every adopted child that has exited; returns how many. Runs by itself 20 ms after a SIGCHLD, when the
  // kernel says some child is a zombie.
  std::size_t reap();
  // SIGKILLs every adopted child still alive (daemon shutdown: nothing the daemon started outlives it); they are
  // reaped as they die. Returns how many were signalled.
  std::size_t kill_adopted();
  // Stops watching SIGCHLD (and drops a reap not yet run), so the io_context can run out of work (daemon
  // shutdown).
  void stop();

  // The daemon's children that no ChildProcess owns (adopted ones), alive or not.
  static std::vector<pid_t> adopted_children();

 private:
  void wait_for_signal();
  void reap_if_any_zombie();
  // Reaps a little later (kReapDelay): SIGCHLDs of one burst are handled once.
  void schedule_reap();

  boost::asio::signal_set m_sigchld;
  boost::asio::steady_timer m_reap_timer;
  bool m_reap_scheduled = false;
  bool m_active = false;
  bool m_stopped = false;
};

}  // namespace switchboard::process
