#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "store/Store.h"
#include "support/StoreTestSupport.h"

extern char** environ;  // the child inherits the test's environment plus one variable

namespace store_crash_tests {

using namespace switchboard::store;
using switchboard::testing::make_store_event;
using switchboard::testing::StoreTempDir;

constexpr const char* kChildTest = "store crash child: append until killed";
constexpr const char* kDbVariable = "SWITCHBOARD_STORE_CRASH_DB";

struct Child {
  pid_t pid = -1;
  int stdout_fd = -1;
};

// Runs this test binary again, selecting only the hidden child test, with its stdout on a pipe.
Child spawn_child(const std::string& db_path) {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, kDbVariable, std::strlen(kDbVariable)) != 0) env_strings.emplace_back(*e);
  }
  std::string db_variable = kDbVariable;  // appended in place: see SourceTree.h on GCC 12's false -Warray-bounds
  db_variable += '=';
  db_variable += db_path;
  env_strings.push_back(std::move(db_variable));
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string name = kChildTest;
  char* argv[] = {exe.data(), name.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  Child child;
  const int rc = ::posix_spawn(&child.pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  REQUIRE(rc == 0);
  child.stdout_fd = fds[0];
  return child;
}

// Reads what is available within `timeout`; false at EOF.
bool read_some(int fd, std::string& into, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return true;
  char buf[4096];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  if (n <= 0) return false;
  into.append(buf, static_cast<std::size_t>(n));
  return true;
}

struct ChildOutput {
  std::uint64_t started_after = 0;  // the log's last_seq when the child opened it
  std::uint64_t max_acked = 0;      // the highest seq the child saw committed
  std::size_t acks = 0;
  std::string other;  // any line that is not ours
};

ChildOutput parse(const std::string& text) {
  ChildOutput out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("start ", 0) == 0) {
      out.started_after = std::stoull(line.substr(6));
    } else if (line.rfind("ack ", 0) == 0) {
      const auto seq = std::stoull(line.substr(4));
      CHECK(seq >= out.max_acked);
      out.max_acked = std::max<std::uint64_t>(out.max_acked, seq);
      ++out.acks;
    } else {
      // Not ours: Catch's "Filters:" banner, or its report if the child failed (shown when acks are missing).
      out.other += line + "\n";
    }
  }
  return out;
}

// The child side: opens the store, appends events without pause (a 1 ms timer adds a burst while the backlog
// is small) and prints "ack <seq>" for every commit, straight to fd 1, until the parent kills it.
TEST_CASE(kChildTest, "[.store-crash-child]") {
  const char* path = std::getenv(kDbVariable);
  REQUIRE(path != nullptr);
  // stdout carries the acknowledgements: logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_st("store-crash-child"));
  boost::asio::io_context io{1};
  auto store = Store::open(io, path);
  REQUIRE(store);
  EventLog& log = (*store)->events();
  const auto say = [](const std::string& line) {
    const std::string text = line + "\n";
    // One write() per line: a line is in the pipe, whole, before the next event is processed.
    REQUIRE(::write(1, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  };
  say("start " + std::to_string(log.last_seq()));
  log.on_commit([&](std::uint64_t committed) { say("ack " + std::to_string(committed)); });

  std::uint64_t next = log.last_seq() + 1;
  std::mt19937 random(static_cast<unsigned>(::getpid()));
  boost::asio::steady_timer tick(io);
  std::function<void()> produce = [&] {
    if (log.unsaved_count() < 3000) {  // small batches: many commits, each a chance to be cut
      const auto burst = 50 + random() % 400;
      for (std::size_t i = 0; i < burst; ++i) {
        log.on_event(make_store_event(next, "s-" + std::to_string(next % 5),
                                      switchboard::protocol::EventKind::MessageDelta,
                                      "t-" + std::to_string(next / 1000), "delta number " + std::to_string(next)));
        ++next;
      }
    }
    tick.expires_after(std::chrono::milliseconds(1));
    tick.async_wait([&](const boost::system::error_code&) { produce(); });
  };
  produce();
  io.run();
}

TEST_CASE("store: kill -9 loses no acknowledged event and the log reopens intact and continues above the reservation", "[store]") {
  StoreTempDir dir;
  std::uint64_t stored_before = 0;
  std::mt19937 random(12345);
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    Child child = spawn_child(dir.db().string());
    std::string output;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    // Let it commit a few dozen batches, then kill it somewhere mid-stream.
    const std::size_t acks_wanted = 15 + random() % 25;
    while (parse(output).acks < acks_wanted && std::chrono::steady_clock::now() < deadline) {
      if (!read_some(child.stdout_fd, output, std::chrono::milliseconds(100))) break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
    ::kill(child.pid, SIGKILL);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    while (read_some(child.stdout_fd, output, std::chrono::milliseconds(1000))) {
    }
    ::close(child.stdout_fd);
    CHECK(WIFSIGNALED(status));

    const ChildOutput seen = parse(output);
    INFO(output.substr(0, 2000));
    REQUIRE(seen.acks >= acks_wanted);
    // The child's seqs continued above the previous round's: above its stored events and its reservation
    // (docs/persistence.md, "Seq reservation").
    CHECK(seen.started_after >= stored_before);

    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE);  // recovers the WAL, as the daemon would
    CHECK(db.execAndGet("PRAGMA integrity_check").getString() == "ok");
    SQLite::Statement stats(db, "SELECT count(*), coalesce(min(seq), 0), coalesce(max(seq), 0) FROM events");
    REQUIRE(stats.executeStep());
    const auto count = static_cast<std::uint64_t>(stats.getColumn(0).getInt64());
    const auto min_seq = static_cast<std::uint64_t>(stats.getColumn(1).getInt64());
    const auto max_seq = static_cast<std::uint64_t>(stats.getColumn(2).getInt64());
    // What earlier rounds reserved and did not store is recorded as lost (by the open that followed them).
    const auto lost = static_cast<std::uint64_t>(
        db.execAndGet("SELECT coalesce(sum(last_seq - first_seq + 1), 0) FROM lost_events").getInt64());
    CHECK(min_seq == 1);
    CHECK(count + lost == max_seq);         // stored rows and lost ranges tile 1..max: no other hole, no duplicate
    CHECK(max_seq >= seen.max_acked);       // every acknowledged event is there
    CHECK(seen.max_acked > stored_before);  // and this round added some
    stored_before = max_seq;
  }

  // The daemon's view after the last crash: last_seq() picks up where the file ends, and appending continues.
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE(store);
  EventLog& log = (*store)->events();
  CHECK(log.last_seq() >= stored_before);
  // The last round's reservation beyond what it stored, if any, is recorded as lost.
  if (log.last_seq() > stored_before) {
    CHECK(log.lost_after(stored_before) == std::vector<SeqRange>{SeqRange{stored_before + 1, log.last_seq()}});
  } else {
    CHECK(log.lost_after(stored_before).empty());
  }
  const std::uint64_t next = log.last_seq() + 1;
  log.on_event(make_store_event(next));
  auto committed = switchboard::testing::await_store<std::uint64_t>(io, [&](auto done) { log.flush(done); });
  REQUIRE(committed);
  CHECK(*committed == next);
}

}  // namespace store_crash_tests
