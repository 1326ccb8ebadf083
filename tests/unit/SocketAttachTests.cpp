#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/FdIo.h"
#include "support/Pipe.h"
#include "support/ProcessTestSupport.h"
#include "support/RawHttpClient.h"
#include "support/SpawnedDaemon.h"
#include "support/TempDir.h"

// One daemon, several clients: `switchboard stdio` on a data directory whose daemon already runs (hosted by
// `serve` or by another stdio client) attaches to it through its Unix-domain socket instead of failing.

namespace socket_attach_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::Pipe;
using switchboard::testing::TempDir;
using switchboard::testing::RawHttpClient;
using switchboard::testing::SpawnedDaemon;

std::string fake_claude() { return std::string(SWITCHBOARD_SOURCE_DIR) + "/tests/fake_agents/fake_claude.py"; }

// The fake Claude Code (one permission per turn), and no configuration of the user's own.
std::vector<std::string> agent_env(const TempDir& tmp) {
  return {"SWITCHBOARD_CLAUDE_BIN=" + fake_claude(), "FAKE_CLAUDE_RECORD=" + (tmp.path() / "record.ndjson").string(),
          "SWITCHBOARD_HEADLESS_POLICY=", "SWITCHBOARD_REQUEST_TIMEOUT="};
}

json runtime_of(const fs::path& data_dir) {
  for (int i = 0; i < 500; ++i) {
    std::ifstream in(data_dir / "daemon.json");
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = json::parse(text.str(), nullptr, false);
    if (parsed.is_object() && parsed.contains("socket")) return parsed;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return nullptr;
}

json initialize(DaemonClient& client, const std::string& name) {
  return client.call("initialize", {{"protocolVersion", 1},
                                    {"clientInfo", {{"name", name}}},
                                    {"capabilities", {{"answersPermissions", true}}}});
}

// A `serve` on `data_dir`, its URL line read; the HTTP side is reached through the runtime file's port/token.
struct Serve {
  Pipe out;
  std::unique_ptr<SpawnedDaemon> daemon;
  json runtime;
  Serve(const TempDir& tmp, const fs::path& data_dir) {
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    daemon = std::make_unique<SpawnedDaemon>(
        std::vector<std::string>{"--log-level", "off", "serve", "--port", "0", "--data-dir", data_dir.string()}, in,
        out.write_end(), err, agent_env(tmp));
    ::close(in);
    ::close(err);
    out.close_write();
    REQUIRE(switchboard::testing::read_line(out.read_end()).find("listening on") != std::string::npos);
    runtime = runtime_of(data_dir);
    REQUIRE(runtime.is_object());
  }
  json rpc(const json& request) {
    RawHttpClient http(runtime.at("port").get<std::uint16_t>());
    const auto reply = http.request("POST", "/rpc",
                                    {"Authorization: Bearer " + runtime.at("token").get<std::string>(),
                                     "Content-Type: application/json"},
                                    request.dump());
    return json::parse(reply.body, nullptr, false);
  }
};

// A raw connection to the daemon's socket (what the relay does, without the relay).
int connect_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

TEST_CASE("attach: stdio clients of a running serve share its sessions, events and permissions", "[attach][daemon]") {
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  Serve serve(tmp, data_dir);

  // The socket: named in the runtime file, 0600, in the 0700 data directory.
  const std::string socket_path = serve.runtime.at("socket");
  struct stat info {};
  REQUIRE(::stat(socket_path.c_str(), &info) == 0);
  CHECK(S_ISSOCK(info.st_mode));
  CHECK((info.st_mode & 0777) == 0600);
  REQUIRE(::stat(fs::path(socket_path).parent_path().c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0700);

  const std::vector<std::string> attach{"--log-level", "off", "stdio", "--data-dir", data_dir.string()};
  DaemonClient tui(attach, agent_env(tmp));
  DaemonClient other(attach, agent_env(tmp));
  const auto tui_init = initialize(tui, "tui");
  const auto other_init = initialize(other, "other");
  REQUIRE(tui_init.contains("result"));
  REQUIRE(other_init.contains("result"));
  CHECK(tui_init["result"]["clientId"] != other_init["result"]["clientId"]);  // two clients, not one

  const auto created = tui.call("session.create", {{"agent", "claude"}, {"cwd", tmp.path().string()}});
  REQUIRE(created.contains("result"));
  const std::string session = created["result"]["session"]["sessionId"];
  // The same daemon: the other stdio client and the HTTP client list the session the TUI created.
  const auto listed = other.call("session.list");
  REQUIRE(listed.contains("result"));
  CHECK(listed.dump().find(session) != std::string::npos);
  CHECK(serve.rpc({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "session.list"}}).dump().find(session) != std::string::npos);

  REQUIRE(tui.call("session.send", {{"sessionId", session}, {"text", "hello"}, {"wait", false}}).contains("result"));
  std::size_t tui_from = 0, other_from = 0;
  const auto asked_tui = tui.wait_event("permission.requested", tui_from, std::chrono::seconds(20));
  const auto asked_other = other.wait_event("permission.requested", other_from, std::chrono::seconds(20));
  REQUIRE(asked_tui.is_object());
  REQUIRE(asked_other.is_object());
  CHECK(asked_tui["seq"] == asked_other["seq"]);  // the one event, seen by both
  const std::string request = asked_tui["data"]["request"]["requestId"];

  // First answer wins across the socket clients and HTTP; the others get AlreadyAnswered (-32002).
  const json answer{{"requestId", request}, {"decision", "allow_once"}};
  CHECK(other.call("permission.respond", answer).contains("result"));
  const auto late_tui = tui.call("permission.respond", answer);
  REQUIRE(late_tui.contains("error"));
  CHECK(late_tui["error"]["code"] == -32002);
  const auto late_http = serve.rpc({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "permission.respond"}, {"params", answer}});
  REQUIRE(late_http.contains("error"));
  CHECK(late_http["error"]["code"] == -32002);
  const auto resolved = tui.wait_event("permission.resolved", tui_from, std::chrono::seconds(20));
  REQUIRE(resolved.is_object());
  CHECK(resolved["data"]["clientId"] == other_init["result"]["clientId"]);
  CHECK(tui.wait_event("turn.stopped", tui_from, std::chrono::seconds(20)).is_object());

  SECTION("a client that leaves ends its relay, and the daemon goes on") {
    other.close_stdin();
    CHECK(other.daemon().wait(std::chrono::seconds(10)) == 0);
    CHECK(tui.call("ping").contains("result"));
    CHECK(serve.rpc({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}}).contains("result"));
  }
  SECTION("when the daemon shuts down, attached clients get daemon.shutdown and their relay exits") {
    ::kill(serve.daemon->pid(), SIGTERM);
    CHECK(serve.daemon->wait(std::chrono::seconds(20)) == 0);
    CHECK(tui.wait_event("daemon.shutdown", tui_from, std::chrono::seconds(10)).is_object());
    CHECK(tui.daemon().wait(std::chrono::seconds(10)) == 0);
    CHECK(other.daemon().wait(std::chrono::seconds(10)) == 0);
    CHECK_FALSE(fs::exists(socket_path));
  }
}

