#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/FdIo.h"
#include "support/InitializeRequest.h"
#include "support/SpawnedDaemon.h"

namespace daemon_process_tests {

using nlohmann::json;
using switchboard::testing::SpawnedDaemon;
using switchboard::testing::read_all;
using switchboard::testing::write_all;
using switchboard::testing::read_line;
using switchboard::testing::kInitializeLine;

int dev_null(int flags) { return ::open("/dev/null", flags | O_CLOEXEC); }

TEST_CASE("daemon: SIGTERM shuts down gracefully with exit code 0 (stdin a socket)", "[daemon]") {
  int in[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) == 0);
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const int err = dev_null(O_WRONLY);
  SpawnedDaemon daemon({"--log-level", "off", "stdio"}, in[1], out[1], err);
  REQUIRE(daemon.started());
  ::close(in[1]);
  ::close(out[1]);
  ::close(err);

  write_all(in[0], kInitializeLine);
  CHECK(json::parse(read_line(out[0])).at("result").at("protocolVersion") == 1);
  write_all(in[0], R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n");
  CHECK(json::parse(read_line(out[0])).at("id") == 1);

  ::kill(daemon.pid(), SIGTERM);
  const auto last = json::parse(read_line(out[0]));
  CHECK(last.at("method") == "event");
  CHECK(last.at("params").at("type") == "daemon.shutdown");
  CHECK(last.at("params").at("data").at("reason") == "signal");
  CHECK(read_all(out[0]).empty());
  CHECK(daemon.wait() == 0);
  ::close(in[0]);
  ::close(out[0]);
}

TEST_CASE("daemon: EOF on stdin exits 0 after answering everything", "[daemon]") {
  SECTION("stdin is /dev/null") {
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    const int in = dev_null(O_RDONLY);
    const int err = dev_null(O_WRONLY);
    SpawnedDaemon daemon({"--log-level", "off", "stdio"}, in, out[1], err);
    ::close(out[1]);
    ::close(in);
    ::close(err);
    CHECK(read_all(out[0]).empty());
    CHECK(daemon.wait() == 0);
    ::close(out[0]);
  }
  SECTION("stdin is a regular file; logs at trace level never reach stdout") {
    char path[] = "/tmp/switchboard-daemon-XXXXXX";
    const int in = ::mkstemp(path);
    REQUIRE(in >= 0);
    ::unlink(path);
    write_all(in, kInitializeLine + R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n" R"({"jsonrpc":"2.0","id":2,"method":"rpc.discover"})");
    REQUIRE(::lseek(in, 0, SEEK_SET) == 0);
    int out[2];
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    int err[2];
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    SpawnedDaemon daemon({"--log-level", "trace", "stdio"}, in, out[1], err[1]);
    ::close(out[1]);
    ::close(err[1]);
    ::close(in);
    const std::string output = read_all(out[0]);
    const std::string logs = read_all(err[0]);
    CHECK(daemon.wait() == 0);
    std::vector<json> lines;
    std::size_t start = 0;
    while (start < output.size()) {
      const auto end = output.find('\n', start);
      REQUIRE(end != std::string::npos);
      const auto line = json::parse(output.substr(start, end - start), nullptr, false);
      REQUIRE_FALSE(line.is_discarded());  // every stdout line is a protocol message
      CHECK(line.at("jsonrpc") == "2.0");
      lines.push_back(line);
      start = end + 1;
    }
    REQUIRE(lines.size() == 4);
    CHECK(lines[2].at("result").at("openrpc") == "1.2.6");
    CHECK(lines[3].at("params").at("data").at("reason") == "stdin_closed");
    CHECK(logs.find("stdio ready") != std::string::npos);  // the logs went to stderr
    ::close(out[0]);
    ::close(err[0]);
  }
}

TEST_CASE("daemon: a reader that goes away does not crash the daemon", "[daemon]") {
  int in[2];
  REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const int err = dev_null(O_WRONLY);
  SpawnedDaemon daemon({"--log-level", "off", "stdio"}, in[0], out[1], err);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err);
  ::close(out[0]);  // nobody reads our output any more: writes fail with EPIPE
  write_all(in[1], kInitializeLine);
  write_all(in[1], R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n");
  ::close(in[1]);
  CHECK(daemon.wait() == 0);
}

TEST_CASE("daemon: version and usage errors", "[daemon]") {
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  const int in = dev_null(O_RDONLY);
  SpawnedDaemon daemon({"version"}, in, out[1], out[1]);
  ::close(out[1]);
  ::close(in);
  CHECK(read_all(out[0]).rfind("switchboard ", 0) == 0);
  CHECK(daemon.wait() == 0);
  ::close(out[0]);

  const int null_in = dev_null(O_RDONLY);
  const int null_out = dev_null(O_WRONLY);
  // Usage errors exit 2: a value out of range, and a flag that does not exist.
  SpawnedDaemon bad({"stdio", "--max-line-bytes", "12"}, null_in, null_out, null_out);
  SpawnedDaemon unknown({"stdio", "--no-such-flag"}, null_in, null_out, null_out);
  ::close(null_in);
  ::close(null_out);
  CHECK(bad.wait() == 2);
  CHECK(unknown.wait() == 2);
}

}  // namespace daemon_process_tests
