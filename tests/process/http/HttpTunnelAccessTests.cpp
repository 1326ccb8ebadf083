#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/Eventually.h"
#include "support/FdIo.h"
#include "support/Pipe.h"
#include "support/RawHttpClient.h"
#include "support/RuntimeFile.h"
#include "support/SpawnedDaemon.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// Reaching the daemon through a tunnel (http.allowed_hosts / --allow-host) and ending HTTP access with
// daemon.rotateToken, on the real binary: what a phone behind Tailscale serve or an SSH forward goes through.

namespace http_tunnel_access_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::eventually;
using switchboard::testing::Pipe;
using switchboard::testing::RawHttpClient;
using switchboard::testing::read_all;
using switchboard::testing::read_line;
using switchboard::testing::write_all;
using switchboard::testing::read_text_file;
using switchboard::testing::SpawnedDaemon;
using switchboard::testing::TempDir;
using switchboard::testing::wait_for_runtime_file;

const std::string kPing = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";

// One POST /rpc on a connection of its own (a refusal closes the connection it came on).
RawHttpClient::Response post(std::uint16_t port, const std::string& body, std::vector<std::string> headers,
                             std::optional<std::string> host = std::nullopt) {
  RawHttpClient client(port);
  headers.push_back("Content-Type: application/json");
  return client.request("POST", "/rpc", std::move(headers), body, std::move(host));
}

std::string bearer(const std::string& token) { return "Authorization: Bearer " + token; }

// A client on the daemon's local socket (the stdio protocol, no token): initialize, then ping; the ping's answer.
json ping_over_socket(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return nullptr;
  }
  write_all(fd, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"socket"}}})" "\n"
                R"({"jsonrpc":"2.0","id":2,"method":"ping"})" "\n");
  json answer;
  for (int lines = 0; lines < 50; ++lines) {
    auto parsed = json::parse(read_line(fd), nullptr, false);
    if (parsed.is_object() && parsed.value("id", json()) == 2) {
      answer = std::move(parsed);
      break;
    }
  }
  ::close(fd);
  return answer;
}

TEST_CASE("an allowed host is let in with any port or none, in Host and Origin alike, and the token is still required",
          "[http][daemon][tunnel]") {
  TempDir tmp{"tunnel"};
  const fs::path dir = tmp.path() / "data";
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string(),
                      "--allow-host", "box.tailnet.example", "--allow-host", "[fd00::1]"},
                     {});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string token = runtime.at("token");

  // Tailscale serve and a TLS proxy send the name bare (port 443), an SSH forward sends its own port.
  for (const std::string host : {"box.tailnet.example", "box.tailnet.example:443", "box.tailnet.example:8022", "[fd00::1]:9000"}) {
    CAPTURE(host);
    const auto answered = post(port, kPing, {bearer(token)}, host);
    CHECK(answered.status == 200);
    CHECK(json::parse(answered.body, nullptr, false).contains("result"));
    // The same request without the token, or with another one, is refused.
    CHECK(post(port, kPing, {}, host).status == 401);
    CHECK(post(port, kPing, {bearer(std::string(64, '0'))}, host).status == 401);
  }
  // The console's page through the tunnel, and its calls, which carry the tunnel's origin.
  RawHttpClient page(port);
  CHECK(page.request("GET", "/", {}, "", std::string("box.tailnet.example")).status == 200);
  const auto from_page = post(port, kPing, {bearer(token), "Origin: https://box.tailnet.example"}, "box.tailnet.example");
  CHECK(from_page.status == 200);
  CHECK(from_page.headers.count("access-control-allow-origin") == 0);  // same daemon: no CORS needed
  CHECK(post(port, kPing, {bearer(token), "Origin: http://box.tailnet.example:8022"}, "box.tailnet.example:8022").status == 200);

  // Names that were not configured, and look-alikes, are refused even with the token.
  for (const std::string host : {"evil.example", "box.tailnet.example.evil.example", "tailnet.example", "box.tailnet.example:x"}) {
    CAPTURE(host);
    CHECK(post(port, kPing, {bearer(token)}, host).status == 403);
  }
  CHECK(post(port, kPing, {bearer(token), "Origin: https://evil.example"}, "box.tailnet.example").status == 403);
  CHECK(post(port, kPing, {bearer(token), "Origin: https://box.tailnet.example.evil.example"}, "box.tailnet.example").status == 403);
  // The loopback names keep needing our own port.
  CHECK(post(port, kPing, {bearer(token)}, std::string("localhost")).status == 403);
}

TEST_CASE("with no allowed host configured, only the loopback names on the daemon's port are let in", "[http][daemon][tunnel]") {
  TempDir tmp{"tunnel"};
  const fs::path dir = tmp.path() / "data";
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string()}, {});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string token = runtime.at("token");
  CHECK(post(port, kPing, {bearer(token)}).status == 200);
  CHECK(post(port, kPing, {bearer(token)}, std::string("box.tailnet.example")).status == 403);
  CHECK(post(port, kPing, {bearer(token)}, std::string("localhost:443")).status == 403);
}

TEST_CASE("an allowed host with a wildcard or a port is refused when the daemon starts", "[http][daemon][tunnel]") {
  for (const std::string name : {"*.tailnet.example", "box.tailnet.example:7337", "https://box.tailnet.example"}) {
    CAPTURE(name);
    TempDir tmp{"tunnel"};
    Pipe err;
    const int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    SpawnedDaemon daemon({"serve", "--port", "0", "--data-dir", (tmp.path() / "d").string(), "--allow-host", name}, in,
                         null_out, err.write_end());
    err.close_write();
    ::close(in);
    ::close(null_out);
    CHECK(daemon.wait() == 1);
    const std::string message = read_all(err.read_end());
    CHECK(message.find("http.allowed_hosts") != std::string::npos);
    CHECK(message.find(name) != std::string::npos);
  }
}

