#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "process/ProcFs.h"
#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/GroupMembers.h"
#include "support/ProcessTestSupport.h"

// The /proc readers the process layer's cleanup scans are built from: what they read of a process, that the
// children files give this process's children and nothing else, and that an environment variable is found
// exactly, wherever it falls in the file.

namespace proc_fs_tests {

using namespace switchboard;
using testing::ProcessRecord;
using testing::run_until;
using testing::shell;

std::unique_ptr<process::ChildProcess> spawn_ok(boost::asio::io_context& io, process::SpawnSpec spec,
                                                const std::shared_ptr<ProcessRecord>& record) {
  auto spawned = process::ChildProcess::spawn(io, std::move(spec), testing::record_into(record));
  REQUIRE(spawned);
  return std::move(*spawned);
}

bool lists(const std::vector<process::procfs::ProcessStat>& processes, pid_t pid) {
  return std::any_of(processes.begin(), processes.end(), [pid](const auto& process) { return process.pid == pid; });
}

void stop(boost::asio::io_context& io, process::ChildProcess& child) {
  child.kill();
  REQUIRE(run_until(io, [&] { return child.finished(); }));
}

TEST_CASE("procfs: the stat of this process and of a child it started", "[process]") {
  const auto self = process::procfs::read_stat(::getpid());
  REQUIRE(self);
  CHECK(self->pid == ::getpid());
  CHECK(self->ppid == ::getppid());
  CHECK(self->pgrp == ::getpgrp());
  CHECK(self->state == 'R');  // it is reading its own stat
  CHECK(self->start_ticks > 0);

  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  // A name with a space and a parenthesis, as comm may hold: the fields after it must still be read right.
  auto child = spawn_ok(io, shell("exec -a 'odd) name' sleep 1010"), record);
  const auto stat = process::procfs::read_stat(child->pid());
  REQUIRE(stat);
  CHECK(stat->ppid == ::getpid());
  CHECK(stat->pgrp == child->pid());  // it leads a group of its own
  CHECK(stat->start_ticks >= self->start_ticks);
  stop(io, *child);
  CHECK_FALSE(process::procfs::read_stat(child->pid()));  // reaped: gone
}

TEST_CASE("procfs: own_children lists this process's children, zombies included, and not their children", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  testing::TempDir dir;
  const auto pid_file = dir.path() / "grandchild.pid";
  auto child = spawn_ok(io, shell("sleep 1011 & echo $! > '" + pid_file.string() + "'; echo started; exec cat"), record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  pid_t grandchild = 0;
  {
    std::ifstream in(pid_file);
    REQUIRE(in >> grandchild);
  }
  const auto children = process::procfs::own_children();
  REQUIRE(children);  // the kernels this project runs on have the children files
  CHECK(lists(*children, child->pid()));
  CHECK_FALSE(lists(*children, grandchild));
  CHECK(lists(process::procfs::all_processes(), grandchild));

  // An exited, unreaped child is still a child, in state Z: the orphan reaper looks for exactly these.
  ::kill(child->pid(), SIGKILL);
  REQUIRE(run_until(io, [&] {
    const auto stat = process::procfs::read_stat(child->pid());
    return !stat || stat->state == 'Z';
  }));
  ::kill(grandchild, SIGKILL);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
}

TEST_CASE("procfs: an environment variable is matched whole, also across the reader's buffer boundary", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("exec sleep 1012");
  spec.environment = process::Environment::empty();
  // The reader takes 16 KiB at a time: this pad puts the mark across the first boundary.
  spec.environment.set("PAD", std::string(16 * 1024 - 10, 'x'));
  spec.environment.set("SWITCHBOARD_TEST_MARK_ACROSS", "split-in-two");
  spec.environment.set("LAST", "no-terminator-needed");
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(run_until(io, [&] { return process::procfs::environment_contains(child->pid(), "LAST=no-terminator-needed"); }));
  CHECK(process::procfs::environment_contains(child->pid(), "SWITCHBOARD_TEST_MARK_ACROSS=split-in-two"));
  CHECK_FALSE(process::procfs::environment_contains(child->pid(), "SWITCHBOARD_TEST_MARK_ACROSS=split"));
  CHECK_FALSE(process::procfs::environment_contains(child->pid(), "SWITCHBOARD_TEST_MARK_ACROSS=split-in-two-more"));
  CHECK_FALSE(process::procfs::environment_contains(child->pid(), "ARK_ACROSS=split-in-two"));
  stop(io, *child);
  CHECK_FALSE(process::procfs::environment_contains(child->pid(), "LAST=no-terminator-needed"));  // gone
}

TEST_CASE("group members: a scan from a first holder skips the processes older than it", "[process]") {
  boost::asio::io_context io{1};
  // sleep itself, not through a shell: spawn returns once the child has exec'd, so its environment is readable
  // (while a process execs, /proc may show no environment for a moment).
  const auto marked_sleep = [&io](const char* seconds) {
    process::SpawnSpec spec;
    spec.program = "sleep";
    spec.args = {seconds};
    spec.environment.set("SWITCHBOARD_TEST_MARK_AGE", "same");
    return spawn_ok(io, std::move(spec), std::make_shared<ProcessRecord>());
  };
  auto older = marked_sleep("1013");
  // Start times count clock ticks: the holder must start at least a tick later than the older process.
  const auto older_stat = process::procfs::read_stat(older->pid());
  REQUIRE(older_stat);
  ::usleep(static_cast<useconds_t>(3'000'000 / ::sysconf(_SC_CLK_TCK)));
  auto holder = marked_sleep("1014");
  const auto holder_stat = process::procfs::read_stat(holder->pid());
  REQUIRE(holder_stat);
  REQUIRE(holder_stat->start_ticks > older_stat->start_ticks);

  auto all = process::processes_with_environment("SWITCHBOARD_TEST_MARK_AGE", "same");
  std::sort(all.begin(), all.end());
  auto expected = std::vector<pid_t>{older->pid(), holder->pid()};
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
  CHECK(process::processes_with_environment("SWITCHBOARD_TEST_MARK_AGE", "same", holder->pid()) ==
        std::vector<pid_t>{holder->pid()});
  // A first holder that is gone narrows nothing.
  stop(io, *holder);
  CHECK(process::processes_with_environment("SWITCHBOARD_TEST_MARK_AGE", "same", holder->pid()) ==
        std::vector<pid_t>{older->pid()});
  stop(io, *older);
}

}  // namespace proc_fs_tests
