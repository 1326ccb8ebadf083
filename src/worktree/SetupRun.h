#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

namespace switchboard::worktree {

// How a repository's set-up command ended in a new worktree (docs/worktrees.md).
struct SetupOutcome {
  bool succeeded = false;
  std::string failure;  // when it did not succeed, why, in words a user reads ("exited with code 1", ...)
  std::string output;   // what it wrote (stdout and stderr together), its last SetupRun::kKeptBytes
};

// One run of a repository's set-up command (setting worktrees.setup) in a new worktree: `/bin/sh -c <command>`
// with the worktree as its working directory, stdin at end of file, the daemon's environment without its own
// variables (process::Environment::from_daemon: no token, no configured keys), stderr merged into stdout. It is an
// ordinary supervised child (process::ChildProcess): its own process group, registered with the daemon's reaper,
// killed with the daemon, watched on the io_context without blocking it. It is killed when it runs past
// `time_limit`, when cancel() is called, and when the SetupRun is destroyed.
class SetupRun {
 public:
  // A piece of output as it comes, in order; at most kStreamedBytes in all (then one line saying the rest is not
  // shown while it runs).
  using Output = std::function<void(std::string_view text)>;
  using Finished = std::function<void(SetupOutcome outcome)>;

  static constexpr std::size_t kStreamedBytes = 256 * 1024;
  static constexpr std::size_t kKeptBytes = 64 * 1024;

  // `finished` runs exactly once, later, on the io_context (also when the command cannot start), unless the
  // SetupRun is destroyed first. Call on the io_context's thread: the child dies with the thread that started it.
  static std::unique_ptr<SetupRun> start(boost::asio::io_context& io, const std::string& command,
                                         const std::filesystem::path& directory, std::chrono::milliseconds time_limit,
                                         Output output, Finished finished);
  ~SetupRun();
  SetupRun(const SetupRun&) = delete;
  SetupRun& operator=(const SetupRun&) = delete;

  // Kills the command; `finished` then reports it failed, cancelled.
  void cancel();

  // How it ended, as soon as it has: `finished` runs later (posted), so a caller that gives up on the run in
  // between still learns that it ended and how (a success must not be thrown away).
  std::optional<SetupOutcome> outcome() const;

 private:
  class State;
  explicit SetupRun(std::shared_ptr<State> state);
  std::shared_ptr<State> m_state;
};

}  // namespace switchboard::worktree
