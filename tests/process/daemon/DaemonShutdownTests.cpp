#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/Daemon.h"
#include "support/DaemonClient.h"
#include "support/FdIo.h"
#include "support/RawHttpClient.h"
#include "support/ScriptedAdapter.h"
#include "support/TempDir.h"
#include "support/SourceTree.h"

// Shutdown ordering, on every transport: sessions stopping because of the shutdown report it before
// daemon.shutdown, which is the last event a client receives (or, for an agent that does not stop in time, not
// at all). A whole daemon runs in-process on a thread, with scripted agents that take time to stop.

namespace daemon_shutdown_tests {

using namespace switchboard;
using Json = nlohmann::json;
using testing::ScriptedAdapter;
using testing::TempDir;

// A daemon serving stdio (pipes) and HTTP on an ephemeral loopback port, run by its own thread.
class InProcessDaemon {
 public:
  // `ephemeral` false: the daemon keeps its sessions and events in a database in `data`.
  InProcessDaemon(std::deque<std::chrono::milliseconds> stop_delays, std::chrono::milliseconds limit,
                  bool ephemeral = true) {
    control->stop_delays = std::move(stop_delays);  // before the daemon's thread exists: no race
    int in[2];
    int out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    m_to_daemon = in[1];
    m_from_daemon = out[0];
    daemon::DaemonOptions options;
    options.stdin_fd = in[0];
    options.stdout_fd = out[1];
    options.data_dir = data.path();
    options.ephemeral = ephemeral;
    options.http = daemon::HttpOptions{};
    options.http->server.port = 0;
    options.http->server.also_ipv6_loopback = false;
    options.agent_stop_limit = limit;
    options.agents = [control = control](boost::asio::io_context& io) {
      return std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)};
    };
    m_daemon = std::make_unique<daemon::Daemon>(options);
    m_daemon_fds = {in[0], out[1]};
    m_thread = std::thread([this] {
      m_exit_code = m_daemon->run_stdio();
      ::close(m_daemon_fds[1]);  // EOF for the test's reader once everything was written
    });
  }
  ~InProcessDaemon() {
    close_stdin();
    if (m_thread.joinable()) m_thread.join();
    ::close(m_daemon_fds[0]);
    ::close(m_from_daemon);
  }

  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  TempDir data{"shutdown"};

  Json call(const std::string& method, const Json& params) {
    const int id = ++m_next_id;
    REQUIRE(testing::write_all(m_to_daemon, Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n"));
    for (;;) {
      const auto line = testing::read_line(m_from_daemon);
      REQUIRE_FALSE(line.empty());
      auto message = Json::parse(line);
      if (message.value("method", "") == "event") {
        events.push_back(message["params"]);
        continue;
      }
      if (message.value("id", 0) == id) return message;
    }
  }
  // Sends a call without waiting for its answer; returns its id.
  int send(const std::string& method, const Json& params) {
    const int id = ++m_next_id;
    REQUIRE(testing::write_all(m_to_daemon, Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump() + "\n"));
    return id;
  }
  void close_stdin() {
    if (m_to_daemon >= 0) ::close(std::exchange(m_to_daemon, -1));
  }
  // Every line the daemon writes to stdout until it exits, answers and events in the order written.
  std::vector<Json> lines_to_end() {
    std::vector<Json> lines;
    for (std::string line; !(line = testing::read_line(m_from_daemon)).empty();) lines.push_back(Json::parse(line));
    m_thread.join();
    return lines;
  }
  // Everything the daemon writes to stdout until it exits.
  void read_to_end() {
    for (std::string line; !(line = testing::read_line(m_from_daemon)).empty();) {
      auto message = Json::parse(line);
      if (message.value("method", "") == "event") events.push_back(message["params"]);
    }
    m_thread.join();
  }
  Json runtime() const {
    std::ifstream in(data.path() / "daemon.json");
    std::stringstream text;
    text << in.rdbuf();
    return Json::parse(text.str());
  }
  int exit_code() const { return m_exit_code; }

  std::vector<Json> events;  // stdio events, in order

 private:
  std::unique_ptr<daemon::Daemon> m_daemon;
  std::thread m_thread;
  std::array<int, 2> m_daemon_fds{-1, -1};
  int m_to_daemon = -1;
  int m_from_daemon = -1;
  int m_next_id = 0;
  int m_exit_code = -1;
};

// The event types of a stream, with the state for session.state.
std::vector<std::string> types_of(const std::vector<Json>& events) {
  std::vector<std::string> types;
  for (const auto& event : events) {
    std::string type = event.value("type", "");
    if (type == "session.state") type += ":" + event["data"].value("state", "");
    types.push_back(type);
  }
  return types;
}

std::size_t count_of(const std::vector<std::string>& types, const std::string& type) {
  return static_cast<std::size_t>(std::count(types.begin(), types.end(), type));
}

// Starts `sessions` live sessions (each has answered one turn), with an SSE client watching from the start.
struct Running {
  InProcessDaemon daemon;
  std::unique_ptr<testing::RawHttpClient> sse;

  Running(int sessions, std::deque<std::chrono::milliseconds> stop_delays, std::chrono::milliseconds limit)
      : daemon(std::move(stop_delays), limit) {
    REQUIRE(daemon.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "t"}}}}).contains("result"));
    const auto runtime = daemon.runtime();
    sse = std::make_unique<testing::RawHttpClient>(runtime.at("port").get<std::uint16_t>(), 10000);
    REQUIRE(sse->send_request("GET", "/events", {"Authorization: Bearer " + runtime.at("token").get<std::string>()}));
    testing::RawHttpClient::Response head;
    REQUIRE(sse->read_head(head));
    REQUIRE(sse->read_frame());  // the retry hint
    for (int i = 0; i < sessions; ++i) {
      const auto created = daemon.call("session.create", {{"agent", "scripted"}, {"cwd", "/"}});
      REQUIRE(created.contains("result"));
      const auto sent = daemon.call("session.send", {{"sessionId", created["result"]["session"]["sessionId"]}, {"text", "hi"}});
      REQUIRE(sent.contains("result"));
    }
  }

  std::vector<Json> sse_events_to_end() {
    std::vector<Json> events;
    while (auto frame = sse->read_frame()) {
      const auto at = frame->find("data: ");
      if (at == std::string::npos) continue;
      events.push_back(Json::parse(frame->substr(at + 6)));
    }
    return events;
  }
};