TEST_CASE("daemon.rotateToken: the old token is refused at once on HTTP and SSE, and stdio clients are not affected",
          "[http][daemon][tunnel]") {
  TempDir tmp{"rotate"};
  const fs::path dir = tmp.path() / "data";
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string()}, {});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string old_token = runtime.at("token");
  REQUIRE(stdio.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "rotate-test"}}}}).contains("result"));

  // Another client's open event stream, and its keep-alive connection that has made a call already.
  RawHttpClient stream(port, 10000);
  REQUIRE(stream.send_request("GET", "/events", {bearer(old_token)}));
  RawHttpClient::Response head;
  REQUIRE(stream.read_head(head));
  REQUIRE(head.status == 200);
  RawHttpClient keep_alive(port);
  REQUIRE(keep_alive.request("POST", "/rpc", {bearer(old_token), "Content-Type: application/json"}, kPing).status == 200);

  const auto rotated = post(port, R"({"jsonrpc":"2.0","id":2,"method":"daemon.rotateToken","params":{}})", {bearer(old_token)});
  REQUIRE(rotated.status == 200);
  const std::string new_token = json::parse(rotated.body).at("result").at("token");
  CHECK(new_token.size() == 64);
  CHECK(new_token != old_token);

  // The open stream is ended by the daemon, not left running on the old token.
  CHECK(stream.closed_by_server());
  // Every way of presenting the old token is refused now, on the connection that used it too.
  CHECK(keep_alive.request("POST", "/rpc", {bearer(old_token), "Content-Type: application/json"}, kPing).status == 401);
  CHECK(post(port, kPing, {bearer(old_token)}).status == 401);
  RawHttpClient old_stream(port);
  CHECK(old_stream.request("GET", "/events", {bearer(old_token)}).status == 401);
  RawHttpClient old_query_stream(port);
  CHECK(old_query_stream.request("GET", "/events?token=" + old_token, {}).status == 401);
  // The new token works for both, and local clients find it in the runtime file.
  CHECK(post(port, kPing, {bearer(new_token)}).status == 200);
  RawHttpClient new_stream(port, 10000);
  REQUIRE(new_stream.send_request("GET", "/events", {bearer(new_token)}));
  RawHttpClient::Response new_head;
  REQUIRE(new_stream.read_head(new_head));
  CHECK(new_head.status == 200);
  CHECK(eventually([&] { return json::parse(read_text_file(dir / "daemon.json"), nullptr, false).value("token", "") == new_token; },
                   std::chrono::seconds(5)));

  // Neither do socket clients: they never present the token.
  REQUIRE(runtime.contains("socket"));
  CHECK(ping_over_socket(runtime.at("socket")).contains("result"));

  // The stdio client never used the token: it keeps working, and may rotate it too.
  CHECK(stdio.call("ping").contains("result"));
  const auto again = stdio.call("daemon.rotateToken");
  REQUIRE(again.contains("result"));
  const std::string third_token = again.at("result").at("token");
  CHECK(third_token != new_token);
  CHECK(post(port, kPing, {bearer(new_token)}).status == 401);
  CHECK(post(port, kPing, {bearer(third_token)}).status == 200);
  CHECK(new_stream.closed_by_server());
}

TEST_CASE("daemon.rotateToken on a daemon that serves no HTTP is Unsupported", "[http][daemon][tunnel]") {
  TempDir tmp{"rotate"};
  DaemonClient stdio({"--log-level", "off", "stdio", "--data-dir", (tmp.path() / "data").string()}, {});
  REQUIRE(stdio.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "rotate-test"}}}}).contains("result"));
  const auto refused = stdio.call("daemon.rotateToken");
  REQUIRE(refused.contains("error"));
  CHECK(refused.at("error").at("code") == -32015);
}

TEST_CASE("daemon.httpInfo gives an authenticated client the port and the allowed host names", "[http][daemon][tunnel]") {
  TempDir tmp{"http-info"};
  const fs::path dir = tmp.path() / "data";
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string(), "--allow-host",
                      "box.example", "--allow-host", "[fd00::1]"},
                     {});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string token = runtime.at("token");
  const std::string call = R"({"jsonrpc":"2.0","id":3,"method":"daemon.httpInfo","params":{}})";
  // Over HTTP with the token, through the tunnel's name too: what the console's pairing dialog offers.
  for (const std::optional<std::string>& host : {std::optional<std::string>{}, std::optional<std::string>{"box.example"}}) {
    const auto answer = post(port, call, {bearer(token)}, host);
    REQUIRE(answer.status == 200);
    CHECK(json::parse(answer.body).at("result") == json{{"port", port}, {"allowedHosts", {"box.example", "[fd00::1]"}}});
  }
  // Not without the token.
  CHECK(post(port, call, {}).status == 401);
  // The stdio client gets the same answer.
  REQUIRE(stdio.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "info-test"}}}}).contains("result"));
  CHECK(stdio.call("daemon.httpInfo").at("result").at("allowedHosts") == json{"box.example", "[fd00::1]"});
}

TEST_CASE("daemon.httpInfo on a daemon that serves no HTTP is Unsupported", "[http][daemon][tunnel]") {
  TempDir tmp{"http-info"};
  DaemonClient stdio({"--log-level", "off", "stdio", "--data-dir", (tmp.path() / "data").string()}, {});
  REQUIRE(stdio.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "info-test"}}}}).contains("result"));
  const auto refused = stdio.call("daemon.httpInfo");
  REQUIRE(refused.contains("error"));
  CHECK(refused.at("error").at("code") == -32015);
}

}  // namespace http_tunnel_access_tests
