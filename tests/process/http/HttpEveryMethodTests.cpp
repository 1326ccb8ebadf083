#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/DaemonClient.h"
#include "support/Eventually.h"
#include "support/RawHttpClient.h"
#include "support/RuntimeFile.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// Every method of the schema, over HTTP and over stdio, on the real binary: each HTTP call gets exactly one
// answer, with the same bytes as the stdio answer to the same request. The list of methods is read from
// schema/methods/ when the test runs, so a method added later is covered without touching this file (with `{}`
// as params until someone gives it better ones below).

namespace http_every_method_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::DaemonClient;
using switchboard::testing::RawHttpClient;
using switchboard::testing::TempDir;
using switchboard::testing::read_text_file;
using switchboard::testing::wait_for_runtime_file;
using switchboard::testing::eventually;

std::vector<std::string> schema_methods() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(SWITCHBOARD_SOURCE_DIR) / "schema" / "methods")) {
    if (entry.path().extension() != ".json") continue;
    names.push_back(json::parse(read_text_file(entry.path())).at("name").get<std::string>());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A stand-in for the Claude Code CLI: it answers `--version` (so the daemon reports the agent installed) and
// exits with an error as soon as a session really starts it. A turn then takes the daemon's late path for
// real: spawn, watch the exit, end the turn, answer.
void write_fake_cli(const fs::path& path) {
  std::ofstream(path) << "#!/bin/sh\n"
                         "if [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\n"
                         "echo 'fake claude: no model here' >&2\n"
                         "exit 7\n";
  fs::permissions(path, fs::perms::owner_all);
}

// The parts of an answer that legitimately differ between two calls made one after the other, replaced by a
// placeholder in both before comparing bytes:
// - "ts" (ping), "createdAt", "updatedAt": clock readings, taken at each call;
// - "clientId" (initialize): every connection gets its own;
// - "sessionId" of session.create and session.fork: each call creates a session of its own;
// - "turnId" (session.send, session.resume): each call runs a turn of its own.
// Everything else, including every error message and every list, must be byte-identical.
std::string normalized(const std::string& method, std::string text) {
  static const std::regex clocks(R"re("(ts|createdAt|updatedAt)":[0-9]+)re");
  static const std::regex client(R"re("clientId":"client-[0-9a-f]+")re");
  static const std::regex session(R"re("sessionId":"s-[0-9a-f]+")re");
  static const std::regex turn(R"re("turnId":"[^"]*")re");
  text = std::regex_replace(text, clocks, R"("$1":"<clock>")");
  text = std::regex_replace(text, client, R"("clientId":"<client>")");
  if (method == "session.create" || method == "session.fork") text = std::regex_replace(text, session, R"("sessionId":"<new session>")");
  // Each call adds a rule of its own.
  static const std::regex rule(R"re("ruleId":"rule-[0-9a-f]+")re");
  if (method == "rules.add") text = std::regex_replace(text, rule, R"("ruleId":"<new rule>")");
  text = std::regex_replace(text, turn, R"("turnId":"<turn>")");
  return text;
}

// Whether every agent's background discovery has finished: each listed agent is either known absent or has
// its version. Until then a probe's pipes are open (and agents.list may change between two calls). Every agent
// counts, not just the one under test: the daemon also probes whichever other CLIs its PATH holds.
bool every_probe_finished(DaemonClient& stdio) {
  const auto agents = stdio.call("agents.list");
  for (const auto& agent : agents.at("result").at("agents")) {
    if (agent.value("installed", false) && !agent.contains("version")) return false;
  }
  return true;
}

TEST_CASE("every schema method answers over HTTP exactly once, byte for byte what stdio answers", "[http][daemon]") {
  TempDir tmp{"every"};
  const fs::path dir = tmp.path() / "data";
  const fs::path work = tmp.path() / "work";
  const fs::path home = tmp.path() / "home";
  fs::create_directories(work);
  fs::create_directories(home);
  write_fake_cli(tmp.path() / "claude");
  // A data directory (not --ephemeral): every call that stores something answers only after the store's worker
  // thread has committed it, the late path this test is about.
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string()},
                     {"SWITCHBOARD_CLAUDE_BIN=" + (tmp.path() / "claude").string(),
                      "SWITCHBOARD_CODEX_BIN=/nonexistent/codex", "HOME=" + home.string()});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  // Changed by daemon.rotateToken below.
  std::string bearer = "Authorization: Bearer " + runtime.at("token").get<std::string>();
  // One keep-alive connection for every HTTP call: a second answer to any call would surface as an extra
  // response ahead of the next one.
  RawHttpClient http(port, 90000);
  REQUIRE(http.connected());

  std::int64_t next_id = 1000;
  // Calls `method` over stdio, then the same request over HTTP; checks one answer each and equal bytes.
  auto compare = [&](const std::string& method, const json& params) {
    const std::int64_t id = ++next_id;
    const std::string request = json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
    CAPTURE(method, request);
    stdio.send_line(request);
    const auto stdio_lines = stdio.response_lines(id);
    REQUIRE(stdio_lines.size() == 1);
    const auto response = http.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, request);
    REQUIRE(response.complete);
    CHECK(response.status == 200);
    CHECK(response.headers.count("content-type") == 1);
    if (response.headers.count("content-type")) CHECK(response.headers.at("content-type") == "application/json");
    CHECK(normalized(method, response.body) == normalized(method, stdio_lines.front()));
    return json::parse(stdio_lines.front(), nullptr, false);
  };

  const auto methods = schema_methods();
  REQUIRE(methods.size() >= 20);
  std::set<std::string> covered;

  // initialize first: on stdio it can be called once, and before it most methods are refused.
  const json hello{{"protocolVersion", 1}, {"clientInfo", {{"name", "every-method"}}}};
  CHECK(compare("initialize", hello).contains("result"));
  covered.insert("initialize");

  // The agents' version probes run in the background: wait until agents.list is stable.
  REQUIRE(eventually([&] { return every_probe_finished(stdio); }, std::chrono::seconds(30)));
  auto create = [&](const std::string& title) {
    const auto created = stdio.call("session.create", {{"agent", "claude"}, {"cwd", work.string()}, {"title", title}});
    REQUIRE(created.contains("result"));
    return created.at("result").at("session").at("sessionId").get<std::string>();
  };
  const std::string main_session = create("main");
  const std::string archived_session = create("archive me");
  const std::string deleted_by_stdio = create("delete me (stdio)");
  const std::string deleted_by_http = create("delete me (http)");

  // Params per method, valid enough that the handlers do their real work (and their late path where they
  // have one: the store, the agent's history files, an agent turn). Calls that are refused are compared too.
  const std::map<std::string, std::function<json()>> params = {
      {"agents.list", [] { return json::object(); }},
      {"history.list", [&] { return json{{"agent", "claude"}, {"cwd", work.string()}}; }},
      {"history.read", [&] { return json{{"agent", "claude"}, {"cwd", work.string()}, {"providerSessionId", "0b1c2d3e-0000-4000-8000-000000000000"}}; }},
      {"permission.respond", [] { return json{{"requestId", "r-nosuchrequest"}, {"decision", "allow_once"}}; }},
      {"ping", [] { return json::object(); }},
      {"question.respond", [] { return json{{"requestId", "r-nosuchrequest"}, {"reject", true}}; }},
      {"rpc.discover", [] { return json::object(); }},
      {"rules.add", [&] { return json{{"sessionId", main_session}, {"rule", {{"tool", "Bash"}, {"pattern", "git *"}}}, {"decision", "allow"}}; }},
      {"rules.list", [] { return json::object(); }},
      {"rules.remove", [] { return json{{"ruleId", "rule-nosuchrule"}}; }},
      {"session.archive", [&] { return json{{"sessionId", archived_session}, {"archived", true}}; }},
      {"session.attach", [&] { return json{{"sessionId", main_session}}; }},
      {"session.cancel", [&] { return json{{"sessionId", main_session}}; }},
      {"session.compact", [&] { return json{{"sessionId", main_session}}; }},
      {"session.create", [&] { return json{{"agent", "claude"}, {"cwd", work.string()}, {"title", "created twice"}}; }},
      {"session.diff", [&] { return json{{"sessionId", main_session}}; }},
      {"session.events", [&] { return json{{"sessionId", main_session}}; }},
      // An archived session nobody drives: its document is the same for both transports.
      {"session.export", [&] { return json{{"sessionId", archived_session}, {"format", "json"}}; }},
      {"session.fork", [&] { return json{{"sessionId", main_session}, {"title", "forked"}}; }},
      {"session.get", [&] { return json{{"sessionId", main_session}}; }},
      {"session.import", [&] { return json{{"agent", "claude"}, {"cwd", work.string()}, {"providerSessionId", "0b1c2d3e-0000-4000-8000-000000000000"}}; }},
      {"session.list", [] { return json::object(); }},
      {"session.rename", [&] { return json{{"sessionId", main_session}, {"title", "renamed"}}; }},
      {"session.resume", [&] { return json{{"sessionId", main_session}}; }},
      {"session.rewind", [&] { return json{{"sessionId", main_session}, {"turnId", "t-nosuchturn"}}; }},
      {"daemon.httpInfo", [] { return json::object(); }},
      {"session.search", [] { return json{{"query", "hello"}, {"limit", 5}}; }},
      {"session.send", [&] { return json{{"sessionId", main_session}, {"text", "hello"}}; }},
      {"session.setMode", [&] { return json{{"sessionId", main_session}, {"mode", "plan"}}; }},
      {"session.setModel", [&] { return json{{"sessionId", main_session}, {"model", "claude-sonnet-4-5"}}; }},
      {"session.setOption", [&] { return json{{"sessionId", main_session}, {"optionId", "effort"}, {"value", "high"}}; }},
  };

  for (const auto& method : methods) {
    if (covered.count(method)) continue;
    covered.insert(method);
    if (method == "session.delete") {
      // Deleting is the one call that cannot be repeated on one session: each transport deletes its own.
      const std::int64_t id = ++next_id;
      const auto request = [&](const std::string& session) {
        return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", {{"sessionId", session}}}}.dump();
      };
      stdio.send_line(request(deleted_by_stdio));
      const auto stdio_lines = stdio.response_lines(id);
      REQUIRE(stdio_lines.size() == 1);
      const auto response = http.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, request(deleted_by_http));
      REQUIRE(response.complete);
      CHECK(response.body == stdio_lines.front());
      CHECK(json::parse(response.body).contains("result"));
      continue;
    }
    if (method == "daemon.rotateToken") {
      // Each call makes a token of its own: the stdio call's token must be the one the HTTP call carries (the
      // one before it is refused from then on), and the two answers differ only in the token.
      const std::int64_t id = ++next_id;
      const std::string request = json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", json::object()}}.dump();
      stdio.send_line(request);
      const auto stdio_lines = stdio.response_lines(id);
      REQUIRE(stdio_lines.size() == 1);
      const std::string stdio_token = json::parse(stdio_lines.front()).at("result").at("token");
      RawHttpClient refused(port);
      CHECK(refused.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, request).status == 401);
      bearer = "Authorization: Bearer " + stdio_token;
      const auto response = http.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, request);
      REQUIRE(response.complete);
      CHECK(response.status == 200);
      const std::string http_token = json::parse(response.body).at("result").at("token");
      CHECK(http_token != stdio_token);
      const auto without_token = [](std::string text, const std::string& token) { return text.replace(text.find(token), token.size(), "<token>"); };
      CHECK(without_token(response.body, http_token) == without_token(stdio_lines.front(), stdio_token));
      bearer = "Authorization: Bearer " + http_token;
      continue;
    }
    const auto found = params.find(method);
    if (found == params.end()) WARN("no params for " << method << " in this test: called with {}");
    compare(method, found == params.end() ? json::object() : found->second());
  }
  CHECK(covered.size() == methods.size());

  // Exactly once: nothing more arrives on the HTTP connection, and no stdio id was answered twice. The stdio
  // answers leave through one writer in order: once a last ping is answered, whatever the daemon wrote before
  // it (a second answer included) has arrived.
  const std::int64_t barrier = ++next_id;
  stdio.send_line(json{{"jsonrpc", "2.0"}, {"id", barrier}, {"method", "ping"}}.dump());
  REQUIRE(stdio.response_lines(barrier).size() == 1);
  for (std::int64_t id = 1001; id < barrier; ++id) {
    CAPTURE(id);
    CHECK(stdio.response_lines(id, std::chrono::milliseconds(0)).size() == 1);
  }
  const auto ping = http.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, R"({"jsonrpc":"2.0","id":"last","method":"ping"})");
  CHECK(json::parse(ping.body).at("id") == "last");  // the next answer on the connection is the next call's
}

