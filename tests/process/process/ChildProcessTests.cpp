#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "switchboard/process/ChildProcess.h"
#include "switchboard/process/GroupMembers.h"
#include "process/ProcessGroupRegistry.h"
#include "process/UniqueFd.h"
#include "support/ProcessTestSupport.h"

namespace child_process_tests {

using namespace switchboard::process;
using switchboard::testing::kProcessDeadline;
using switchboard::testing::process_gone;
using switchboard::testing::ProcessRecord;
using switchboard::testing::TempDir;
using switchboard::testing::record_into;
using switchboard::testing::run_until;
using switchboard::testing::shell;
using switchboard::testing::wait_process_gone;

std::unique_ptr<ChildProcess> spawn_ok(boost::asio::io_context& io, SpawnSpec spec,
                                       const std::shared_ptr<ProcessRecord>& record) {
  auto child = ChildProcess::spawn(io, std::move(spec), record_into(record));
  if (!child) FAIL("spawn failed: " << child.error());
  return std::move(*child);
}

std::set<std::string> open_fds_of(pid_t pid) {
  std::set<std::string> fds;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd"))
    fds.insert(entry.path().filename().string());
  return fds;
}

TEST_CASE("child process: stdin lines come back through cat, EOF then exit", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = "cat";  // looked up on PATH
  auto child = spawn_ok(io, std::move(spec), record);
  CHECK(child->running());
  CHECK(child->executable().is_absolute());
  REQUIRE(child->write_stdin("hello\n"));
  REQUIRE(child->write_stdin("wor"));
  REQUIRE(child->write_stdin("ld\n"));
  REQUIRE(run_until(io, [&] { return record->lines.size() == 2; }));
  child->close_stdin();
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(record->lines == std::vector<std::string>{"hello", "world"});
  REQUIRE(record->exit);
  CHECK(*record->exit == ExitStatus::exited(0));
  CHECK(record->order == std::vector<std::string>{"line", "line", "eof", "exit"});
  CHECK_FALSE(child->running());
  CHECK(child->counters().stdout_lines == 2);
}

TEST_CASE("child process: stdout lines split across writes are joined, the last line needs no newline",
          "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("printf 'par'; sleep 0.2; printf 'tial\\r\\nsecond\\nlast'"), record);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(record->lines == std::vector<std::string>{"partial", "second", "last"});
  CHECK(record->stdout_eof);
}

TEST_CASE("child process: an over-long stdout line is skipped and counted and the stream recovers", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("printf 'short\\n'; printf '%0100d' 0; sleep 0.1; printf '%0100d\\nafter\\n' 0");
  spec.max_stdout_line_bytes = 16;
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(record->lines == std::vector<std::string>{"short", "after"});
  CHECK(record->overlong == 1);
  CHECK(child->counters().stdout_overlong_lines == 1);
  CHECK(record->order == std::vector<std::string>{"line", "overlong", "line", "eof", "exit"});
}

TEST_CASE("child process: the tail of stderr is kept for error messages", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("i=0; while [ $i -lt 50 ]; do echo \"noise line $i\" >&2; i=$((i+1)); done; "
                    "echo 'fatal: invalid API key' >&2; exit 1");
  spec.stderr_options.tail_bytes = 64;
  spec.stderr_options.lines_per_window = 5;
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(*record->exit == ExitStatus::exited(1));
  const std::string tail = child->stderr_tail();
  CHECK(tail.size() <= 64);
  CHECK(tail.ends_with("fatal: invalid API key\n"));
  CHECK(tail.find("noise line 0\n") == std::string::npos);
  // 51 lines against 5 per second: most were suppressed (how many exactly depends on the machine's speed).
  const auto counters = child->counters();
  CHECK(counters.stderr_lines_logged + counters.stderr_lines_suppressed == 51);
  CHECK(counters.stderr_lines_suppressed > 0);
}

TEST_CASE("child process: exit codes and signals are reported", "[process]") {
  boost::asio::io_context io{1};
  SECTION("exit code") {
    auto record = std::make_shared<ProcessRecord>();
    auto child = spawn_ok(io, shell("exit 3"), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(*record->exit == ExitStatus::exited(3));
    CHECK(child->exit_status() == ExitStatus::exited(3));
    CHECK(to_string(*record->exit) == "exited with code 3");
  }
  SECTION("signal") {
    auto record = std::make_shared<ProcessRecord>();
    auto child = spawn_ok(io, shell("kill -USR1 $$"), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(*record->exit == ExitStatus::signaled(SIGUSR1));
    CHECK(to_string(*record->exit) == "killed by signal 10 (SIGUSR1)");
  }
  SECTION("SIGPIPE is back to its default in the child although the daemon ignores it") {
    ::signal(SIGPIPE, SIG_IGN);
    auto record = std::make_shared<ProcessRecord>();
    // `yes` writes into a pipe whose reader (`head`) has gone: with the default SIGPIPE it dies of it (status
    // 128+13); had it inherited the daemon's SIG_IGN it would get EPIPE and exit 1 instead.
    auto child = spawn_ok(io, shell("(yes; echo \"yes:$?\" >&2) | head -n 1 >/dev/null"), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(child->stderr_tail() == "yes:141\n");
    ::signal(SIGPIPE, SIG_DFL);
  }
  SECTION("exit watched by polling, as without pidfd_open") {
    auto record = std::make_shared<ProcessRecord>();
    auto spec = shell("echo polled; exit 7");
    spec.force_exit_polling = true;
    auto child = spawn_ok(io, std::move(spec), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(*record->exit == ExitStatus::exited(7));
    CHECK(record->lines == std::vector<std::string>{"polled"});
  }
}

TEST_CASE("child process: stop takes the graceful step and the child exits by itself", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = "/bin/cat";
  auto child = spawn_ok(io, std::move(spec), record);
  std::vector<std::string> steps;
  std::optional<ExitStatus> stopped;
  StopPolicy policy;
  policy.graceful = [&](ChildProcess& process) {
    steps.emplace_back("graceful");
    process.close_stdin();  // cat exits at EOF
  };
  policy.graceful_timeout = kProcessDeadline;  // never reached: cat cooperates
  child->stop(policy, [&](const ExitStatus& status) {
    stopped = status;
    record->order.emplace_back("stopped");
  });
  REQUIRE(run_until(io, [&] { return stopped.has_value(); }));
  CHECK(steps == std::vector<std::string>{"graceful"});
  CHECK(*stopped == ExitStatus::exited(0));
  CHECK(record->order == std::vector<std::string>{"eof", "exit", "stopped"});

  // A stop after the end completes at once, with the same status.
  std::optional<ExitStatus> again;
  child->stop(policy, [&](const ExitStatus& status) { again = status; });
  CHECK_FALSE(again);  // posted, not called inline
  REQUIRE(run_until(io, [&] { return again.has_value(); }));
  CHECK(*again == ExitStatus::exited(0));
  CHECK(steps.size() == 1);
}

TEST_CASE("child process: stop sends SIGTERM after the graceful period", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("echo ready; exec sleep 1000"), record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  bool graceful_called = false;
  StopPolicy policy;
  policy.graceful = [&](ChildProcess&) { graceful_called = true; };  // sleep ignores its stdin
  policy.graceful_timeout = std::chrono::milliseconds(50);
  policy.terminate_timeout = kProcessDeadline;
  std::optional<ExitStatus> stopped;
  child->stop(policy, [&](const ExitStatus& status) { stopped = status; });
  REQUIRE(run_until(io, [&] { return stopped.has_value(); }));
  CHECK(graceful_called);
  CHECK(*stopped == ExitStatus::signaled(SIGTERM));
}

TEST_CASE("child process: a child that ignores SIGTERM is SIGKILLed after the grace period", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  // The shell ignores TERM (and so does every command it starts: an ignored signal survives exec).
  auto child = spawn_ok(io, shell("trap '' TERM; echo ready; while :; do sleep 0.05; done"), record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  StopPolicy policy;  // no graceful step: SIGTERM at once
  policy.terminate_timeout = std::chrono::milliseconds(200);
  std::optional<ExitStatus> stopped;
  child->stop(policy, [&](const ExitStatus& status) { stopped = status; });
  REQUIRE(run_until(io, [&] { return stopped.has_value(); }));
  CHECK(*stopped == ExitStatus::signaled(SIGKILL));
  CHECK(*record->exit == ExitStatus::signaled(SIGKILL));
}

TEST_CASE("child process: grandchildren die with the process group", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SECTION("when the child is killed") {
    auto child = spawn_ok(io, shell("sleep 1000 & echo $!; wait"), record);
    REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
    const pid_t grandchild = std::stoi(record->lines.front());
    CHECK_FALSE(process_gone(grandchild));
    child->kill();
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(*record->exit == ExitStatus::signaled(SIGKILL));
    CHECK(wait_process_gone(grandchild));
  }
  SECTION("when the child exits and leaves them behind") {
    // The background sleep also holds the stdout pipe: without the group kill, EOF would never come.
    auto child = spawn_ok(io, shell("sleep 1000 & echo $!"), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    REQUIRE(record->lines.size() == 1);
    const pid_t grandchild = std::stoi(record->lines.front());
    CHECK(*record->exit == ExitStatus::exited(0));
    CHECK(record->stdout_eof);
    CHECK(wait_process_gone(grandchild));
  }
}

TEST_CASE("child process: what the child started in a session of its own is found and killed too", "[process]") {
  // Agents start tools detached (setsid), out of their process group: the group kill alone misses them.
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SECTION("on demand while the child runs on") {
    auto child = spawn_ok(io, shell("setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; exec cat"), record);
    REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
    const pid_t detached = std::stoi(record->lines.front());
    CHECK_FALSE(process_gone(detached));
    CHECK(child->kill_started_processes() >= 1);
    CHECK(wait_process_gone(detached));
    CHECK(child->running());  // the child itself stays
    child->close_stdin();
    REQUIRE(run_until(io, [&] { return child->finished(); }));
  }
  SECTION("when the child is killed") {
    auto child = spawn_ok(io, shell("setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; exec cat"), record);
    REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
    const pid_t detached = std::stoi(record->lines.front());
    child->kill();
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    CHECK(wait_process_gone(detached));
  }
}

TEST_CASE("child process: killing what left the group spares the group's own processes", "[process]") {
  // Codex's npm launcher and its native binary share the launcher's group; the native binary starts sandboxed
  // commands in sessions of their own. Only those may go when a turn is cancelled.
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("sleep 1000 & echo $!; setsid sh -c 'sleep 1001 & wait' </dev/null >/dev/null 2>&1 & "
                                  "echo $!; exec cat"),
                        record);
  REQUIRE(run_until(io, [&] { return record->lines.size() >= 2; }));
  const pid_t in_group = std::stoi(record->lines[0]);
  const pid_t detached = std::stoi(record->lines[1]);
  // The detached shell's own child, found through its parent.
  std::vector<pid_t> below;
  REQUIRE(run_until(io, [&] {
    below.clear();
    for (const pid_t pid : switchboard::process::detached_descendants_of(child->pid())) {
      if (pid != detached) below.push_back(pid);
    }
    return !below.empty();
  }));
  CHECK(child->kill_detached_descendants() >= 2);
  CHECK(wait_process_gone(detached));
  for (const pid_t pid : below) CHECK(wait_process_gone(pid));
  CHECK_FALSE(process_gone(in_group));  // in the child's group: spared
  CHECK(child->running());
  child->kill();
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(wait_process_gone(in_group));
}

TEST_CASE("child process: processes are found by a variable of their environment", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  // Detached and reparented to init (the subshell exits), as Codex's sandboxed commands end up.
  auto child = spawn_ok(io, shell("(SWITCHBOARD_TEST_MARK=found-me setsid sleep 1002 </dev/null >/dev/null 2>&1 &); "
                                  "echo started; exec cat"),
                        record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  // For a moment there can be two: setsid forks when it leads a process group, and its parent exits after.
  std::vector<pid_t> marked;
  REQUIRE(run_until(io, [&] {
    marked = switchboard::process::processes_with_environment("SWITCHBOARD_TEST_MARK", "found-me");
    return marked.size() == 1;
  }));
  CHECK(switchboard::process::processes_with_environment("SWITCHBOARD_TEST_MARK", "found").empty());  // exact value
  for (const pid_t pid : marked) ::kill(pid, SIGKILL);
  for (const pid_t pid : marked) CHECK(wait_process_gone(pid));
  child->kill();
  REQUIRE(run_until(io, [&] { return child->finished(); }));
}

TEST_CASE("child process: only fds 0 to 2 are inherited", "[process]") {
  boost::asio::io_context io{1};
  // What Asio and careless code leave open without close-on-exec: a plain fd, a socket, a listening acceptor.
  UniqueFd plain(::open("/dev/null", O_RDONLY));
  REQUIRE(plain);
  UniqueFd socket(::socket(AF_INET, SOCK_STREAM, 0));
  REQUIRE(socket);
  boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  REQUIRE((::fcntl(plain.get(), F_GETFD) & FD_CLOEXEC) == 0);
  REQUIRE((::fcntl(socket.get(), F_GETFD) & FD_CLOEXEC) == 0);

  const std::set<std::string> expected{"0", "1", "2"};
  SECTION("as seen from the parent") {
    auto record = std::make_shared<ProcessRecord>();
    SpawnSpec spec;
    spec.program = "/bin/cat";
    auto child = spawn_ok(io, std::move(spec), record);
    // Once cat has echoed a line it is blocked reading: its start-up files (locale) are closed by then.
    REQUIRE(child->write_stdin("ping\n"));
    REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
    CHECK(open_fds_of(child->pid()) == expected);
    for (const char* fd : {"0", "1", "2"}) {
      const auto target = std::filesystem::read_symlink("/proc/" + std::to_string(child->pid()) + "/fd/" + fd);
      CHECK(target.string().starts_with("pipe:"));
    }
    child->close_stdin();
    REQUIRE(run_until(io, [&] { return child->finished(); }));
  }
  SECTION("as listed by the child itself") {
    auto record = std::make_shared<ProcessRecord>();
    // ls lists its own directory fd too; it points at the listed directory, which identifies it.
    auto child = spawn_ok(io, shell("exec ls -l /proc/self/fd/"), record);
    REQUIRE(run_until(io, [&] { return child->finished(); }));
    std::set<std::string> fds;
    for (const auto& line : record->lines) {
      const auto arrow = line.find(" -> ");
      if (arrow == std::string::npos) continue;  // "total 0"
      if (line.find("/fd", arrow) != std::string::npos) continue;  // ls's own directory fd
      const auto name_start = line.rfind(' ', arrow - 1) + 1;
      fds.insert(line.substr(name_start, arrow - name_start));
    }
    CHECK(fds == expected);
  }
}

TEST_CASE("child process: the working directory and the environment are applied", "[process]") {
  boost::asio::io_context io{1};
  TempDir dir;
  ::setenv("SWITCHBOARD_TOKEN", "secret-token", 1);
  ::setenv("SWITCHBOARD_PROCESS_TEST_INHERITED", "yes", 1);
  ::setenv("PROCESS_TEST_INHERITED", "inherited", 1);
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("pwd; echo \"$FOO\"; echo \"${SWITCHBOARD_TOKEN-absent}\"; "
                    "echo \"${SWITCHBOARD_PROCESS_TEST_INHERITED-absent}\"; echo \"$PROCESS_TEST_INHERITED\"; "
                    "echo \"${DROPPED-absent}\"");
  spec.working_directory = dir.path();
  spec.environment = Environment::from_daemon().set("FOO", "bar baz").set("DROPPED", "x").unset("DROPPED");
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  ::unsetenv("SWITCHBOARD_TOKEN");
  ::unsetenv("SWITCHBOARD_PROCESS_TEST_INHERITED");
  ::unsetenv("PROCESS_TEST_INHERITED");
  REQUIRE(record->lines.size() == 6);
  CHECK(std::filesystem::canonical(record->lines[0]) == std::filesystem::canonical(dir.path()));
  CHECK(record->lines[1] == "bar baz");
  CHECK(record->lines[2] == "absent");
  CHECK(record->lines[3] == "absent");
  CHECK(record->lines[4] == "inherited");
  CHECK(record->lines[5] == "absent");
}

TEST_CASE("child process: an empty environment is really empty, but for the child's origin mark", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = "/usr/bin/env";
  spec.environment = Environment::empty().set("ONLY", "this");
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  // env prints sorted by nothing in particular: compare as a set. The mark is the child's own random value.
  REQUIRE(record->lines.size() == 2);
  // Appended in place: GCC 12 falsely reports -Warray-bounds in `std::string(constant) + "..."` (SourceTree.h).
  std::string origin_prefix(switchboard::process::kOriginVariable);
  origin_prefix += '=';
  const auto mark = std::find_if(record->lines.begin(), record->lines.end(),
                                 [&](const std::string& line) { return line.starts_with(origin_prefix); });
  REQUIRE(mark != record->lines.end());
  CHECK(mark->size() > std::string(switchboard::process::kOriginVariable).size() + 8);
  CHECK(std::find(record->lines.begin(), record->lines.end(), "ONLY=this") != record->lines.end());
}

TEST_CASE("child process: spawn failures are typed errors", "[process]") {
  boost::asio::io_context io{1};
  TempDir dir;
  const auto spawn_error = [&](SpawnSpec spec) {
    auto child = ChildProcess::spawn(io, std::move(spec), {});
    REQUIRE_FALSE(child);
    return child.error();
  };
  SECTION("a name not on PATH") {
    SpawnSpec spec;
    spec.program = "switchboard-no-such-cli";
    const auto error = spawn_error(spec);
    CHECK(error.code == ProcessError::Code::ExecutableNotFound);
    CHECK(error.message == "cannot run switchboard-no-such-cli: not found on PATH");
  }
  SECTION("a path that does not exist") {
    SpawnSpec spec;
    spec.program = "/nonexistent/bin/tool";
    CHECK(spawn_error(spec).code == ProcessError::Code::ExecutableNotFound);
  }
  SECTION("a path that does not exist, for a child that dies with the daemon") {
    SpawnSpec spec;
    spec.program = "/nonexistent/bin/tool";
    spec.dies_with_daemon = true;
    CHECK(spawn_error(spec).code == ProcessError::Code::ExecutableNotFound);
  }
  SECTION("a file without execute permission") {
    const auto script = dir.path() / "script.sh";
    std::ofstream(script) << "#!/bin/sh\necho hi\n";
    SpawnSpec spec;
    spec.program = script.string();
    CHECK(spawn_error(spec).code == ProcessError::Code::NotExecutable);
  }
  SECTION("a directory") {
    SpawnSpec spec;
    spec.program = dir.path().string();
    CHECK(spawn_error(spec).code == ProcessError::Code::NotExecutable);
  }
  SECTION("a missing working directory") {
    SpawnSpec spec;
    spec.program = "/bin/true";
    spec.working_directory = dir.path() / "missing";
    CHECK(spawn_error(spec).code == ProcessError::Code::WorkingDirectoryInvalid);
  }
  SECTION("a bad environment name") {
    SpawnSpec spec;
    spec.program = "/bin/true";
    spec.environment.set("A=B", "c");
    CHECK(spawn_error(spec).code == ProcessError::Code::InvalidSpec);
  }
  SECTION("a NUL in an argument") {
    SpawnSpec spec;
    spec.program = "/bin/echo";
    spec.args = {std::string("a\0b", 3)};
    CHECK(spawn_error(spec).code == ProcessError::Code::InvalidSpec);
  }
  SECTION("a relative path resolves against the working directory") {
    std::filesystem::create_directories(dir.path() / "bin");
    std::filesystem::copy_file("/bin/true", dir.path() / "bin" / "tool");
    SpawnSpec spec;
    spec.program = "./bin/tool";
    spec.working_directory = dir.path();
    auto child = ChildProcess::spawn(io, spec, {});
    REQUIRE(child);
    CHECK((*child)->executable() == dir.path() / "bin" / "tool");
    REQUIRE(run_until(io, [&] { return (*child)->finished(); }));
  }
}

TEST_CASE("child process: stdin writes beyond the queue bound are refused", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("exec sleep 1000");  // never reads its stdin
  spec.stdin_queue_limit_bytes = 64 * 1024;
  auto child = spawn_ok(io, std::move(spec), record);
  const std::string chunk(16 * 1024, 'x');
  std::optional<ProcessError> refused;
  std::size_t accepted = 0;
  // The pipe absorbs its capacity (64 KiB by default) first, then the queue fills.
  for (int i = 0; i < 1000 && !refused; ++i) {
    auto written = child->write_stdin(chunk);
    if (written) ++accepted;
    else refused = written.error();
  }
  REQUIRE(refused);
  CHECK(refused->code == ProcessError::Code::StdinQueueFull);
  CHECK(child->stdin_queued_bytes() <= 64 * 1024);
  CHECK(child->stdin_queued_bytes() > 0);
  CHECK(accepted >= 4);
  // Nothing queued by the refusal; a smaller write that fits still goes in.
  const auto before = child->stdin_queued_bytes();
  if (before < 64 * 1024) CHECK(child->write_stdin("y"));
  child->kill();
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  const auto after_exit = child->write_stdin("late\n");
  REQUIRE_FALSE(after_exit);
  CHECK(after_exit.error().code == ProcessError::Code::StdinClosed);
}

TEST_CASE("child process: stdin writes after close_stdin are refused", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = "/bin/cat";
  auto child = spawn_ok(io, std::move(spec), record);
  REQUIRE(child->write_stdin("last\n"));
  child->close_stdin();
  const auto refused = child->write_stdin("too late\n");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == ProcessError::Code::StdinClosed);
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(record->lines == std::vector<std::string>{"last"});  // the queued bytes went out before the EOF
}

TEST_CASE("child process: a child that closes its stdin makes writes fail without killing the daemon",
          "[process]") {
  ::signal(SIGPIPE, SIG_DFL);  // spawn() must take care of it
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("exec 0<&-; echo closed; exec sleep 1000"), record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  std::optional<ProcessError> error;
  for (int i = 0; i < 10 && !error; ++i) {
    auto written = child->write_stdin("hello\n");
    if (!written) error = written.error();
  }
  REQUIRE(error);
  CHECK(error->code == ProcessError::Code::StdinClosed);
  child->kill();
  REQUIRE(run_until(io, [&] { return child->finished(); }));
}

TEST_CASE("child process: destroying it kills the live process group", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("sleep 1000 & echo $!; wait"), record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  const pid_t pid = child->pid();
  const pid_t grandchild = std::stoi(record->lines.front());
  CHECK(ProcessGroupRegistry::the().contains(pid));
  child.reset();
  // The reaping finishes in the background on the io_context; no callback runs any more.
  REQUIRE(run_until(io, [&] { return !ProcessGroupRegistry::the().contains(pid); }));
  CHECK_FALSE(record->exit);
  CHECK(wait_process_gone(pid));
  CHECK(wait_process_gone(grandchild));
  CHECK(::kill(pid, 0) == -1);  // reaped, not a zombie: the pid is gone
  io.restart();
  io.run_for(std::chrono::milliseconds(50));
  CHECK(record.use_count() == 1);  // the handlers (and what they captured) were released
}

TEST_CASE("child process: a callback may destroy its own child process", "[process]") {
  boost::asio::io_context io{1};
  std::unique_ptr<ChildProcess> child;
  int lines = 0;
  ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [&](std::string_view) {
    ++lines;
    child.reset();  // several lines arrive in one read: the rest must not reach a dead handler
  };
  auto spawned = ChildProcess::spawn(io, shell("printf 'a\\nb\\nc\\n'; exec sleep 1000"), std::move(handlers));
  REQUIRE(spawned);
  child = std::move(*spawned);
  const pid_t pid = child->pid();
  REQUIRE(run_until(io, [&] { return child == nullptr; }));
  REQUIRE(run_until(io, [&] { return !ProcessGroupRegistry::the().contains(pid); }));
  CHECK(lines == 1);
  CHECK(wait_process_gone(pid));
}

TEST_CASE("child process: destroying it inside on_exit is safe", "[process]") {
  boost::asio::io_context io{1};
  std::unique_ptr<ChildProcess> child;
  std::optional<ExitStatus> status;
  ChildProcess::Handlers handlers;
  handlers.on_exit = [&](const ExitStatus& exit) {
    status = exit;
    child.reset();
  };
  auto spawned = ChildProcess::spawn(io, shell("exit 4"), std::move(handlers));
  REQUIRE(spawned);
  child = std::move(*spawned);
  REQUIRE(run_until(io, [&] { return status.has_value(); }));
  CHECK(*status == ExitStatus::exited(4));
  CHECK(child == nullptr);
}

TEST_CASE("child process: the registry kills every live group at once", "[process]") {
  boost::asio::io_context io{1};
  auto first = std::make_shared<ProcessRecord>();
  auto second = std::make_shared<ProcessRecord>();
  auto a = spawn_ok(io, shell("exec sleep 1000"), first);
  auto b = spawn_ok(io, shell("trap '' TERM; exec sleep 1000"), second);
  CHECK(ProcessGroupRegistry::the().size() >= 2);
  CHECK(ProcessGroupRegistry::the().kill_all_now() >= 2);
  REQUIRE(run_until(io, [&] { return a->finished() && b->finished(); }));
  CHECK(*first->exit == ExitStatus::signaled(SIGKILL));
  CHECK(*second->exit == ExitStatus::signaled(SIGKILL));
  CHECK_FALSE(ProcessGroupRegistry::the().contains(a->pid()));
  CHECK_FALSE(ProcessGroupRegistry::the().contains(b->pid()));
}

TEST_CASE("child process: signal_group reaches the whole group", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto child = spawn_ok(io, shell("trap 'echo interrupted; exit 5' INT; echo ready; while :; do sleep 0.05; done"),
                        record);
  REQUIRE(run_until(io, [&] { return !record->lines.empty(); }));
  CHECK(child->signal_group(SIGINT));
  REQUIRE(run_until(io, [&] { return child->finished(); }));
  CHECK(record->lines.back() == "interrupted");
  CHECK(*record->exit == ExitStatus::exited(5));
  CHECK_FALSE(child->signal_group(SIGINT));  // exited
}

TEST_CASE("child process: destroying it and then its io_context without running it still kills the child",
          "[process]") {
  pid_t pid = 0;
  {
    boost::asio::io_context io{1};
    auto record = std::make_shared<ProcessRecord>();
    auto child = spawn_ok(io, shell("exec sleep 1000"), record);
    pid = child->pid();
  }  // handle, then io_context (with the pending exit watch) destroyed; the reactor never ran
  CHECK(wait_process_gone(pid));
  CHECK_FALSE(ProcessGroupRegistry::the().contains(pid));
  int status = 0;
  ::waitpid(pid, &status, 0);  // the zombie, if the state's last WNOHANG came too early
}

}  // namespace child_process_tests