TEST_CASE("shutdown: sessions whose agents take time to stop report stopped before daemon.shutdown, the last event on stdio and SSE", "[daemon][shutdown]") {
  Running running(3, {std::chrono::milliseconds(150), std::chrono::milliseconds(400), std::chrono::milliseconds(50)},
                  std::chrono::seconds(10));
  running.daemon.close_stdin();
  running.daemon.read_to_end();
  CHECK(running.daemon.exit_code() == 0);
  const auto sse = running.sse_events_to_end();
  for (const std::vector<Json>* stream : std::array<const std::vector<Json>*, 2>{&running.daemon.events, &sse}) {
    const auto types = types_of(*stream);
    INFO(Json(types).dump());
    REQUIRE_FALSE(types.empty());
    CHECK(types.back() == "daemon.shutdown");
    CHECK(count_of(types, "daemon.shutdown") == 1);
    CHECK(count_of(types, "session.state:stopped") == 3);
  }
  CHECK(running.daemon.control->stops == 3);
}

TEST_CASE("shutdown: an agent that does not stop within the limit is not reported after daemon.shutdown", "[daemon][shutdown]") {
  // The second agent never reports; the others do, quickly. The shutdown goes on at the limit.
  Running running(3, {std::chrono::milliseconds(20), std::chrono::milliseconds(-1), std::chrono::milliseconds(20)},
                  std::chrono::milliseconds(500));
  const auto started = std::chrono::steady_clock::now();
  running.daemon.close_stdin();
  running.daemon.read_to_end();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  const auto sse = running.sse_events_to_end();
  for (const std::vector<Json>* stream : std::array<const std::vector<Json>*, 2>{&running.daemon.events, &sse}) {
    const auto types = types_of(*stream);
    INFO(Json(types).dump());
    REQUIRE_FALSE(types.empty());
    CHECK(types.back() == "daemon.shutdown");
    CHECK(count_of(types, "session.state:stopped") == 2);
  }
}

