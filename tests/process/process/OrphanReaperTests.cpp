#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/GroupMembers.h"
#include "process/OrphanReaper.h"
#include "process/ProcessGroupRegistry.h"
#include "support/ProcessTestSupport.h"

// The daemon as child subreaper: what an agent started in a session of its own and left behind when it crashed
// comes back to the daemon, dies with the agent, and is reaped, while ChildProcess keeps its own child's exit.

namespace orphan_reaper_tests {

using namespace switchboard;
using testing::ProcessRecord;

std::unique_ptr<process::ChildProcess> spawn_ok(boost::asio::io_context& io, process::SpawnSpec spec,
                                                const std::shared_ptr<ProcessRecord>& record) {
  auto spawned = process::ChildProcess::spawn(io, std::move(spec), testing::record_into(record));
  REQUIRE(spawned);
  return std::move(*spawned);
}

// The parent pid and state of `pid` from /proc (0 and '?' when it is gone).
std::pair<pid_t, char> parent_and_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return {0, '?'};
  const auto close = text.rfind(')');
  return {static_cast<pid_t>(std::atol(text.c_str() + close + 4)), text[close + 2]};
}

bool exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

TEST_CASE("orphan reaper: a setsid'd tool a crashed agent left behind is adopted, killed with the agent and reaped", "[process]") {
  boost::asio::io_context io{1};
  process::OrphanReaper reaper(io);
  REQUIRE(reaper.active());
  testing::TempDir dir;
  const auto pid_file = dir.path() / "tool.pid";
  auto record = std::make_shared<ProcessRecord>();
  // The "agent" starts a tool in a session of its own through a shell that exits at once (so the tool is
  // orphaned while the agent still runs), then waits on stdin until the test makes it crash.
  auto agent = spawn_ok(io, testing::shell("(setsid sleep 1004 </dev/null >/dev/null 2>&1 & echo $! > '" + pid_file.string() +
                                           "'); echo started; exec cat"),
                        record);
  REQUIRE(testing::run_until(io, [&] { return !record->lines.empty(); }));
  pid_t tool = 0;
  REQUIRE(testing::run_until(io, [&] {
    std::ifstream in(pid_file);
    return static_cast<bool>(in >> tool) && tool > 0;
  }));
  // Adopted: its parent is this process (the subreaper), not init.
  REQUIRE(testing::run_until(io, [&] { return parent_and_state(tool).first == ::getpid(); }));
  CHECK(process::OrphanReaper::adopted_children() == std::vector<pid_t>{tool});
  CHECK(parent_and_state(tool).second != 'Z');

  ::kill(agent->pid(), SIGKILL);  // the agent alone crashes
  REQUIRE(testing::run_until(io, [&] { return agent->finished(); }));
  // The agent's own exit status still reached its ChildProcess (the reaper did not take it).
  REQUIRE(record->exit);
  CHECK(record->exit->signal == SIGKILL);
  // The tool died with its agent, and the daemon reaped it: no process, not even a zombie.
  CHECK(testing::run_until(io, [&] { return !exists(tool); }));
  CHECK(process::OrphanReaper::adopted_children().empty());
}

TEST_CASE("orphan reaper: adopted processes still alive at shutdown are killed and reaped, owned children are left alone", "[process]") {
  boost::asio::io_context io{1};
  process::OrphanReaper reaper(io);
  REQUIRE(reaper.active());
  testing::TempDir dir;
  const auto pid_file = dir.path() / "tool.pid";
  auto record = std::make_shared<ProcessRecord>();
  // A tool that cleared its environment (env -i) carries no origin mark: only the shutdown sweep finds it.
  auto agent = spawn_ok(io, testing::shell("(env -i setsid sleep 1005 </dev/null >/dev/null 2>&1 & echo $! > '" + pid_file.string() +
                                           "'); echo started; exec cat"),
                        record);
  REQUIRE(testing::run_until(io, [&] { return !record->lines.empty(); }));
  pid_t tool = 0;
  REQUIRE(testing::run_until(io, [&] {
    std::ifstream in(pid_file);
    return static_cast<bool>(in >> tool) && tool > 0 && parent_and_state(tool).first == ::getpid();
  }));
  CHECK(reaper.kill_adopted() == 1);
  CHECK(testing::run_until(io, [&] { return !exists(tool); }));
  // The agent, owned by its ChildProcess, was neither killed nor reaped by the sweep.
  CHECK(agent->running());
  agent->kill();
  REQUIRE(testing::run_until(io, [&] { return agent->finished(); }));
  REQUIRE(record->exit);
  CHECK(record->exit->signal == SIGKILL);
}