TEST_CASE("attach: a daemon hosted by a stdio client takes attached clients and ends with its host", "[attach][daemon]") {
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  const std::vector<std::string> args{"--log-level", "off", "stdio", "--data-dir", data_dir.string()};
  DaemonClient host(args, agent_env(tmp));
  REQUIRE(initialize(host, "host").contains("result"));
  const auto runtime = runtime_of(data_dir);
  REQUIRE(runtime.is_object());
  CHECK(runtime.at("pid") == host.daemon().pid());

  DaemonClient attached(args, agent_env(tmp));
  REQUIRE(initialize(attached, "attached").contains("result"));
  const auto created = attached.call("session.create", {{"agent", "claude"}, {"cwd", tmp.path().string()}});
  REQUIRE(created.contains("result"));
  const std::string session = created["result"]["session"]["sessionId"];
  CHECK(host.call("session.list").dump().find(session) != std::string::npos);

  // The backend dies with its frontend: the host's stdin closes, every attached client is told and let go.
  std::size_t from = 0;
  host.close_stdin();
  CHECK(attached.wait_event("daemon.shutdown", from, std::chrono::seconds(20)).is_object());
  CHECK(host.daemon().wait(std::chrono::seconds(20)) == 0);
  CHECK(attached.daemon().wait(std::chrono::seconds(10)) == 0);
}

