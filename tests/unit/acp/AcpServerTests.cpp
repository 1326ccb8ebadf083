#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "acp/AcpServer.h"
#include "support/TempDir.h"
#include "switchboard/json/JsonWriter.h"
#include "switchboard/protocol/generated/Types.h"

// `switchboard acp`'s server against a scripted daemon: the test plays the daemon on one end of a socketpair
// (reads each call, answers it as it likes, sends events) and the editor on two pipes, all on this thread. What a
// real daemon never sends (an answer that is not what the schema says) and what only a race gives (an answer that
// comes after the session was closed) are written here on purpose.

namespace acp_server_tests {

using nlohmann::json;
using switchboard::acp::AcpServer;
using switchboard::testing::TempDir;
namespace p = switchboard::protocol;

template <class T>
json encoded(const T& value) {
  std::string text;
  {
    switchboard::json::JsonWriter writer(text);
    p::encode(writer, value);
  }
  return json::parse(text);
}

p::SessionInfo session_info(const std::string& id) {
  p::SessionInfo info;
  info.session_id = id;
  info.agent = "claude";
  info.cwd = "/w";
  info.state = p::SessionState::Idle;
  info.created_at = info.updated_at = 1;
  return info;
}

p::AgentInfo claude_with_modes(std::vector<std::string> modes) {
  p::AgentInfo agent;
  agent.agent = "claude";
  agent.installed = true;
  agent.modes = std::move(modes);
  return agent;
}

// Appends what can be read from `fd` now to `buffer`; false once it is closed.
bool read_available(int fd, std::string& buffer) {
  char chunk[65536];
  for (;;) {
    const auto n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      buffer.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    return n < 0;  // EAGAIN: open, nothing more now
  }
}

std::optional<json> take_line(std::string& buffer) {
  const auto end = buffer.find('\n');
  if (end == std::string::npos) return std::nullopt;
  auto line = json::parse(buffer.substr(0, end));
  buffer.erase(0, end + 1);
  return line;
}

void write_line(int fd, const json& message) {
  const auto text = message.dump() + "\n";
  REQUIRE(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
}

class ScriptedDaemon {
 public:
  ScriptedDaemon() {
    int pair[2];
    int in[2];
    int out[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    m_daemon = pair[1];
    m_editor_in = in[1];
    m_editor_out = out[0];
    m_server_in = in[0];
    m_server_out = out[1];
    ::fcntl(m_daemon, F_SETFL, O_NONBLOCK);
    ::fcntl(m_editor_out, F_SETFL, O_NONBLOCK);
    m_server = std::make_unique<AcpServer>(m_io, AcpServer::Options{"claude", "/w", m_tmp.path(), false}, pair[0], m_server_in,
                                           m_server_out, [this](int code) { m_exit = code; });
    m_server->start();
    const auto initialize = next_call();
    REQUIRE(initialize["method"] == "initialize");
    answer(initialize, json::object());
  }
  ~ScriptedDaemon() {
    m_server.reset();
    for (int fd : {m_daemon, m_editor_in, m_editor_out, m_server_in, m_server_out}) ::close(fd);
  }

  // The next call the server makes to the daemon.
  json next_call() {
    std::optional<json> call;
    pump_until([&] { return (call = take_line(m_from_server)).has_value(); });
    REQUIRE(call);
    return *call;
  }
  void answer(const json& call, json result) { write_line(m_daemon, json{{"jsonrpc", "2.0"}, {"id", call["id"]}, {"result", std::move(result)}}); }
  void refuse(const json& call, int code, const std::string& message) {
    write_line(m_daemon, json{{"jsonrpc", "2.0"}, {"id", call["id"]}, {"error", {{"code", code}, {"message", message}}}});
  }
  void event(json envelope) { write_line(m_daemon, json{{"jsonrpc", "2.0"}, {"method", "event"}, {"params", std::move(envelope)}}); }

  void editor_answers(const json& id, json result) { write_line(m_editor_in, json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}); }
  void editor_calls(int id, const std::string& method, json params) {
    write_line(m_editor_in, json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  }
  // The next message the editor gets, or null if none comes within `limit`.
  json editor_gets(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::optional<json> message;
    pump_until([&] { return (message = take_line(m_to_editor)).has_value(); }, limit);
    return message ? *message : json(nullptr);
  }

  // session/new, the agent listed as `agents` (asked once, before the first session is made); returns the
  // editor's answer. `create` sees the session.create call.
  json new_session(int id, const std::string& session_id, const json& agents, json editor_servers = json::array(),
                   const std::function<void(const json&)>& create_seen = {}) {
    editor_calls(id, "session/new", {{"cwd", "/w"}, {"mcpServers", std::move(editor_servers)}});
    if (!m_agents_listed) {
      const auto listed = next_call();
      REQUIRE(listed["method"] == "agents.list");
      answer(listed, json{{"agents", agents}});
      m_agents_listed = true;
    }
    const auto create = next_call();
    REQUIRE(create["method"] == "session.create");
    if (create_seen) create_seen(create);
    answer(create, json{{"session", encoded(session_info(session_id))}});
    return editor_gets();
  }

 private:
  template <class Predicate>
  void pump_until(Predicate done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return;
      m_io.restart();
      m_io.run_for(std::chrono::milliseconds(5));
      read_available(m_daemon, m_from_server);
      read_available(m_editor_out, m_to_editor);
    }
    done();
  }

  TempDir m_tmp{"acp-server"};
  boost::asio::io_context m_io{1};
  int m_daemon = -1;
  int m_editor_in = -1;
  int m_editor_out = -1;
  int m_server_in = -1;
  int m_server_out = -1;
  std::unique_ptr<AcpServer> m_server;
  std::string m_from_server;
  std::string m_to_editor;
  std::optional<int> m_exit;
  bool m_agents_listed = false;
};

TEST_CASE("acp server: the agent's modes come from a decoded agents.list, and an answer that does not decode offers none", "[acp-server]") {
  SECTION("decoded") {
    ScriptedDaemon daemon;
    const auto created = daemon.new_session(1, "s-1", json::array({encoded(claude_with_modes({"default", "plan"}))}));
    INFO(created.dump());
    CHECK(created["result"]["sessionId"] == "s-1");
    CHECK(created["result"]["modes"]["currentModeId"] == "default");
    CHECK(created["result"]["modes"]["availableModes"].size() == 2);
  }
  SECTION("a mode that is not a string: no modes, and the session still opens") {
    ScriptedDaemon daemon;
    auto odd = encoded(claude_with_modes({"default"}));
    odd["modes"] = json::array({1, "plan"});
    const auto created = daemon.new_session(1, "s-1", json::array({odd}));
    INFO(created.dump());
    CHECK(created["result"]["sessionId"] == "s-1");
    CHECK_FALSE(created["result"].contains("modes"));
  }
}

TEST_CASE("acp server: a daemon answer that does not decode fails the editor's request with an internal error", "[acp-server]") {
  ScriptedDaemon daemon;
  daemon.editor_calls(1, "session/new", {{"cwd", "/w"}, {"mcpServers", json::array()}});
  const auto listed = daemon.next_call();
  REQUIRE(listed["method"] == "agents.list");
  daemon.answer(listed, json{{"agents", json::array()}});
  const auto create = daemon.next_call();
  daemon.answer(create, json{{"session", {{"sessionId", 7}}}});
  const auto answer = daemon.editor_gets();
  INFO(answer.dump());
  CHECK(answer["id"] == 1);
  CHECK(answer["error"]["code"] == -32603);
  CHECK(answer["error"]["message"] == "session/new: the daemon's answer could not be read");
}

TEST_CASE("acp server: a prompt whose session was closed while its send was on the way answers cancelled", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array())["result"]["sessionId"] == "s-1");
  daemon.editor_calls(2, "session/prompt", {{"sessionId", "s-1"}, {"prompt", json::array({json{{"type", "text"}, {"text", "hi"}}})}});
  const auto send = daemon.next_call();
  REQUIRE(send["method"] == "session.send");
  daemon.editor_calls(3, "session/close", {{"sessionId", "s-1"}});
  const auto cancel = daemon.next_call();
  REQUIRE(cancel["method"] == "session.cancel");
  daemon.answer(cancel, json{{"cancelled", false}});
  const auto closed = daemon.editor_gets();
  CHECK(closed["id"] == 3);
  // The send's answer comes after the close: the turn's end will never be followed, so the prompt ends now.
  daemon.answer(send, json{{"turnId", "t-1"}, {"queued", false}});
  const auto prompted = daemon.editor_gets();
  INFO(prompted.dump());
  CHECK(prompted["id"] == 2);
  CHECK(prompted["result"] == json{{"stopReason", "cancelled"}});
}

