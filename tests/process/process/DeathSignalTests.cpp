#include <catch2/catch.hpp>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <iterator>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "switchboard/process/ChildProcess.h"
#include "process/FatalSignalCleanup.h"
#include "support/ProcessTestSupport.h"

namespace death_signal_tests {

using namespace switchboard::process;
using switchboard::testing::process_gone;
using switchboard::testing::ProcessRecord;
using switchboard::testing::record_into;
using switchboard::testing::run_until;
using switchboard::testing::shell;
using switchboard::testing::wait_process_gone;

constexpr const char* kOrphanChildTest = "death signal child: a daemon that spawns sleep and waits";
constexpr const char* kCrashChildTest = "fatal signal cleanup child: a daemon that spawns sleep and aborts";
constexpr const char* kExitChildTest = "fatal signal cleanup child: a daemon that spawns sleep and exits";
constexpr const char* kDeathSignalVariable = "SWITCHBOARD_PROCESS_TEST_DEATH_SIGNAL";

// Every line a child wrote, for a failure's message.
std::string testing_lines(const ProcessRecord& record) {
  std::string text;
  for (const auto& line : record.lines) text += line + "\n";
  return text;
}

// Prints "grandchild <pid>" for the parent test, straight to fd 1 (Catch's banner shares stdout).
void announce_grandchild(pid_t pid) {
  const std::string line = "grandchild " + std::to_string(pid) + "\n";
  REQUIRE(::write(1, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
}

// The hidden child tests below play "the daemon": they spawn `sleep 1000` with ChildProcess and then die in one
// of the ways no graceful shutdown runs. This starts one of them (this very test binary) as a child process of
// the test and returns the sleep's pid, or 0.
struct FakeDaemon {
  std::unique_ptr<ChildProcess> process;
  std::shared_ptr<ProcessRecord> record = std::make_shared<ProcessRecord>();
  pid_t grandchild = 0;
};

FakeDaemon start_fake_daemon(boost::asio::io_context& io, const char* test_name, bool death_signal) {
  FakeDaemon daemon;
  SpawnSpec spec;
  spec.program = std::filesystem::read_symlink("/proc/self/exe").string();
  spec.args = {test_name};
  // The fake daemon's own children would not inherit this: from_daemon() drops SWITCHBOARD_*. It is only
  // for the fake daemon itself.
  spec.environment = Environment::from_daemon().set(kDeathSignalVariable, death_signal ? "1" : "0");
  // Under ASan, LeakSanitizer would turn the deliberate exit() with live objects into exit code 23.
  const auto asan = spec.environment.get("ASAN_OPTIONS").value_or("");
  spec.environment.set("ASAN_OPTIONS", asan.empty() ? "detect_leaks=0" : asan + ":detect_leaks=0");
  auto process = ChildProcess::spawn(io, std::move(spec), record_into(daemon.record));
  if (!process) FAIL("cannot start the fake daemon: " << process.error());
  daemon.process = std::move(*process);
  run_until(io, [&] {
    for (const auto& line : daemon.record->lines) {
      if (line.starts_with("grandchild ")) return true;
    }
    return daemon.process->finished();
  });
  for (const auto& line : daemon.record->lines) {
    if (line.starts_with("grandchild ")) daemon.grandchild = std::stoi(line.substr(11));
  }
  return daemon;
}

std::unique_ptr<ChildProcess> spawn_sleep_as_daemon(boost::asio::io_context& io) {
  SpawnSpec spec;
  spec.program = "sleep";
  spec.args = {"1000"};
  const char* death_signal = std::getenv(kDeathSignalVariable);
  spec.dies_with_daemon = death_signal != nullptr && std::string(death_signal) == "1";
  auto child = ChildProcess::spawn(io, std::move(spec), {});
  REQUIRE(child);
  announce_grandchild((*child)->pid());
  return std::move(*child);
}

TEST_CASE(kOrphanChildTest, "[.process-child]") {
  spdlog::set_default_logger(spdlog::stderr_color_st("fake-daemon"));
  boost::asio::io_context io{1};
  auto sleep = spawn_sleep_as_daemon(io);
  io.run();  // until the parent test SIGKILLs us
}

TEST_CASE(kCrashChildTest, "[.process-child]") {
  spdlog::set_default_logger(spdlog::stderr_color_st("fake-daemon"));
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  install_fatal_signal_cleanup();
  boost::asio::io_context io{1};
  auto sleep = spawn_sleep_as_daemon(io);
  std::abort();
}

TEST_CASE(kExitChildTest, "[.process-child]") {
  spdlog::set_default_logger(spdlog::stderr_color_st("fake-daemon"));
  install_fatal_signal_cleanup();
  boost::asio::io_context io{1};
  auto sleep = spawn_sleep_as_daemon(io);
  std::exit(0);  // no destructor runs: only the atexit hook can clean up
}

TEST_CASE("spawn: a child that dies with the daemon starts clean: default signals, none blocked, only 0-2 open", "[process]") {
  ::signal(SIGPIPE, SIG_IGN);  // as the daemon does: an ignored disposition would survive exec
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGUSR1);
  switchboard::testing::TempDir dir;
  const auto run = [&](SpawnSpec spec) {
    boost::asio::io_context io{1};
    spec.dies_with_daemon = true;
    spec.working_directory = dir.path();
    auto record = std::make_shared<ProcessRecord>();
    ::pthread_sigmask(SIG_BLOCK, &blocked, nullptr);  // and a blocked signal would stay blocked
    auto child = ChildProcess::spawn(io, spec, record_into(record));
    ::pthread_sigmask(SIG_UNBLOCK, &blocked, nullptr);
    REQUIRE(child);
    REQUIRE(run_until(io, [&] { return (*child)->finished(); }));
    CHECK(*record->exit == ExitStatus::exited(0));
    return record->lines;
  };

  // grep is the spawned program itself and reads its own status. A shell would not do: dash blocks every signal
  // while it waits for a command, so its own status shows a full mask whenever the read catches it waiting.
  SpawnSpec signals;
  signals.program = "grep";
  signals.args = {"-E", "^(SigBlk|SigIgn)", "/proc/self/status"};
  const auto signal_lines = run(signals);
  REQUIRE(signal_lines.size() == 2);
  CHECK(signal_lines[0] == "SigBlk:\t0000000000000000");
  CHECK(signal_lines[1] == "SigIgn:\t0000000000000000");

  // The shell's own descriptors (ls runs in a process of its own; no pipeline, whose ends the shell would hold for a
  // moment): nothing of the test binary's.
  const auto shell_lines = run(shell("ls /proc/$$/fd; pwd"));
  CHECK(shell_lines == std::vector<std::string>{"0", "1", "2", dir.path().string()});
}

constexpr const char* kNoCloseRangeChildTest = "spawn child: without close_range a spawned child gets only fds 0-2";

// Makes close_range(2) fail with ENOSYS in this process from now on, as on a kernel older than 5.9 (a Debian 12
// container on an older host). Irreversible: only for a child process of the test.
void refuse_close_range() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_close_range, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog program{static_cast<unsigned short>(std::size(filter)), filter};
  REQUIRE(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
  REQUIRE(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) == 0);
  REQUIRE(::syscall(SYS_close_range, 1000U, 1000U, 0U) == -1);
  REQUIRE(errno == ENOSYS);
}

TEST_CASE(kNoCloseRangeChildTest, "[.process-child]") {
  refuse_close_range();
  // A descriptor without close-on-exec, as Asio's sockets are: the spawn must still keep it from the child.
  int leaked[2];
  REQUIRE(::pipe(leaked) == 0);
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  // No pipeline: while one runs the shell itself holds a pipe end, which would show in its listing.
  auto spec = shell("ls /proc/$$/fd");
  spec.dies_with_daemon = true;
  auto child = ChildProcess::spawn(io, spec, record_into(record));
  REQUIRE(child);
  REQUIRE(run_until(io, [&] { return (*child)->finished(); }));
  std::string fds;
  for (const auto& fd : record->lines) fds += fd + " ";
  const std::string line = "child fds: " + fds + "\n";
  REQUIRE(::write(1, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
}

TEST_CASE("spawn: on a kernel without close_range every descriptor above 2 is still closed in the child", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = std::filesystem::read_symlink("/proc/self/exe").string();
  spec.args = {kNoCloseRangeChildTest};
  auto tester = ChildProcess::spawn(io, std::move(spec), record_into(record));
  REQUIRE(tester);
  REQUIRE(run_until(io, [&] { return (*tester)->finished(); }));
  INFO(testing_lines(*record));
  CHECK(*record->exit == ExitStatus::exited(0));
  CHECK(std::find(record->lines.begin(), record->lines.end(), "child fds: 0 1 2 ") != record->lines.end());
}

TEST_CASE("death signal: the agent dies when the daemon is SIGKILLed", "[process]") {
  boost::asio::io_context io{1};
  SECTION("with the death signal the kernel kills it") {
    auto daemon = start_fake_daemon(io, kOrphanChildTest, /*death_signal=*/true);
    REQUIRE(daemon.grandchild > 0);
    CHECK_FALSE(process_gone(daemon.grandchild));
    ::kill(daemon.process->pid(), SIGKILL);  // the daemon only, as `kill -9 <daemon>` would
    REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
    const bool gone = wait_process_gone(daemon.grandchild);
    if (!gone) ::kill(-daemon.grandchild, SIGKILL);
    CHECK(gone);
  }
  SECTION("without it the agent would survive (what the signal is for)") {
    auto daemon = start_fake_daemon(io, kOrphanChildTest, /*death_signal=*/false);
    REQUIRE(daemon.grandchild > 0);
    ::kill(daemon.process->pid(), SIGKILL);
    REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
    ::usleep(200'000);
    CHECK_FALSE(process_gone(daemon.grandchild));
    ::kill(-daemon.grandchild, SIGKILL);  // its own group: the fake daemon's group kill did not reach it
    CHECK(wait_process_gone(daemon.grandchild));
  }
}

TEST_CASE("fatal signal cleanup: a crashing daemon takes its agents with it", "[process]") {
  boost::asio::io_context io{1};
  auto daemon = start_fake_daemon(io, kCrashChildTest, /*death_signal=*/false);
  REQUIRE(daemon.grandchild > 0);
  REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
  CHECK(*daemon.record->exit == ExitStatus::signaled(SIGABRT));  // the crash still reads as a crash
  const bool gone = wait_process_gone(daemon.grandchild);
  if (!gone) ::kill(-daemon.grandchild, SIGKILL);
  CHECK(gone);
}

TEST_CASE("fatal signal cleanup: exit() without destructors still kills the agents", "[process]") {
  boost::asio::io_context io{1};
  auto daemon = start_fake_daemon(io, kExitChildTest, /*death_signal=*/false);
  REQUIRE(daemon.grandchild > 0);
  REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
  CHECK(*daemon.record->exit == ExitStatus::exited(0));
  const bool gone = wait_process_gone(daemon.grandchild);
  if (!gone) ::kill(-daemon.grandchild, SIGKILL);
  CHECK(gone);
}

}  // namespace death_signal_tests