TEST_CASE("attach: --standalone never attaches, --ephemeral never listens", "[attach][daemon]") {
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  DaemonClient host({"--log-level", "off", "stdio", "--data-dir", data_dir.string()}, agent_env(tmp));
  REQUIRE(initialize(host, "host").contains("result"));
  REQUIRE(runtime_of(data_dir).is_object());

  Pipe err;
  const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon second({"stdio", "--standalone", "--data-dir", data_dir.string()}, in, out, err.write_end());
  ::close(in);
  ::close(out);
  err.close_write();
  const std::string message = switchboard::testing::read_all(err.read_end());
  CHECK(second.wait() == 3);
  CHECK(message.find("already running") != std::string::npos);

  // An ephemeral daemon claims no data directory: nothing to find it by, nothing to attach to.
  const fs::path other_dir = tmp.path() / "ephemeral";
  DaemonClient ephemeral({"--log-level", "off", "stdio", "--ephemeral", "--data-dir", other_dir.string()}, {});
  REQUIRE(initialize(ephemeral, "ephemeral").contains("result"));
  CHECK_FALSE(fs::exists(other_dir / "daemon.json"));
  CHECK_FALSE(fs::exists(other_dir / "daemon.sock"));
}

TEST_CASE("attach: a connection that closes its side still gets every answer already asked for", "[attach][daemon]") {
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  DaemonClient host({"--log-level", "off", "stdio", "--data-dir", data_dir.string()}, agent_env(tmp));
  REQUIRE(initialize(host, "host").contains("result"));
  const auto runtime = runtime_of(data_dir);
  REQUIRE(runtime.is_object());
  const int fd = connect_socket(runtime.at("socket"));
  REQUIRE(fd >= 0);
  REQUIRE(switchboard::testing::write_all(
      fd, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"raw"}}})"
          "\n"
          R"({"jsonrpc":"2.0","id":2,"method":"session.list"})"
          "\n"
          R"({"jsonrpc":"2.0","id":3,"method":"ping"})"
          "\n"));
  ::shutdown(fd, SHUT_WR);
  const std::string replies = switchboard::testing::read_all(fd);  // until the daemon closes the connection
  ::close(fd);
  std::vector<json> answers;
  std::istringstream lines(replies);
  for (std::string line; std::getline(lines, line);) {
    auto message = json::parse(line, nullptr, false);
    if (message.is_object() && message.contains("id")) answers.push_back(message);
  }
  REQUIRE(answers.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(answers[i]["id"] == i + 1);
    CHECK(answers[i].contains("result"));
  }
  CHECK(host.call("ping").contains("result"));  // the daemon itself goes on
}

TEST_CASE("attach: the socket lets in no other user", "[attach][daemon]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot connect as another uid here; the check runs where the tests run as root (CI)");
    return;
  }
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  DaemonClient host({"--log-level", "off", "stdio", "--data-dir", data_dir.string()}, agent_env(tmp));
  REQUIRE(initialize(host, "host").contains("result"));
  const auto runtime = runtime_of(data_dir);
  REQUIRE(runtime.is_object());
  const std::string socket_path = runtime.at("socket");
  // Open the way on purpose (directories searchable, socket writable by all), so only the daemon's own peer check
  // stands between the other user and the protocol.
  REQUIRE(::chmod(tmp.path().c_str(), 0711) == 0);
  REQUIRE(::chmod(data_dir.c_str(), 0711) == 0);
  REQUIRE(::chmod(socket_path.c_str(), 0666) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The other user: nobody. Exit 0: refused without an answer; 1: connect failed; 2: it was answered.
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    const int fd = connect_socket(socket_path);
    if (fd < 0) ::_exit(1);
    const std::string init = R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n";
    (void)::send(fd, init.data(), init.size(), MSG_NOSIGNAL);
    char byte;
    const ssize_t n = ::recv(fd, &byte, 1, 0);
    ::_exit(n > 0 ? 2 : 0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // The daemon's own user still gets in.
  const int fd = connect_socket(socket_path);
  REQUIRE(fd >= 0);
  REQUIRE(switchboard::testing::write_all(fd, R"({"jsonrpc":"2.0","id":1,"method":"ping"})" "\n"));
  ::shutdown(fd, SHUT_WR);
  CHECK(switchboard::testing::read_all(fd).find(R"("result")") != std::string::npos);
  ::close(fd);
}

}  // namespace socket_attach_tests
