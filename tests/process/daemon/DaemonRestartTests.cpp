#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/FdIo.h"
#include "support/InitializeRequest.h"
#include "support/Pipe.h"
#include "support/RawHttpClient.h"
#include "support/SpawnedDaemon.h"
#include "support/TempDir.h"

// The real binary restarted on one data directory: event seqs continue across runs, the durable log serves
// Last-Event-ID replay of an earlier run's events over SSE, and the data directory admits one daemon at a time.

namespace daemon_restart_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::RawHttpClient;
using switchboard::testing::SpawnedDaemon;
using switchboard::testing::read_line;
using switchboard::testing::write_all;
using switchboard::testing::TempDir;
using switchboard::testing::Pipe;
using switchboard::testing::kInitializeLine;

// One stdio run: initialize, make the given calls (returning their responses), close stdin, and return the
// daemon.shutdown event it announced.
struct StdioRun {
  std::vector<json> responses;
  json shutdown_event;
  int exit_code = -1;
};

StdioRun run_stdio(const fs::path& dir, const std::vector<std::string>& calls, std::vector<std::string> extra = {}) {
  Pipe in;
  Pipe out;
  const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::vector<std::string> args{"--log-level", "off", "stdio", "--data-dir", dir.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  SpawnedDaemon daemon(args, in.read_end(), out.write_end(), null_err);
  in.close_read();
  out.close_write();
  ::close(null_err);
  StdioRun run;
  REQUIRE(write_all(in.write_end(), kInitializeLine));
  REQUIRE(json::parse(read_line(out.read_end())).contains("result"));
  for (const auto& call : calls) {
    REQUIRE(write_all(in.write_end(), call + "\n"));
    run.responses.push_back(json::parse(read_line(out.read_end())));
  }
  in.close_write();
  const auto line = read_line(out.read_end());
  REQUIRE_FALSE(line.empty());
  run.shutdown_event = json::parse(line).at("params");
  run.exit_code = daemon.wait();
  return run;
}

TEST_CASE("restart: event seqs continue across daemon runs on one data directory", "[daemon][store]") {
  TempDir tmp{"restart"};
  const fs::path dir = tmp.path() / "data";
  const auto first = run_stdio(dir, {});
  CHECK(first.exit_code == 0);
  CHECK(first.shutdown_event.at("type") == "daemon.shutdown");
  CHECK(first.shutdown_event.at("seq") == 1);
  const auto second = run_stdio(dir, {R"({"jsonrpc":"2.0","id":1,"method":"session.events","params":{"sessionId":"s-nope"}})",
                                      R"({"jsonrpc":"2.0","id":2,"method":"session.list","params":{}})"});
  CHECK(second.exit_code == 0);
  CHECK(second.shutdown_event.at("seq") == 2);  // never reused
  CHECK(second.responses.at(0).at("error").at("code") == -32010);
  CHECK(second.responses.at(1).at("result").at("sessions").empty());
}

TEST_CASE("restart: --ephemeral keeps nothing, so seqs start over", "[daemon][store]") {
  TempDir tmp{"restart"};
  const fs::path dir = tmp.path() / "data";
  CHECK(run_stdio(dir, {}, {"--ephemeral"}).shutdown_event.at("seq") == 1);
  CHECK(run_stdio(dir, {}, {"--ephemeral"}).shutdown_event.at("seq") == 1);
  CHECK_FALSE(fs::exists(dir / "switchboard.db"));
}

TEST_CASE("restart: SSE Last-Event-ID replays an earlier run's events from the log", "[daemon][store][http]") {
  TempDir tmp{"restart"};
  const fs::path dir = tmp.path() / "data";
  const auto first = run_stdio(dir, {});
  const auto second = run_stdio(dir, {});
  REQUIRE(second.shutdown_event.at("seq") == 2);

  Pipe out;
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon daemon({"--log-level", "off", "serve", "--port", "0", "--data-dir", dir.string()}, null_in, out.write_end(), null_err);
  ::close(null_in);
  ::close(null_err);
  out.close_write();
  REQUIRE(read_line(out.read_end()).find("listening on") != std::string::npos);
  json runtime;
  for (int i = 0; i < 400 && !runtime.is_object(); ++i) {
    std::ifstream file(dir / "daemon.json");
    std::stringstream text;
    text << file.rdbuf();
    runtime = json::parse(text.str(), nullptr, false);
    if (!runtime.is_object()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(runtime.is_object());
  const std::uint16_t port = runtime.at("port");
  const std::string bearer = "Authorization: Bearer " + runtime.at("token").get<std::string>();

  RawHttpClient sse(port);
  REQUIRE(sse.send_request("GET", "/events", {bearer, "Last-Event-ID: 0"}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // retry hint
  // Both earlier runs' events, from the log, in order, before anything live.
  for (int seq : {1, 2}) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    CAPTURE(*frame);
    CHECK(frame->find("id: " + std::to_string(seq) + "\n") == 0);
    const auto event = json::parse(frame->substr(frame->find("data: ") + 6));
    CHECK(event.at("seq") == seq);
    CHECK(event.at("type") == "daemon.shutdown");
    CHECK(event.at("data").at("reason") == "stdin_closed");
  }
  // Then the live stream continues the numbering.
  ::kill(daemon.pid(), SIGTERM);
  const auto live = sse.read_frame();
  REQUIRE(live);
  const auto event = json::parse(live->substr(live->find("data: ") + 6));
  CHECK(event.at("seq") == 3);
  CHECK(event.at("data").at("reason") == "signal");
  CHECK(daemon.wait() == 0);
}

TEST_CASE("restart: a second standalone daemon on the same data directory is refused while the first runs", "[daemon][store]") {
  TempDir tmp{"restart"};
  const fs::path dir = tmp.path() / "data";
  Pipe in;
  Pipe out;
  const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon first({"--log-level", "off", "stdio", "--data-dir", dir.string()}, in.read_end(), out.write_end(), null_err);
  in.close_read();
  out.close_write();
  REQUIRE(write_all(in.write_end(), kInitializeLine));
  REQUIRE(json::parse(read_line(out.read_end())).contains("result"));  // the first one holds the lock now

  Pipe err;
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // (Without --standalone it would attach to the first one instead: tests/process/client/SocketAttachTests.cpp.)
  SpawnedDaemon second({"--log-level", "off", "stdio", "--standalone", "--data-dir", dir.string()}, null_in, null_err,
                       err.write_end());
  ::close(null_in);
  err.close_write();
  CHECK(second.wait() == 3);
  CHECK(switchboard::testing::read_all(err.read_end()).find("already running") != std::string::npos);
  ::close(null_err);
  in.close_write();
  CHECK(first.wait() == 0);
}

}  // namespace daemon_restart_tests
