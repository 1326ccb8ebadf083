#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/CountOccurrences.h"
#include "support/Eventually.h"
#include "support/FdIo.h"
#include "support/Pipe.h"
#include "support/RawHttpClient.h"
#include "support/RuntimeFile.h"
#include "support/SpawnedDaemon.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

namespace http_daemon_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::RawHttpClient;
using switchboard::testing::SpawnedDaemon;
using switchboard::testing::read_all;
using switchboard::testing::read_line;
using switchboard::testing::TempDir;
using switchboard::testing::Pipe;
using switchboard::testing::read_text_file;
using switchboard::testing::wait_for_runtime_file;
using switchboard::testing::count_occurrences;
using switchboard::testing::eventually;

TEST_CASE("serve: announces itself, guards its data directory, refuses a second instance", "[http][daemon]") {
  TempDir tmp{"http"};
  const fs::path dir = tmp.path() / "data";
  Pipe out;
  Pipe err;
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  SpawnedDaemon first({"--log-level", "trace", "serve", "--port", "0", "--data-dir", dir.string()}, in, out.write_end(), err.write_end());
  out.close_write();
  err.close_write();
  const std::string url_line = read_line(out.read_end());
  CHECK(url_line.find("listening on http://127.0.0.1:") != std::string::npos);
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string token = runtime.at("token");
  CHECK(token.size() == 64);  // 256 bits, hex
  CHECK(runtime.at("pid") == first.pid());
  CHECK(runtime.at("protocolVersion") == 1);

  struct stat info {};
  REQUIRE(::stat(dir.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0700);
  REQUIRE(::stat((dir / "daemon.json").c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0600);

  RawHttpClient identity(port);
  const auto id = json::parse(identity.request("GET", "/.well-known/switchboard", {}).body);
  CHECK(id.at("name") == "switchboard");
  CHECK(id.at("pid") == first.pid());
  // Requests that carry the token in the query: the logs must not show it.
  RawHttpClient with_query(port);
  CHECK(with_query.request("POST", "/rpc?token=" + token, {"Content-Type: application/json"},
                           R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status == 200);

  SECTION("a second instance on the same data dir says where the first is and exits non-zero") {
    Pipe err2;
    const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    SpawnedDaemon second({"serve", "--port", "0", "--data-dir", dir.string()}, in, null_out, err2.write_end());
    err2.close_write();
    ::close(null_out);
    const std::string message = read_all(err2.read_end());
    CHECK(second.wait() == 3);
    CHECK(message.find("already running") != std::string::npos);
    CHECK(message.find(std::to_string(port)) != std::string::npos);
  }
  SECTION("SIGTERM: clean exit, runtime file removed, token never logged") {
    ::kill(first.pid(), SIGTERM);
    CHECK(first.wait() == 0);
    CHECK_FALSE(fs::exists(dir / "daemon.json"));
    const std::string logs = read_all(err.read_end());
    CHECK(logs.find("POST /rpc?token=REDACTED") != std::string::npos);
    CHECK(logs.find(token) == std::string::npos);
  }
  SECTION("a stale lock from a killed daemon is taken over") {
    ::kill(first.pid(), SIGKILL);
    first.wait();
    const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    SpawnedDaemon third({"--log-level", "off", "serve", "--port", "0", "--data-dir", dir.string()}, in, null_out, null_out);
    ::close(null_out);
    json replaced;
    for (int i = 0; i < 400; ++i) {
      replaced = json::parse(read_text_file(dir / "daemon.json"), nullptr, false);
      if (replaced.is_object() && replaced.value("pid", 0) == third.pid()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(replaced.value("pid", 0) == third.pid());
    CHECK(replaced.value("token", "") != token);  // a fresh token per run
    ::kill(third.pid(), SIGTERM);
    CHECK(third.wait() == 0);
  }
  ::close(in);
}

TEST_CASE("serve: a non-loopback bind is refused unless asked for", "[http][daemon]") {
  TempDir tmp{"http"};
  Pipe err;
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon daemon({"serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", (tmp.path() / "d").string()}, in,
                       null_out, err.write_end());
  err.close_write();
  ::close(in);
  ::close(null_out);
  CHECK(daemon.wait() == 1);
  CHECK(read_all(err.read_end()).find("non-loopback") != std::string::npos);
}

TEST_CASE("stdio --http: one egress, byte-identical events and responses on both transports", "[http][daemon]") {
  TempDir tmp{"http"};
  const fs::path dir = tmp.path() / "data";
  Pipe in;
  Pipe out;
  const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon daemon({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string()}, in.read_end(),
                       out.write_end(), null_err);
  in.close_read();
  out.close_write();
  ::close(null_err);
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string bearer = "Authorization: Bearer " + runtime.at("token").get<std::string>();

  auto stdio_call = [&](const std::string& line) {
    const std::string bytes = line + "\n";
    REQUIRE(::write(in.write_end(), bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    return read_line(out.read_end());
  };
  REQUIRE(json::parse(stdio_call(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"tui"}}})")).contains("result"));
  for (const std::string& request : {
           std::string(R"({"jsonrpc":"2.0","id":7,"method":"rpc.discover"})"),
           std::string(R"({"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"1"}})"),
           std::string(R"([{"jsonrpc":"2.0","id":1,"method":"nope"},{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":1}}])"),
           std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping")"),
       }) {
    CAPTURE(request);
    RawHttpClient client(port);
    const auto http = client.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, request);
    CHECK(http.body == stdio_call(request));
  }

  RawHttpClient sse(port);
  REQUIRE(sse.send_request("GET", "/events", {bearer}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // retry hint
  in.close_write();           // the TUI goes away: the daemon shuts down and says so on both transports
  const std::string stdio_event = read_line(out.read_end());
  const auto frame = sse.read_frame();
  REQUIRE(frame);
  const std::string prefix = R"({"jsonrpc":"2.0","method":"event","params":)";
  REQUIRE(stdio_event.rfind(prefix, 0) == 0);
  const std::string stdio_json = stdio_event.substr(prefix.size(), stdio_event.size() - prefix.size() - 1);
  const std::string sse_json = frame->substr(frame->find("data: ") + 6);
  CHECK(sse_json == stdio_json);
  CHECK(json::parse(sse_json).at("type") == "daemon.shutdown");
  CHECK(daemon.wait() == 0);
}

// CPU time (user + system) the process has used, in clock ticks.
long cpu_ticks(pid_t pid) {
  const std::string stat = read_text_file("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // past "pid (comm) "
  std::string field;
  long utime = 0;
  long stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

// The descriptor limit that leaves `pid` exactly `room` free descriptors. New descriptors take the lowest free
// numbers, and open ones may be sparse (a descriptor inherited at 251, say), so the limit is one past the
// `room`-th free number, not the highest open one plus `room`.
rlim_t limit_leaving(pid_t pid, int room) {
  std::set<int> open;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    open.insert(std::stoi(entry.path().filename().string()));
  }
  int fd = 0;
  for (int free_seen = 0;; ++fd) {
    if (!open.contains(fd) && ++free_seen == room) break;
  }
  return static_cast<rlim_t>(fd + 1);
}

TEST_CASE("serve: out of descriptors, the acceptor backs off instead of spinning, and recovers", "[http][daemon]") {
  TempDir tmp{"http"};
  const fs::path log = tmp.path() / "daemon.log";
  Pipe out;
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  // No agent CLI to probe: nothing else in the daemon opens descriptors while the test counts.
  SpawnedDaemon daemon({"--log-level", "warn", "--log-file", log.string(), "serve", "--port", "0", "--ephemeral",
                        "--data-dir", (tmp.path() / "data").string()},
                       in, out.write_end(), null_err,
                       {"SWITCHBOARD_CLAUDE_BIN=/nonexistent/claude", "SWITCHBOARD_CODEX_BIN=/nonexistent/codex"});
  out.close_write();
  ::close(in);
  ::close(null_err);
  const std::string listening = read_line(out.read_end());
  const auto colon = listening.rfind(':');
  REQUIRE(colon != std::string::npos);
  const auto port = static_cast<std::uint16_t>(std::stoi(listening.substr(colon + 1)));
  const std::string open_line = read_line(out.read_end());
  const std::string token = open_line.substr(open_line.find("#token=") + 7);
  const std::vector<std::string> headers = {"Authorization: Bearer " + token, "Content-Type: application/json"};
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  {
    RawHttpClient warm(port);
    REQUIRE(warm.request("POST", "/rpc", headers, ping).status == 200);
  }

  // Leave the daemon room for a few descriptors only, then take them with idle keep-alive connections.
  rlimit original{};
  REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, nullptr, &original) == 0);
  const rlimit tight{limit_leaving(daemon.pid(), 4), original.rlim_max};
  REQUIRE(::prlimit(daemon.pid(), RLIMIT_NOFILE, &tight, nullptr) == 0);
  std::vector<std::unique_ptr<RawHttpClient>> hogs;
  for (int i = 0; i < 32; ++i) {
    hogs.push_back(std::make_unique<RawHttpClient>(port, 300));
    REQUIRE(hogs.back()->connected());  // the kernel completes the handshake; the daemon may not accept it
  }
  // The last connections wait in the backlog: accept fails with EMFILE while the daemon is full.
  RawHttpClient waiting(port, 8000);
  REQUIRE(waiting.send_request("POST", "/rpc", headers, ping));
  // The daemon really ran out: its acceptor has failed at least once.
  REQUIRE(eventually([&] { return count_occurrences(read_text_file(log), "accept failed") > 0; }, std::chrono::seconds(10)));

  const auto failures_before = count_occurrences(read_text_file(log), "accept failed");
  const long ticks_before = cpu_ticks(daemon.pid());
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  const long ticks_spent = cpu_ticks(daemon.pid()) - ticks_before;
  const auto failures = count_occurrences(read_text_file(log), "accept failed") - failures_before;
  CAPTURE(ticks_spent, failures);
  // Back-off of 100 ms doubling to 1 s: over 2 s at most a handful of attempts, and next to no CPU (a spinning
  // acceptor retries tens of thousands of times and burns the whole 2 s).
  CHECK(failures <= 6);
  CHECK(ticks_spent < sysconf(_SC_CLK_TCK) / 5);

  // Descriptors come free (the idle clients leave): the waiting connection is accepted and answered.
  hogs.clear();
  const auto answered = waiting.read_response();
  CHECK(answered.status == 200);
  ::prlimit(daemon.pid(), RLIMIT_NOFILE, &original, nullptr);
  RawHttpClient after(port);
  CHECK(after.request("POST", "/rpc", headers, ping).status == 200);
  ::kill(daemon.pid(), SIGTERM);
  CHECK(daemon.wait() == 0);
}

}  // namespace http_daemon_tests
