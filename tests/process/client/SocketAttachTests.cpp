#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/Eventually.h"
#include "support/FdIo.h"
#include "support/Pipe.h"
#include "support/ProcessTestSupport.h"
#include "support/RawHttpClient.h"
#include "support/SourceTree.h"
#include "support/SpawnedDaemon.h"
#include "support/TempDir.h"
#include "switchboard/transport/StdioHandoff.h"

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
using switchboard::testing::source_path;

std::string fake_claude() { return source_path("tests/support/fake_claude.py"); }

// The fake Claude Code (one permission per turn), and no configuration of the user's own.
std::vector<std::string> agent_env(const TempDir& tmp) {
  return {"SWITCHBOARD_CLAUDE_BIN=" + fake_claude(), "FAKE_CLAUDE_ASK=1", "FAKE_CLAUDE_RECORD=" + (tmp.path() / "record.ndjson").string(),
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

// A data directory with a daemon running for it over stdio (the host); `stdio` started with `args` attaches to it.
struct AttachWorld {
  TempDir tmp{"attach"};
  fs::path data_dir = tmp.path() / "data";
  std::vector<std::string> args{"--log-level", "off", "stdio", "--data-dir", data_dir.string()};
  DaemonClient host{args, agent_env(tmp)};

  AttachWorld() {
    REQUIRE(initialize(host, "host").contains("result"));
    REQUIRE(runtime_of(data_dir).is_object());
  }
};

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
  // Matched by id, as JSON-RPC answers are: session.list answers once the store has read the page, so the ping
  // after it may be answered first.
  std::sort(answers.begin(), answers.end(), [](const json& x, const json& y) { return x["id"] < y["id"]; });
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

// What descriptor `fd` of process `pid` is, as /proc names it ("pipe:[1234]", a path), or "" when it is not open.
std::string fd_target(pid_t pid, int fd) {
  std::error_code error;
  const auto target = fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd), error);
  return error ? std::string() : target.string();
}

// The descriptors of `pid` that are `target`, each with whether it is close-on-exec (fdinfo's octal flags).
std::vector<std::pair<int, bool>> fds_open_on(pid_t pid, const std::string& target) {
  std::vector<std::pair<int, bool>> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code ignored;
    if (fs::read_symlink(entry.path(), ignored).string() != target) continue;
    const std::string fd = entry.path().filename().string();
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + fd);
    bool cloexec = false;
    for (std::string line; std::getline(info, line);) {
      if (line.rfind("flags:", 0) == 0) cloexec = (std::stol(line.substr(6), nullptr, 8) & O_CLOEXEC) != 0;
    }
    found.emplace_back(std::stoi(fd), cloexec);
  }
  return found;
}

// Every process below `pid` (children of each of its threads, and theirs).
std::vector<pid_t> descendants_of(pid_t pid) {
  std::vector<pid_t> all;
  std::error_code error;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream children(task.path() / "children");
    for (pid_t child; children >> child;) {
      all.push_back(child);
      for (const pid_t below : descendants_of(child)) all.push_back(below);
    }
  }
  return all;
}

std::string cmdline_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<json> responses_in(const std::string& output) {
  std::vector<json> answers;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    auto message = json::parse(line, nullptr, false);
    if (message.is_object() && message.contains("id")) answers.push_back(message);
  }
  return answers;
}

const std::string kRequests =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"raw"}}})"
    "\n"
    R"({"jsonrpc":"2.0","id":2,"method":"session.list"})"
    "\n"
    R"({"jsonrpc":"2.0","id":3,"method":"ping"})"
    "\n";

constexpr std::string_view kShutDownLine = "the daemon closed the connection (it shut down)";

// Whether `fd` has something to read within `timeout`.
bool readable_within(int fd, std::chrono::milliseconds timeout) {
  pollfd watched{fd, POLLIN, 0};
  return ::poll(&watched, 1, static_cast<int>(timeout.count())) == 1;
}

TEST_CASE("attach: an attached stdio hands its own stdin/stdout to the daemon and copies nothing itself",
          "[attach][daemon]") {
  AttachWorld w;
  DaemonClient attached(w.args, agent_env(w.tmp));
  REQUIRE(initialize(attached, "attached").contains("result"));
  const pid_t daemon = w.host.daemon().pid();
  const pid_t attacher = attached.daemon().pid();

  // The daemon holds the attacher's own pipes, and never without close-on-exec.
  for (const int fd : {0, 1}) {
    const std::string target = fd_target(attacher, fd);
    REQUIRE(target.starts_with("pipe:"));
    const auto held = fds_open_on(daemon, target);
    CHECK_FALSE(held.empty());
    for (const auto& [number, cloexec] : held) {
      INFO("daemon fd " << number << " is the attacher's fd " << fd);
      CHECK(cloexec);
    }
  }
  // Stopped, the attacher copies nothing; the daemon answers its client all the same.
  REQUIRE(::kill(attacher, SIGSTOP) == 0);
  const auto pong = attached.call("ping", json::object(), std::chrono::seconds(10));
  REQUIRE(::kill(attacher, SIGCONT) == 0);
  CHECK(pong.contains("result"));
  CHECK(w.host.call("session.list").contains("result"));
}