// With the real binary and a stand-in Claude Code (tests/support/fake_claude.py) that, like the real CLI, writes
// its conversation only after its stdin is closed (here deliberately late): the daemon waits for it.
struct FakeClaudeDaemon {
  TempDir dir{"shutdown"};
  std::string conversation = (dir.path() / "conversation.txt").string();
  std::unique_ptr<testing::DaemonClient> client;

  explicit FakeClaudeDaemon(int persist_ms) {
    client = std::make_unique<testing::DaemonClient>(
        std::vector<std::string>{"--log-level", "warn", "stdio", "--data-dir", (dir.path() / "data").string()},
        std::vector<std::string>{"SWITCHBOARD_CLAUDE_BIN=" + switchboard::testing::source_path("tests/support/fake_claude.py"),
                                 "FAKE_CLAUDE_PERSIST_MS=" + std::to_string(persist_ms), "FAKE_CLAUDE_TRANSCRIPT=" + conversation});
    REQUIRE(client->call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "t"}}}}).contains("result"));
    const auto created = client->call("session.create", {{"agent", "claude"}, {"cwd", dir.path().string()}});
    INFO(created.dump());
    REQUIRE(created.contains("result"));
    const auto sent = client->call("session.send", {{"sessionId", created["result"]["session"]["sessionId"]}, {"text", "remember this"}});
    INFO(sent.dump());
    REQUIRE(sent["result"]["text"] == "answer to: remember this");
  }

  std::string saved() const {
    std::ifstream in(conversation);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_CASE("shutdown: calls a stdio client made just before its input closed are answered before daemon.shutdown", "[daemon][shutdown]") {
  // session.list and session.get read the store on its own thread, so their answers come after the input's end
  // has begun the shutdown; they still reach the client, and daemon.shutdown stays the last line.
  InProcessDaemon daemon({}, std::chrono::milliseconds(2000), /*ephemeral=*/false);
  REQUIRE(daemon.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "t"}}}}).contains("result"));
  const auto created = daemon.call("session.create", {{"agent", "scripted"}, {"cwd", "/"}});
  REQUIRE(created.contains("result"));
  const auto session = created["result"]["session"]["sessionId"];
  std::vector<int> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(daemon.send("session.list", Json::object()));
    ids.push_back(daemon.send("session.events", {{"sessionId", session}}));
  }
  daemon.close_stdin();
  const auto lines = daemon.lines_to_end();
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.back().value("method", "") == "event");
  CHECK(lines.back()["params"].value("type", "") == "daemon.shutdown");
  std::vector<int> answered;
  for (const auto& line : lines) {
    if (!line.contains("id")) continue;
    INFO(line.dump());
    CHECK(line.contains("result"));
    answered.push_back(line["id"].get<int>());
  }
  std::sort(answered.begin(), answered.end());
  CHECK(answered == ids);
  CHECK(daemon.exit_code() == 0);
}

TEST_CASE("shutdown: a client that quits right after a turn gives the agent the time it needs to save its conversation", "[daemon][shutdown]") {
  FakeClaudeDaemon daemon(/*persist_ms=*/1500);
  daemon.client->close_stdin();  // at once, as a TUI user quitting the moment the answer is shown
  REQUIRE(daemon.client->daemon().wait(std::chrono::seconds(30)) == 0);
  CHECK(daemon.saved() == "remember this\n");
  // The stream ended with daemon.shutdown, after the session's stopped.
  const auto events = daemon.client->events();
  REQUIRE_FALSE(events.empty());
  CHECK(events.back().value("type", "") == "daemon.shutdown");
  CHECK(events[events.size() - 2].value("type", "") == "session.state");
  CHECK(events[events.size() - 2]["data"].value("state", "") == "stopped");
}

TEST_CASE("shutdown: an agent that takes too long to save is stopped after its grace period, the daemon still exits 0", "[daemon][shutdown]") {
  FakeClaudeDaemon daemon(/*persist_ms=*/120000);
  const auto started = std::chrono::steady_clock::now();
  daemon.client->close_stdin();
  REQUIRE(daemon.client->daemon().wait(std::chrono::seconds(30)) == 0);
  // EOF, then SIGTERM after the adapter's grace (5 s): well before the agent would have finished on its own.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(15));
  CHECK(daemon.saved().empty());
  CHECK(daemon.client->events().back().value("type", "") == "daemon.shutdown");
}

}  // namespace daemon_shutdown_tests