TEST_CASE("acp server: a session/load that fails leaves a session the editor already follows followed", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array())["result"]["sessionId"] == "s-1");
  daemon.editor_calls(2, "session/load", {{"sessionId", "s-1"}, {"cwd", "/w"}, {"mcpServers", json::array()}});
  const auto get = daemon.next_call();
  REQUIRE(get["method"] == "session.get");
  daemon.answer(get, json{{"session", encoded(session_info("s-1"))}});
  const auto events = daemon.next_call();
  REQUIRE(events["method"] == "session.events");
  daemon.refuse(events, -32603, "the store failed");
  const auto load = daemon.editor_gets();
  CHECK(load["id"] == 2);
  CHECK(load.contains("error"));
  // The session's live events still reach the editor.
  daemon.event(json{{"seq", 9}, {"type", "message.delta"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"turnId", "t-1"}, {"messageId", "m-1"}, {"kind", "text"}, {"text", "still here"}}}});
  const auto update = daemon.editor_gets();
  INFO(update.dump());
  CHECK(update["method"] == "session/update");
  CHECK(update["params"]["update"]["content"]["text"] == "still here");
}

TEST_CASE("acp server: a permission request is asked with its running tool call and answered once", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array())["result"]["sessionId"] == "s-1");
  daemon.event(json{{"seq", 3}, {"type", "tool.started"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"turnId", "t-1"}, {"toolCallId", "call-1"}, {"tool", "Bash"}, {"input", {{"command", "ls"}}}}}});
  const auto started = daemon.editor_gets();
  REQUIRE(started["params"]["update"]["sessionUpdate"] == "tool_call");
  p::PermissionRequest request;
  request.request_id = "r-1";
  request.session_id = "s-1";
  request.turn_id = "t-1";
  request.tool = "Bash";
  request.input = json{{"command", "ls"}};
  request.description = "List files";
  request.reason = "mode";
  daemon.event(json{{"seq", 4}, {"type", "permission.requested"}, {"ts", 1}, {"sessionId", "s-1"}, {"data", {{"request", encoded(request)}}}});
  const auto asked = daemon.editor_gets();
  INFO(asked.dump());
  REQUIRE(asked["method"] == "session/request_permission");
  CHECK(asked["params"]["toolCall"]["toolCallId"] == "call-1");
  daemon.editor_answers(asked["id"], {{"outcome", {{"outcome", "selected"}, {"optionId", "allow_once"}}}});
  const auto respond = daemon.next_call();
  CHECK(respond["method"] == "permission.respond");
  CHECK(respond["params"] == json{{"requestId", "r-1"}, {"decision", "allow_once"}});
  // A resolution after the answer withdraws nothing: the request was asked once and answered.
  daemon.event(json{{"seq", 5}, {"type", "permission.resolved"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"requestId", "r-1"}, {"outcome", "allowed"}, {"resolvedBy", "client"}, {"resolvedAt", 2}}}});
  CHECK(daemon.editor_gets(std::chrono::milliseconds(300)).is_null());
}