TEST_CASE("attach: stdio --relay copies the bytes itself (stopped, its client gets no answer)", "[attach][daemon]") {
  AttachWorld w;
  auto relay_args = w.args;
  relay_args.emplace_back("--relay");
  DaemonClient attached(relay_args, agent_env(w.tmp));
  REQUIRE(initialize(attached, "attached").contains("result"));
  const pid_t attacher = attached.daemon().pid();
  CHECK(fds_open_on(w.host.daemon().pid(), fd_target(attacher, 0)).empty());
  CHECK(fds_open_on(w.host.daemon().pid(), fd_target(attacher, 1)).empty());

  REQUIRE(::kill(attacher, SIGSTOP) == 0);
  const auto id = attached.send("ping");
  CHECK(attached.response(id, std::chrono::milliseconds(500)).is_null());
  REQUIRE(::kill(attacher, SIGCONT) == 0);
  CHECK(attached.response(id, std::chrono::seconds(10)).contains("result"));
}

TEST_CASE("attach: end of a handed-over stdin: the answers asked for, exit 0 without a word, the pipe given back",
          "[attach][daemon]") {
  AttachWorld w;

  Pipe in, out, err;
  // The attacher's stdin as a parent shares it (the same open file): its status flags must come back unchanged.
  const int shared_in = ::fcntl(in.read_end(), F_DUPFD_CLOEXEC, 3);
  REQUIRE(shared_in >= 0);
  SpawnedDaemon attacher(w.args, in.read_end(), out.write_end(), err.write_end(), agent_env(w.tmp));
  in.close_read();
  out.close_write();
  err.close_write();
  REQUIRE(switchboard::testing::write_all(in.write_end(), kRequests));
  in.close_write();
  auto answers = responses_in(switchboard::testing::read_all(out.read_end()));  // until every writer closed
  REQUIRE(answers.size() == 3);
  // Matched by id, as JSON-RPC answers are: session.list answers once the store has read the page, so the ping
  // after it may be answered first.
  std::sort(answers.begin(), answers.end(), [](const json& x, const json& y) { return x["id"] < y["id"]; });
  for (int i = 0; i < 3; ++i) {
    CHECK(answers[i]["id"] == i + 1);
    CHECK(answers[i].contains("result"));
  }
  CHECK(attacher.wait(std::chrono::seconds(10)) == 0);
  CHECK(switchboard::testing::read_all(err.read_end()).find(kShutDownLine) == std::string::npos);
  CHECK((::fcntl(shared_in, F_GETFL) & O_NONBLOCK) == 0);
  ::close(shared_in);
  CHECK(w.host.call("ping").contains("result"));  // the daemon goes on
}

TEST_CASE("attach: the daemon shuts down under a handed-over client: daemon.shutdown, the line on stderr, exit 0",
          "[attach][daemon]") {
  AttachWorld w;
  Pipe err;
  DaemonClient attached(w.args, agent_env(w.tmp), SWITCHBOARD_BINARY, err.write_end());
  err.close_write();
  REQUIRE(initialize(attached, "attached").contains("result"));
  REQUIRE_FALSE(fds_open_on(w.host.daemon().pid(), fd_target(attached.daemon().pid(), 1)).empty());  // handed over

  std::size_t from = 0;
  w.host.close_stdin();
  CHECK(attached.wait_event("daemon.shutdown", from, std::chrono::seconds(20)).is_object());
  CHECK(w.host.daemon().wait(std::chrono::seconds(20)) == 0);
  CHECK(attached.daemon().wait(std::chrono::seconds(10)) == 0);
  CHECK(switchboard::testing::read_all(err.read_end()).find(kShutDownLine) != std::string::npos);
}

TEST_CASE("attach: a daemon that loses the attacher lets its client go", "[attach][daemon]") {
  AttachWorld w;
  DaemonClient attached(w.args, agent_env(w.tmp));
  REQUIRE(initialize(attached, "attached").contains("result"));
  const std::string handed_out = fd_target(attached.daemon().pid(), 1);
  REQUIRE_FALSE(fds_open_on(w.host.daemon().pid(), handed_out).empty());
  // Killed (its parent's way of stopping the backend it started): the daemon lets the client go and closes its
  // copies of the pipes, although the parent still holds the other ends open.
  REQUIRE(::kill(attached.daemon().pid(), SIGKILL) == 0);
  CHECK(switchboard::testing::eventually([&] { return fds_open_on(w.host.daemon().pid(), handed_out).empty(); }));
  CHECK(w.host.call("ping").contains("result"));
}

