#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>

namespace switchboard::process {

// Every live process group the daemon started, so that none outlives it.
//
// ChildProcess registers a group right after the spawn and unregisters it once the group has been killed and
// its leader reaped. kill_all_now() SIGKILLs every registered group: the daemon calls it as the last step of
// shutdown (after the graceful stops had their chance), and the fatal-signal and atexit paths call it too
// (FatalSignalCleanup.h), which is why it is async-signal-safe: a fixed array of lock-free atomics, no
// allocation, no locks, only kill(2).
//
// One process-wide instance, the(), constant-initialized (no static constructor runs, so it is usable from
// any signal handler at any time). Separate instances exist only for tests.
class ProcessGroupRegistry {
 public:
  // More live agent process groups than this is a runaway: the spawn fails with ResourceExhausted.
  static constexpr std::size_t kCapacity = 512;

  constexpr ProcessGroupRegistry() = default;
  ProcessGroupRegistry(const ProcessGroupRegistry&) = delete;
  ProcessGroupRegistry& operator=(const ProcessGroupRegistry&) = delete;

  static ProcessGroupRegistry& the();

  // False when full. `pgid` must be > 1 (never our own group, never "every process").
  bool add(pid_t pgid) noexcept;
  // No-op if `pgid` is not registered.
  void remove(pid_t pgid) noexcept;
  bool contains(pid_t pgid) const noexcept;
  std::size_t size() const noexcept;

  // SIGKILLs every registered group; the entries stay (the leaders are still to be reaped by their owners).
  // Async-signal-safe and errno-preserving. Returns how many groups were signalled.
  std::size_t kill_all_now() const noexcept;
  // The same, and also what each group's leader started outside its group (tools in sessions of their own, found
  // by parentage in /proc while the leaders live). Not async-signal-safe: for the daemon's orderly shutdown.
  std::size_t kill_all_and_descendants() const;

  // A spawn off the reactor's thread (the checkpoint store's and the worktrees' git) is under way: its child may
  // exit before it is registered, and would then look adopted to the OrphanReaper, which would steal its exit
  // status. The reaper leaves every child alone while any such spawn is between its fork and its add().
  void begin_spawn() noexcept { m_spawning.fetch_add(1, std::memory_order_acq_rel); }
  void end_spawn() noexcept { m_spawning.fetch_sub(1, std::memory_order_acq_rel); }
  bool spawning() const noexcept { return m_spawning.load(std::memory_order_acquire) > 0; }

 private:
  static_assert(std::atomic<pid_t>::is_always_lock_free, "kill_all_now must be async-signal-safe");
  std::array<std::atomic<pid_t>, kCapacity> m_groups{};  // 0 = free slot
  std::atomic<int> m_spawning{0};
};

}  // namespace switchboard::process