// The daemon's open descriptors: all of them, and the sockets among them. An inotify instance is not counted: the
// checkpoint store watches the session's working tree from its first turn on, for the daemon's life (not a leak).
struct Descriptors {
  std::size_t all = 0;
  std::size_t sockets = 0;
  std::string listing;  // "fd -> target" lines, for the message when counts differ
  bool operator==(const Descriptors& other) const { return all == other.all && sockets == other.sockets; }
};
Descriptors descriptors_of(pid_t pid) {
  Descriptors counted;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    const auto target = fs::read_symlink(entry.path(), error);
    if (!error && target.string() == "anon_inode:inotify") continue;
    ++counted.all;
    if (!error && target.string().rfind("socket:", 0) == 0) ++counted.sockets;
    counted.listing += entry.path().filename().string() + " -> " + (error ? "?" : target.string()) + "\n";
  }
  return counted;
}

TEST_CASE("a client that leaves during a long HTTP call: the call completes, the daemon serves on, no descriptor leaks",
          "[http][daemon]") {
  TempDir tmp{"every"};
  const fs::path dir = tmp.path() / "data";
  const fs::path work = tmp.path() / "work";
  fs::create_directories(work);
  fs::create_directories(tmp.path() / "home");
  // A CLI that takes its time before failing: the turn, and so the send, lasts about two seconds.
  std::ofstream(tmp.path() / "claude") << "#!/bin/sh\n"
                                        "if [ \"$1\" = --version ]; then echo '2.1.0 (Claude Code)'; exit 0; fi\n"
                                        "sleep 2\n"
                                        "exit 7\n";
  fs::permissions(tmp.path() / "claude", fs::perms::owner_all);
  DaemonClient stdio({"--log-level", "off", "stdio", "--http", "--port", "0", "--data-dir", dir.string()},
                     {"SWITCHBOARD_CLAUDE_BIN=" + (tmp.path() / "claude").string(),
                      "SWITCHBOARD_CODEX_BIN=/nonexistent/codex", "HOME=" + (tmp.path() / "home").string()});
  const auto runtime = wait_for_runtime_file(dir);
  const std::uint16_t port = runtime.at("port");
  const std::string bearer = "Authorization: Bearer " + runtime.at("token").get<std::string>();
  const pid_t pid = stdio.daemon().pid();
  REQUIRE(stdio.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "t"}}}}).contains("result"));
  const auto created = stdio.call("session.create", {{"agent", "claude"}, {"cwd", work.string()}});
  REQUIRE(created.contains("result"));
  const std::string session = created.at("result").at("session").at("sessionId");
  // Let the background version probes finish, so their pipes are not counted.
  REQUIRE(eventually([&] { return every_probe_finished(stdio); }, std::chrono::seconds(30)));
  const auto before = descriptors_of(pid);

  std::size_t events_seen = stdio.events().size();
  {
    RawHttpClient client(port, 10000);
    REQUIRE(client.send_request("POST", "/rpc", {bearer, "Content-Type: application/json"},
                                json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "session.send"},
                                     {"params", {{"sessionId", session}, {"text", "take your time"}}}}.dump()));
    REQUIRE(stdio.wait_event("turn.started", events_seen, std::chrono::seconds(10)).is_object());
    CHECK(descriptors_of(pid).sockets == before.sockets + 1);
  }  // gone while the turn runs

  // The daemon drops the departed client's socket at once, well before the turn ends.
  CHECK(eventually([&] { return descriptors_of(pid).sockets == before.sockets; }, std::chrono::milliseconds(1500)));
  CHECK(stdio.call("session.get", {{"sessionId", session}}).at("result").at("session").at("state") != "idle");

  // The call goes on to its end; the daemon serves on; every descriptor is back.
  const auto stopped = stdio.wait_event("turn.stopped", events_seen, std::chrono::seconds(20));
  REQUIRE(stopped.is_object());
  RawHttpClient after(port, 10000);
  const auto ping = after.request("POST", "/rpc", {bearer, "Content-Type: application/json"}, R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  CHECK(ping.status == 200);
  after.close();
  const bool every_descriptor_back = eventually([&] { return descriptors_of(pid) == before; }, std::chrono::seconds(15));
  const auto now = descriptors_of(pid);
  CAPTURE(before.all, before.sockets, now.all, now.sockets, before.listing, now.listing);
  CHECK(every_descriptor_back);
}

}  // namespace http_every_method_tests