TEST_CASE("attach: a handed-over client whose output nobody reads any more is let go, though its stdin stays open",
          "[attach][daemon]") {
  AttachWorld w;
  Pipe in, out, err;
  SpawnedDaemon attacher(w.args, in.read_end(), out.write_end(), err.write_end(), agent_env(w.tmp));
  in.close_read();
  out.close_write();
  err.close_write();
  REQUIRE(switchboard::testing::write_all(in.write_end(), kRequests));
  REQUIRE(readable_within(out.read_end(), std::chrono::seconds(10)));  // served: the answers come
  const std::string handed_out = fd_target(attacher.pid(), 1);
  REQUIRE_FALSE(fds_open_on(w.host.daemon().pid(), handed_out).empty());
  // The parent stops reading (it closed its end of the pipe) but keeps our stdin open and asks once more: the
  // answer cannot be written, and the daemon lets the client go instead of keeping it as one who may answer.
  out.close_read();
  REQUIRE(switchboard::testing::write_all(in.write_end(), R"({"jsonrpc":"2.0","id":9,"method":"ping"})" "\n"));
  CHECK(switchboard::testing::eventually([&] { return fds_open_on(w.host.daemon().pid(), handed_out).empty(); }));
  CHECK(attacher.wait(std::chrono::seconds(10)) == 0);
  in.close_write();
  CHECK(w.host.call("ping").contains("result"));
}

TEST_CASE("attach: what cannot be handed over is relayed: a regular file as stdin, a terminal", "[attach][daemon]") {
  AttachWorld w;
  const pid_t daemon = w.host.daemon().pid();

  SECTION("a regular file: the same answers, then exit 0") {
    const fs::path requests = w.tmp.path() / "requests.ndjson";
    std::ofstream(requests) << kRequests;
    const int in = ::open(requests.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(in >= 0);
    Pipe out, err;
    SpawnedDaemon attacher(w.args, in, out.write_end(), err.write_end(), agent_env(w.tmp));
    ::close(in);
    out.close_write();
    err.close_write();
    const auto answers = responses_in(switchboard::testing::read_all(out.read_end()));
    REQUIRE(answers.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(answers[i].contains("result"));
    CHECK(attacher.wait(std::chrono::seconds(10)) == 0);
    CHECK(switchboard::testing::read_all(err.read_end()).find(kShutDownLine) == std::string::npos);
  }
  SECTION("a terminal: never handed to the daemon, which would make it non-blocking for every job on it") {
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(master >= 0);
    REQUIRE(::grantpt(master) == 0);
    REQUIRE(::unlockpt(master) == 0);
    const int terminal = ::open(::ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    REQUIRE(terminal >= 0);
    Pipe out;
    const int err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    SpawnedDaemon attacher(w.args, terminal, out.write_end(), err, agent_env(w.tmp));
    ::close(err);
    out.close_write();
    const std::string init =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"tty"}}})" "\n";
    REQUIRE(switchboard::testing::write_all(master, init));
    CHECK(json::parse(switchboard::testing::read_line(out.read_end()), nullptr, false).contains("result"));
    CHECK(fds_open_on(daemon, fd_target(attacher.pid(), 0)).empty());
    CHECK((::fcntl(terminal, F_GETFL) & O_NONBLOCK) == 0);
    // The relay copies: stopped, it answers nothing; let go, it does.
    REQUIRE(::kill(attacher.pid(), SIGSTOP) == 0);
    REQUIRE(switchboard::testing::write_all(master, R"({"jsonrpc":"2.0","id":2,"method":"ping"})" "\n"));
    CHECK_FALSE(readable_within(out.read_end(), std::chrono::milliseconds(500)));
    REQUIRE(::kill(attacher.pid(), SIGCONT) == 0);
    CHECK(json::parse(switchboard::testing::read_line(out.read_end()), nullptr, false).contains("result"));
    REQUIRE(switchboard::testing::write_all(master, "\x04"));  // end of input, as Ctrl-D at a line's start
    CHECK(attacher.wait(std::chrono::seconds(10)) == 0);
    ::close(terminal);
    ::close(master);
  }
}