TEST_CASE("orphan reaper: only a child no ChildProcess owns counts as adopted, and without one the sweep finds nothing", "[process]") {
  boost::asio::io_context io{1};
  process::OrphanReaper reaper(io);
  REQUIRE(reaper.active());
  CHECK(process::is_child_subreaper());
  testing::TempDir dir;
  const auto pid_file = dir.path() / "tool.pid";
  auto record = std::make_shared<ProcessRecord>();
  auto agent = spawn_ok(io, testing::shell("echo started; read line; (setsid sleep 1006 </dev/null >/dev/null 2>&1 & echo $! > '" +
                                           pid_file.string() + "'); exec cat"),
                        record);
  REQUIRE(testing::run_until(io, [&] { return !record->lines.empty(); }));
  // The agent is this process's child, but an owned one. (ctest runs each case in a process of its own, so no
  // other test's child is around to count.)
  CHECK_FALSE(process::has_unowned_child());
  CHECK(reaper.kill_adopted() == 0);
  CHECK(agent->running());

  REQUIRE(agent->write_stdin("go\n"));
  pid_t tool = 0;
  REQUIRE(testing::run_until(io, [&] {
    std::ifstream in(pid_file);
    return static_cast<bool>(in >> tool) && tool > 0 && parent_and_state(tool).first == ::getpid();
  }));
  CHECK(process::has_unowned_child());
  CHECK(reaper.kill_adopted() == 1);
  CHECK(testing::run_until(io, [&] { return !exists(tool); }));
  CHECK_FALSE(process::has_unowned_child());  // reaped, not left as a zombie
  agent->kill();
  REQUIRE(testing::run_until(io, [&] { return agent->finished(); }));
}

TEST_CASE("orphan reaper: once stopped it lets the io_context finish, even with a SIGCHLD already delivered", "[process]") {
  // The daemon hung at shutdown when a child's SIGCHLD arrived just before stop(): the reaper's handler was
  // already queued (no error for cancel to report), and it re-armed the wait. A second watcher of SIGCHLD,
  // registered after the reaper, gets the same signal delivered first and stops the reaper from its handler,
  // so the reaper's own handler runs after stop() with a success code.
  boost::asio::io_context io{1};
  process::OrphanReaper reaper(io);
  REQUIRE(reaper.active());
  boost::asio::signal_set watcher(io, SIGCHLD);
  bool stopped_first = false;
  watcher.async_wait([&](const boost::system::error_code& error, int) {
    REQUIRE_FALSE(error);
    reaper.stop();
    stopped_first = true;
  });
  REQUIRE(::raise(SIGCHLD) == 0);
  io.run_for(std::chrono::seconds(5));
  CHECK(stopped_first);
  CHECK(io.stopped());  // it ran out of work rather than out of time
}

TEST_CASE("orphan reaper: a child spawned off the reactor's thread is not taken before it is registered", "[process]") {
  boost::asio::io_context io{1};
  process::OrphanReaper reaper(io);
  REQUIRE(reaper.active());
  auto& registry = process::ProcessGroupRegistry::the();
  // As GitProcess spawns on the checkpoint store's thread: the child exits before its spawner has registered it.
  registry.begin_spawn();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(7);
  io.run_for(std::chrono::milliseconds(300));  // its SIGCHLD arrives, the reaper looks
  CHECK(parent_and_state(child) == std::pair<pid_t, char>{::getpid(), 'Z'});
  registry.add(child);
  registry.end_spawn();
  // Its exit status is still its spawner's to take.
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  registry.remove(child);
}

}  // namespace orphan_reaper_tests
