#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "switchboard/process/ChildProcess.h"
#include "process/ExecShim.h"
#include "process/FatalSignalCleanup.h"
#include "support/ProcessTestSupport.h"

namespace exec_shim_tests {

using namespace switchboard::process;
using switchboard::testing::process_gone;
using switchboard::testing::ProcessRecord;
using switchboard::testing::record_into;
using switchboard::testing::run_until;
using switchboard::testing::shell;
using switchboard::testing::wait_process_gone;

constexpr const char* kOrphanChildTest = "exec shim child: a daemon that spawns sleep and waits";
constexpr const char* kCrashChildTest = "fatal signal cleanup child: a daemon that spawns sleep and aborts";
constexpr const char* kExitChildTest = "fatal signal cleanup child: a daemon that spawns sleep and exits";
constexpr const char* kUseShimVariable = "SWITCHBOARD_PROCESS_TEST_USE_SHIM";

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

FakeDaemon start_fake_daemon(boost::asio::io_context& io, const char* test_name, bool use_shim) {
  FakeDaemon daemon;
  SpawnSpec spec;
  spec.program = std::filesystem::read_symlink("/proc/self/exe").string();
  spec.args = {test_name};
  // The fake daemon's own children would not inherit this: from_daemon() drops SWITCHBOARD_*. It is only
  // for the fake daemon itself.
  spec.environment = Environment::from_daemon().set(kUseShimVariable, use_shim ? "1" : "0");
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
  const char* use_shim = std::getenv(kUseShimVariable);
  if (use_shim != nullptr && std::string(use_shim) == "1") spec.exec_shim = SWITCHBOARD_BINARY;
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

TEST_CASE("exec shim: the child runs in place of the shim with a parent-death signal", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  auto spec = shell("echo $$; tr '\\0' ' ' < /proc/$$/cmdline; echo");
  spec.exec_shim = SWITCHBOARD_BINARY;
  spec.args.push_back("argv0-check");
  auto child = ChildProcess::spawn(io, spec, record_into(record));
  REQUIRE(child);
  REQUIRE(run_until(io, [&] { return (*child)->finished(); }));
  CHECK(*record->exit == ExitStatus::exited(0));
  REQUIRE(record->lines.size() == 2);
  CHECK(record->lines[0] == std::to_string((*child)->pid()));  // exec'd in place: same pid, same group
  // The shell was exec'd with argv[0] as written, not the shim's arguments.
  CHECK(record->lines[1].starts_with("/bin/sh -c "));
  CHECK(record->lines[1].find("__exec-shim") == std::string::npos);
  CHECK((*child)->executable() == "/bin/sh");
}

TEST_CASE("exec shim: argv layout and refusal of a malformed command line", "[process]") {
  const auto argv = exec_shim_argv("/usr/bin/switchboard", 42, "/bin/sh", {"sh", "-c", "true"});
  CHECK(argv == std::vector<std::string>{"/usr/bin/switchboard", "__exec-shim", "--parent-pid=42", "--exec=/bin/sh",
                                         "--", "sh", "-c", "true"});
  std::vector<std::string> bad = {"switchboard", "__exec-shim", "--parent-pid=x", "--exec=/bin/true", "--", "true"};
  std::vector<char*> pointers;
  for (auto& arg : bad) pointers.push_back(arg.data());
  pointers.push_back(nullptr);
  CHECK(is_exec_shim_call(static_cast<int>(bad.size()), pointers.data()));
  CHECK(run_exec_shim(static_cast<int>(bad.size()), pointers.data()) == 2);
}

TEST_CASE("exec shim: a target that vanished after the lookup exits 127 with a message", "[process]") {
  boost::asio::io_context io{1};
  auto record = std::make_shared<ProcessRecord>();
  SpawnSpec spec;
  spec.program = SWITCHBOARD_BINARY;
  const auto argv = exec_shim_argv(SWITCHBOARD_BINARY, ::getpid(), "/nonexistent/tool", {"tool"});
  spec.args.assign(argv.begin() + 1, argv.end());
  auto child = ChildProcess::spawn(io, spec, record_into(record));
  REQUIRE(child);
  REQUIRE(run_until(io, [&] { return (*child)->finished(); }));
  CHECK(*record->exit == ExitStatus::exited(127));
  CHECK((*child)->stderr_tail().find("cannot execute /nonexistent/tool") != std::string::npos);
}

TEST_CASE("exec shim: the agent dies when the daemon is SIGKILLed", "[process]") {
  boost::asio::io_context io{1};
  SECTION("through the shim the kernel kills it") {
    auto daemon = start_fake_daemon(io, kOrphanChildTest, /*use_shim=*/true);
    REQUIRE(daemon.grandchild > 0);
    CHECK_FALSE(process_gone(daemon.grandchild));
    ::kill(daemon.process->pid(), SIGKILL);  // the daemon only, as `kill -9 <daemon>` would
    REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
    const bool gone = wait_process_gone(daemon.grandchild);
    if (!gone) ::kill(-daemon.grandchild, SIGKILL);
    CHECK(gone);
  }
  SECTION("without the shim it would survive (what the shim is for)") {
    auto daemon = start_fake_daemon(io, kOrphanChildTest, /*use_shim=*/false);
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
  auto daemon = start_fake_daemon(io, kCrashChildTest, /*use_shim=*/false);
  REQUIRE(daemon.grandchild > 0);
  REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
  CHECK(*daemon.record->exit == ExitStatus::signaled(SIGABRT));  // the crash still reads as a crash
  const bool gone = wait_process_gone(daemon.grandchild);
  if (!gone) ::kill(-daemon.grandchild, SIGKILL);
  CHECK(gone);
}

TEST_CASE("fatal signal cleanup: exit() without destructors still kills the agents", "[process]") {
  boost::asio::io_context io{1};
  auto daemon = start_fake_daemon(io, kExitChildTest, /*use_shim=*/false);
  REQUIRE(daemon.grandchild > 0);
  REQUIRE(run_until(io, [&] { return daemon.process->finished(); }));
  CHECK(*daemon.record->exit == ExitStatus::exited(0));
  const bool gone = wait_process_gone(daemon.grandchild);
  if (!gone) ::kill(-daemon.grandchild, SIGKILL);
  CHECK(gone);
}

}  // namespace exec_shim_tests