TEST_CASE("attach: an agent started for a handed-over client inherits none of its descriptors", "[attach][daemon]") {
  AttachWorld w;
  DaemonClient attached(w.args, agent_env(w.tmp));
  REQUIRE(initialize(attached, "attached").contains("result"));
  const std::set<std::string> handed{fd_target(attached.daemon().pid(), 0), fd_target(attached.daemon().pid(), 1)};
  REQUIRE_FALSE(fds_open_on(w.host.daemon().pid(), *handed.begin()).empty());

  const auto created = attached.call("session.create", {{"agent", "claude"}, {"cwd", w.tmp.path().string()}});
  REQUIRE(created.contains("result"));
  const std::string session = created["result"]["session"]["sessionId"];
  REQUIRE(attached.call("session.send", {{"sessionId", session}, {"text", "hello"}, {"wait", false}}).contains("result"));
  std::size_t from = 0;
  REQUIRE(attached.wait_event("permission.requested", from, std::chrono::seconds(20)).is_object());  // it runs

  std::vector<pid_t> agents;
  for (const pid_t pid : descendants_of(w.host.daemon().pid())) {
    const std::string command = cmdline_of(pid);
    if (command.find("fake_claude") != std::string::npos && command.find("--version") == std::string::npos) {
      agents.push_back(pid);
    }
  }
  REQUIRE_FALSE(agents.empty());
  for (const pid_t agent : agents) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(agent) + "/fd", error)) {
      std::error_code ignored;
      const std::string target = fs::read_symlink(entry.path(), ignored).string();
      INFO("agent " << agent << " fd " << entry.path().filename().string() << " -> " << target);
      CHECK_FALSE(handed.contains(target));
    }
  }
}

TEST_CASE("attach: a daemon that does not take handoffs (an older one) gets a relay on a new connection",
          "[attach][daemon]") {
  // The test is that daemon: a socket named in a runtime file, which answers the marker as a bad request line.
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  fs::create_directories(data_dir);
  const std::string socket_path = (data_dir / "daemon.sock").string();
  const int listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path.c_str());
  REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  std::ofstream(data_dir / "daemon.json") << json{{"pid", ::getpid()}, {"socket", socket_path}}.dump();

  Pipe in, out;
  const int err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  SpawnedDaemon attacher({"--log-level", "off", "stdio", "--data-dir", data_dir.string()}, in.read_end(),
                         out.write_end(), err, agent_env(tmp));
  ::close(err);
  in.close_read();
  out.close_write();

  const int first = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  REQUIRE(first >= 0);
  char marker[2] = {};
  REQUIRE(::recv(first, marker, sizeof marker, MSG_WAITALL) == 2);  // its descriptors are dropped unread
  CHECK(marker[0] == '\0');
  CHECK(marker[1] == '\n');
  REQUIRE(switchboard::testing::write_all(
      first, R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})" "\n"));
  const int second = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
  REQUIRE(second >= 0);
  CHECK(switchboard::testing::read_all(first).empty());  // the first connection is given up
  ::close(first);

  // The relay: a line in on stdin reaches the socket, an answer on the socket reaches stdout.
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  REQUIRE(switchboard::testing::write_all(in.write_end(), ping + "\n"));
  CHECK(switchboard::testing::read_line(second) == ping);
  const std::string pong = R"({"jsonrpc":"2.0","id":1,"result":{}})";
  REQUIRE(switchboard::testing::write_all(second, pong + "\n"));
  CHECK(switchboard::testing::read_line(out.read_end()) == pong);
  in.close_write();
  CHECK(switchboard::testing::read_all(second).empty());  // the half-close
  ::close(second);
  CHECK(attacher.wait(std::chrono::seconds(10)) == 0);
  ::close(listener);
}

TEST_CASE("attach: the daemon takes only pipes and sockets in a handoff", "[attach][daemon]") {
  TempDir tmp{"attach"};
  const fs::path data_dir = tmp.path() / "data";
  DaemonClient host({"--log-level", "off", "stdio", "--data-dir", data_dir.string()}, agent_env(tmp));
  REQUIRE(initialize(host, "host").contains("result"));
  const auto runtime = runtime_of(data_dir);
  REQUIRE(runtime.is_object());
  const int fd = connect_socket(runtime.at("socket"));
  REQUIRE(fd >= 0);
  // A regular file and /dev/null: no readiness to wait for; served, they would block the daemon or spin.
  std::ofstream(tmp.path() / "file") << "{}\n";
  const int file = ::open((tmp.path() / "file").c_str(), O_RDONLY | O_CLOEXEC);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  REQUIRE(file >= 0);
  REQUIRE(null >= 0);
  CHECK_FALSE(switchboard::transport::send_stdio(fd, file, null).has_value());
  char reply = 0;
  CHECK(::recv(fd, &reply, 1, 0) == 0);  // closed, not accepted
  ::close(fd);
  ::close(file);
  ::close(null);
  CHECK(host.call("ping").contains("result"));
}

}  // namespace socket_attach_tests