p::AgentInfo claude_with(bool mcp, bool fork) {
  auto agent = claude_with_modes({"default"});
  agent.capabilities.mcp = mcp;
  agent.capabilities.fork = fork;
  return agent;
}

TEST_CASE("acp server: the editor's MCP servers go to session.create in our form when the agent takes them, and are left out when not", "[acp-server]") {
  const json editor_servers = json::parse(R"([
      {"name":"files","command":"/usr/bin/mcp-files","args":["--root","/w"],"env":[{"name":"TOKEN","value":"t"}]},
      {"type":"http","name":"web","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]}])");
  SECTION("taken") {
    ScriptedDaemon daemon;
    json call;
    const auto created = daemon.new_session(1, "s-1", json::array({encoded(claude_with(true, false))}), editor_servers,
                                            [&](const json& create) { call = create; });
    CHECK(created["result"]["sessionId"] == "s-1");
    CHECK(call["params"]["mcpServers"] == json::parse(R"([
        {"name":"files","transport":"stdio","command":"/usr/bin/mcp-files","args":["--root","/w"],"env":{"TOKEN":"t"}},
        {"name":"web","transport":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}])"));
  }
  SECTION("an agent without MCP: the session is made without them") {
    ScriptedDaemon daemon;
    json call;
    const auto created = daemon.new_session(1, "s-1", json::array({encoded(claude_with(false, false))}), editor_servers,
                                            [&](const json& create) { call = create; });
    CHECK(created["result"]["sessionId"] == "s-1");
    CHECK_FALSE(call["params"].contains("mcpServers"));
  }
  SECTION("an SSE server, which is not offered, is refused naming it") {
    ScriptedDaemon daemon;
    daemon.editor_calls(1, "session/new", {{"cwd", "/w"}, {"mcpServers", json::parse(R"([{"type":"sse","name":"old","url":"http://x","headers":[]}])")}});
    const auto refused = daemon.editor_gets();
    INFO(refused.dump());
    CHECK(refused["error"]["code"] == -32602);
    CHECK(refused["error"]["message"].get<std::string>().find("'old'") != std::string::npos);
  }
}

TEST_CASE("acp server: a config option of the agent's own is set with session.setOption, a boolean as true or false", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array({encoded(claude_with(false, false))}))["result"]["sessionId"] == "s-1");
  daemon.editor_calls(2, "session/set_config_option", {{"sessionId", "s-1"}, {"configId", "effort"}, {"value", "high"}});
  const auto set = daemon.next_call();
  REQUIRE(set["method"] == "session.setOption");
  CHECK(set["params"] == json{{"sessionId", "s-1"}, {"optionId", "effort"}, {"value", "high"}});
  auto info = session_info("s-1");
  info.options = std::vector<p::SessionOption>{
      p::SessionOption{"effort", "Effort", std::nullopt, p::SessionOptionKind::Select,
                       {p::SessionOptionValue{"low", std::nullopt, std::nullopt}, p::SessionOptionValue{"high", "High", std::nullopt}}, "high"},
      p::SessionOption{"web", std::nullopt, std::nullopt, p::SessionOptionKind::Boolean, {}, "false"}};
  daemon.answer(set, json{{"session", encoded(info)}});
  const auto answered = daemon.editor_gets();
  INFO(answered.dump());
  REQUIRE(answered["id"] == 2);
  const auto& options = answered["result"]["configOptions"];
  json effort;
  json web;
  for (const auto& option : options) {
    if (option["id"] == "effort") effort = option;
    if (option["id"] == "web") web = option;
  }
  CHECK(effort == json::parse(R"({"id":"effort","name":"Effort","category":"thought_level","type":"select","currentValue":"high",
                                  "options":[{"value":"low","name":"low"},{"value":"high","name":"High"}]})"));
  CHECK(web == json::parse(R"({"id":"web","name":"web","type":"boolean","currentValue":false})"));

  daemon.editor_calls(3, "session/set_config_option", {{"sessionId", "s-1"}, {"configId", "web"}, {"type", "boolean"}, {"value", true}});
  const auto toggled = daemon.next_call();
  REQUIRE(toggled["method"] == "session.setOption");
  CHECK(toggled["params"]["value"] == "true");
}

TEST_CASE("acp server: session/fork makes a session.fork and the editor follows the new session", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array({encoded(claude_with(false, true))}))["result"]["sessionId"] == "s-1");
  daemon.editor_calls(2, "session/fork", {{"sessionId", "s-1"}, {"cwd", "/w"}, {"mcpServers", json::array()}});
  const auto fork = daemon.next_call();
  REQUIRE(fork["method"] == "session.fork");
  CHECK(fork["params"] == json{{"sessionId", "s-1"}});
  daemon.answer(fork, json{{"session", encoded(session_info("s-2"))}});
  const auto forked = daemon.editor_gets();
  INFO(forked.dump());
  CHECK(forked["id"] == 2);
  CHECK(forked["result"]["sessionId"] == "s-2");
  CHECK(forked["result"]["modes"]["currentModeId"] == "default");
  // The fork's events reach the editor.
  daemon.event(json{{"seq", 4}, {"type", "message.delta"}, {"ts", 1}, {"sessionId", "s-2"},
                    {"data", {{"turnId", "t-1"}, {"messageId", "m-1"}, {"kind", "text"}, {"text", "from the fork"}}}});
  const auto update = daemon.editor_gets();
  CHECK(update["params"]["sessionId"] == "s-2");
  CHECK(update["params"]["update"]["content"]["text"] == "from the fork");
}

TEST_CASE("acp server: the agent's plan, context usage and commands reach the editor as ACP's own updates", "[acp-server]") {
  ScriptedDaemon daemon;
  REQUIRE(daemon.new_session(1, "s-1", json::array())["result"]["sessionId"] == "s-1");
  daemon.event(json{{"seq", 5}, {"type", "plan.updated"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"turnId", "t-1"}, {"entries", json::parse(R"([{"content":"read","status":"completed","priority":"high"},
                                                                             {"content":"write","status":"in_progress"}])")}}}});
  CHECK(daemon.editor_gets()["params"]["update"] == json::parse(R"({"sessionUpdate":"plan","entries":[
      {"content":"read","priority":"high","status":"completed"},{"content":"write","priority":"medium","status":"in_progress"}]})"));
  daemon.event(json{{"seq", 6}, {"type", "usage.updated"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"turnId", "t-1"}, {"usage", {{"usedTokens", 1200}, {"windowTokens", 200000}, {"costUsd", 0.5}}}}}});
  CHECK(daemon.editor_gets()["params"]["update"] ==
        json::parse(R"({"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.5,"currency":"USD"}})"));
  // Without the window's size (which ACP requires) there is no usage_update: the next update is the commands.
  daemon.event(json{{"seq", 7}, {"type", "usage.updated"}, {"ts", 1}, {"sessionId", "s-1"}, {"data", {{"turnId", "t-1"}, {"usage", {{"usedTokens", 5}}}}}});
  daemon.event(json{{"seq", 8}, {"type", "commands.updated"}, {"ts", 1}, {"sessionId", "s-1"},
                    {"data", {{"commands", json::parse(R"([{"name":"compact","description":"Compress","argumentHint":"what to keep"},{"name":"review"}])")}}}});
  CHECK(daemon.editor_gets()["params"]["update"] == json::parse(R"({"sessionUpdate":"available_commands_update","availableCommands":[
      {"name":"compact","description":"Compress","input":{"hint":"what to keep"}},{"name":"review","description":""}]})"));
}

}  // namespace acp_server_tests
