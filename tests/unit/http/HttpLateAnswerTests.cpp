#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "daemon/CoreMethods.h"
#include "engine/Engine.h"
#include "daemon/EngineMethods.h"
#include "http/HttpContext.h"
#include "http/HttpServer.h"
#include "http/SseHub.h"
#include "support/Eventually.h"
#include "support/RawHttpClient.h"
#include "support/ScriptedAdapter.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"

// Calls whose handler answers later (an agent turn, a permission another client answers) over POST /rpc: the
// answer reaches the client whenever it comes, exactly once, alone or inside a batch; a client that leaves
// mid-call does not take the call, the daemon or a descriptor with it.

namespace http_late_answer_tests {

using nlohmann::json;
using switchboard::testing::RawHttpClient;
using switchboard::testing::ScriptedAdapter;
using switchboard::testing::eventually;
namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace p = switchboard::protocol;

const std::string kJson = "Content-Type: application/json";

// The daemon's HTTP side with the real engine in-process, its agent the scripted one: the io_context on a
// thread of its own (the daemon's single reactor), clients on real loopback sockets.
class EngineOverHttp {
 public:
  EngineOverHttp() : m_hub(switchboard::http::SseLimits{}), m_context(m_dispatcher, m_hub) {
    switchboard::daemon::bind_core_methods(m_dispatcher, {1 << 20});
    m_engine = std::make_unique<switchboard::engine::Engine>(
        m_io, m_bus, std::vector<switchboard::adapters::AgentDescriptor>{ScriptedAdapter::descriptor(m_io, control)});
    switchboard::daemon::bind_engine_methods(m_dispatcher, *m_engine);
    m_egress.add_sink(m_hub);
    switchboard::http::HttpServerOptions options;
    options.port = 0;
    options.also_ipv6_loopback = false;
    if (const auto error = m_server.listen(options)) throw std::runtime_error(*error);
    m_context.policy.token = std::string(64, 'a');
    m_context.policy.allowed_hosts = switchboard::http::loopback_hosts(m_server.port());
    m_context.policy.own_origins = switchboard::http::loopback_origins(m_server.port());
    m_server.start();
    m_thread = std::thread([this] { m_io.run(); });
  }
  template <class Work>
  auto on_reactor(Work work) {
    std::packaged_task<decltype(work())()> task(std::move(work));
    auto result = task.get_future();
    asio::post(m_io, [&task] { task(); });
    return result.get();
  }

  ~EngineOverHttp() {
    on_reactor([this] {
      m_server.stop();
      m_hub.stop_all();
      m_engine.reset();  // sessions answer what they still owe; the connections are closed, so it is dropped
      return 0;
    });
    m_work.reset();
    m_thread.join();
    m_egress.remove_sink(m_hub);
  }

  std::uint16_t port() const { return m_server.port(); }
  std::string bearer() const { return "Authorization: Bearer " + std::string(64, 'a'); }
  // A client that can answer permission requests is attached, so requests wait for an answer.
  void attach_answering_client() {
    on_reactor([this] {
      m_bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
      return 0;
    });
  }
  void script(ScriptedAdapter::Script turn) {
    on_reactor([this, turn = std::move(turn)] {
      control->turns.push_back(turn);
      return 0;
    });
  }
  // Lets a Hold step go on; false if no turn is holding.
  bool resume() {
    return on_reactor([this] {
      if (!control->resume) return false;
      auto resume = std::move(control->resume);
      control->resume = nullptr;
      resume();
      return true;
    });
  }
  bool holding() {
    return on_reactor([this] { return static_cast<bool>(control->resume); });
  }
  void set_idle_timeout(std::chrono::milliseconds timeout) {
    on_reactor([this, timeout] {
      m_context.idle_timeout = timeout;
      return 0;
    });
  }
  std::size_t open_connections() {
    return on_reactor([this] { return m_context.connections.size(); });
  }
  std::size_t calls_in_flight() {
    return on_reactor([this] { return m_dispatcher.calls_in_flight(); });
  }
  std::string session_state(const std::string& session) {
    return on_reactor([&] {
      std::string state = "?";  // the session is in memory: the engine answers before returning
      m_engine->get_session(session, [&state](const switchboard::engine::Outcome<p::SessionInfo>& info) {
        if (std::holds_alternative<p::SessionInfo>(info)) state = std::string(p::to_string(std::get<p::SessionInfo>(info).state));
      });
      return state;
    });
  }

  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();

 private:
  asio::io_context m_io{1};
  asio::executor_work_guard<asio::io_context::executor_type> m_work{m_io.get_executor()};
  switchboard::bus::EventBus m_bus;
  switchboard::bus::EventBus::Installation m_installation{m_bus};
  switchboard::bus::Egress m_egress{m_bus};
  switchboard::rpc::Dispatcher m_dispatcher;
  switchboard::http::SseHub m_hub;
  switchboard::http::HttpContext m_context;
  switchboard::http::HttpServer m_server{m_io, m_context};
  std::unique_ptr<switchboard::engine::Engine> m_engine;
  std::thread m_thread;
};

std::string request(const std::string& id, const std::string& method, const json& params) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump();
}

json call(EngineOverHttp& h, const std::string& id, const std::string& method, const json& params) {
  RawHttpClient client(h.port(), 10000);
  const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, request(id, method, params));
  REQUIRE(response.status == 200);
  return json::parse(response.body);
}

std::string create_session(EngineOverHttp& h) {
  const auto created = call(h, "create", "session.create",
                            {{"agent", "scripted"}, {"cwd", fs::temp_directory_path().string()}});
  REQUIRE(created.contains("result"));
  return created.at("result").at("session").at("sessionId");
}

std::size_t open_descriptors() {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    (void)entry;
    ++count;
  }
  return count;
}

TEST_CASE("HTTP: a send that waits through a permission answered by another client gets the turn's result",
          "[http][late]") {
  EngineOverHttp h;
  h.attach_answering_client();
  h.script({ScriptedAdapter::Ask{"Bash", "ls"}, ScriptedAdapter::Message{"listed"}, ScriptedAdapter::End{}});
  const std::string session = create_session(h);

  // A second client watches the events, as a browser console would, to learn the request id.
  RawHttpClient watcher(h.port(), 10000);
  REQUIRE(watcher.send_request("GET", "/events?session=" + session, {h.bearer()}));
  RawHttpClient::Response head;
  REQUIRE(watcher.read_head(head));
  REQUIRE(head.status == 200);

  RawHttpClient sender(h.port(), 10000);
  REQUIRE(sender.send_request("POST", "/rpc", {h.bearer(), kJson}, request("send", "session.send", {{"sessionId", session}, {"text", "list it"}})));

  std::string request_id;
  while (request_id.empty()) {
    const auto frame = watcher.read_frame();
    REQUIRE(frame);
    const auto data = frame->find("data: ");
    if (data == std::string::npos) continue;
    const auto event = json::parse(frame->substr(data + 6));
    if (event.at("type") == "permission.requested") request_id = event.at("data").at("request").at("requestId");
  }
  // The call waits (no answer, connection open) for as long as the permission is open.
  CHECK_FALSE(sender.has_data(1000));
  CHECK(h.session_state(session) == "awaiting_input");

  const auto answered = call(h, "answer", "permission.respond", {{"requestId", request_id}, {"decision", "allow_once"}});
  CAPTURE(answered.dump());
  CHECK(answered.contains("result"));

  const auto response = sender.read_response();
  REQUIRE(response.complete);
  CHECK(response.status == 200);
  const auto result = json::parse(response.body);
  CHECK(result.at("id") == "send");
  CHECK(result.at("result").at("stopReason") == "end_turn");
  CHECK(h.control->permission_answers.size() == 1);
  // Exactly once: nothing else arrives, and the connection goes on serving the next call.
  CHECK_FALSE(sender.has_data(200));
  const auto next = sender.request("POST", "/rpc", {h.bearer(), kJson}, request("after", "ping", json::object()));
  CHECK(next.status == 200);
  CHECK(json::parse(next.body).at("id") == "after");
}

TEST_CASE("HTTP: every method that answers later answers, alone and in batches with immediate ones", "[http][late]") {
  EngineOverHttp h;
  const std::string session = create_session(h);

  SECTION("a send that holds answers when the turn ends, on the same keep-alive connection as before and after") {
    h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::Message{"done"}, ScriptedAdapter::End{}});
    RawHttpClient client(h.port(), 10000);
    CHECK(client.request("POST", "/rpc", {h.bearer(), kJson}, request("before", "ping", json::object())).status == 200);
    REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson}, request("send", "session.send", {{"sessionId", session}, {"text", "hi"}})));
    REQUIRE(eventually([&] { return h.holding(); }));
    CHECK_FALSE(client.has_data(300));
    REQUIRE(h.resume());
    const auto response = client.read_response();
    REQUIRE(response.status == 200);
    CHECK(json::parse(response.body).at("result").at("stopReason") == "end_turn");
    CHECK_FALSE(client.has_data(200));
    const auto after = client.request("POST", "/rpc", {h.bearer(), kJson}, request("after", "ping", json::object()));
    CHECK(json::parse(after.body).at("id") == "after");
  }
  SECTION("a request pipelined behind a late call is answered after it, in order") {
    h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
    RawHttpClient client(h.port(), 10000);
    const std::string host = "Host: 127.0.0.1:" + std::to_string(h.port());
    const auto post = [&](const std::string& body) {
      return "POST /rpc HTTP/1.1\r\n" + host + "\r\n" + h.bearer() + "\r\n" + kJson + "\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body;
    };
    REQUIRE(client.send_raw(post(request("send", "session.send", {{"sessionId", session}, {"text", "hi"}})) +
                            post(request("pipelined", "ping", json::object()))));
    REQUIRE(eventually([&] { return h.holding(); }));
    CHECK_FALSE(client.has_data(300));
    REQUIRE(h.resume());
    const auto first = client.read_response();
    const auto second = client.read_response();
    REQUIRE(first.complete);
    REQUIRE(second.complete);
    CHECK(json::parse(first.body).at("id") == "send");
    CHECK(json::parse(second.body).at("id") == "pipelined");
  }
  SECTION("a batch mixing immediate and late answers comes back whole once the late one is done") {
    h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
    const std::string batch = "[" + request("ping", "ping", json::object()) + "," +
                              request("send", "session.send", {{"sessionId", session}, {"text", "hi"}}) + "," +
                              request("get", "session.get", {{"sessionId", session}}) + "," +
                              R"({"jsonrpc":"2.0","method":"ping"})" + "," +
                              request("nope", "no.such.method", json::object()) + "]";
    RawHttpClient client(h.port(), 10000);
    REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson}, batch));
    REQUIRE(eventually([&] { return h.holding(); }));
    CHECK_FALSE(client.has_data(300));  // the batch answers as one array, so it waits for its slowest member
    REQUIRE(h.resume());
    const auto response = client.read_response();
    REQUIRE(response.status == 200);
    const auto answers = json::parse(response.body);
    REQUIRE(answers.is_array());
    std::multiset<std::string> ids;
    for (const auto& answer : answers) ids.insert(answer.at("id").get<std::string>());
    CHECK(ids == std::multiset<std::string>{"ping", "send", "get", "nope"});
    for (const auto& answer : answers) {
      if (answer.at("id") == "send") CHECK(answer.at("result").at("stopReason") == "end_turn");
    }
    CHECK_FALSE(client.has_data(200));
  }
  SECTION("a batch of late calls only") {
    h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
    const std::string second = create_session(h);
    const std::string batch = "[" + request("a", "session.send", {{"sessionId", session}, {"text", "one"}}) + "," +
                              request("b", "session.send", {{"sessionId", second}, {"text", "two"}}) + "]";
    RawHttpClient client(h.port(), 10000);
    REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson}, batch));
    REQUIRE(eventually([&] { return h.holding(); }));
    REQUIRE(h.resume());
    const auto response = client.read_response();
    REQUIRE(response.status == 200);
    CHECK(json::parse(response.body).size() == 2);
  }
  SECTION("a late call as a notification gets 204 once it is done") {
    h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
    RawHttpClient client(h.port(), 10000);
    REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson},
                                json{{"jsonrpc", "2.0"}, {"method", "session.send"}, {"params", {{"sessionId", session}, {"text", "hi"}}}}.dump()));
    REQUIRE(eventually([&] { return h.holding(); }));
    REQUIRE(h.resume());
    CHECK(client.read_response().status == 204);
  }
  CHECK(eventually([&] { return h.calls_in_flight() == 0; }));
}

TEST_CASE("HTTP: a client that leaves mid-call: the call goes on, its socket is released at once, the daemon serves on",
          "[http][late]") {
  EngineOverHttp h;
  const std::string session = create_session(h);
  h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::Message{"finished anyway"}, ScriptedAdapter::End{}});
  REQUIRE(eventually([&] { return h.open_connections() == 0; }));
  const auto descriptors_before = open_descriptors();
  {
    RawHttpClient client(h.port(), 10000);
    REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson}, request("send", "session.send", {{"sessionId", session}, {"text", "hi"}})));
    REQUIRE(eventually([&] { return h.holding(); }));
    CHECK(h.open_connections() == 1);
  }  // the client closes its end while the turn holds

  // The server side lets go of the socket while the call still runs: no descriptor waits for the turn.
  CHECK(eventually([&] { return h.open_connections() == 0 && open_descriptors() == descriptors_before; }));
  CHECK(h.holding());
  CHECK(h.calls_in_flight() == 1);
  CHECK(h.session_state(session) == "running");

  // The call goes on and completes; its answer has nowhere to go and is dropped.
  REQUIRE(h.resume());
  CHECK(eventually([&] { return h.calls_in_flight() == 0; }));
  CHECK(eventually([&] { return h.session_state(session) == "idle"; }));
  CHECK(open_descriptors() == descriptors_before);

  // The daemon keeps serving, also the same session.
  CHECK(call(h, "ping", "ping", json::object()).contains("result"));
  h.script({ScriptedAdapter::Message{"again"}, ScriptedAdapter::End{}});
  CHECK(call(h, "again", "session.send", {{"sessionId", session}, {"text", "again"}}).at("result").at("stopReason") == "end_turn");
  CHECK(eventually([&] { return h.open_connections() == 0 && open_descriptors() == descriptors_before; }));
}

TEST_CASE("HTTP: a keep-alive connection closes after the idle timeout without a request, never while its call runs",
          "[http][late]") {
  EngineOverHttp h;
  constexpr auto kTimeout = std::chrono::milliseconds(500);
  h.set_idle_timeout(kTimeout);
  const std::string session = create_session(h);
  RawHttpClient client(h.port(), 10000);
  // Requests closer together than the timeout each restart the wait: the connection outlives the timeout.
  for (int i = 0; i < 10; ++i) {  // 10 x 100 ms, twice the timeout
    const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, request("p", "ping", json::object()));
    REQUIRE(response.status == 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // A call that runs three times as long as the timeout is answered on its connection.
  h.script({ScriptedAdapter::Hold{}, ScriptedAdapter::Message{"done"}, ScriptedAdapter::End{}});
  REQUIRE(client.send_request("POST", "/rpc", {h.bearer(), kJson}, request("send", "session.send", {{"sessionId", session}, {"text", "hi"}})));
  REQUIRE(eventually([&] { return h.holding(); }));
  std::this_thread::sleep_for(3 * kTimeout);
  CHECK(h.open_connections() == 1);
  REQUIRE(h.resume());
  const auto answer = client.read_response();
  REQUIRE(answer.complete);
  CHECK(json::parse(answer.body).at("result").at("stopReason") == "end_turn");
  // After the answer the wait starts over: the connection still serves, then closes once quiet for the timeout.
  CHECK(client.request("POST", "/rpc", {h.bearer(), kJson}, request("p", "ping", json::object())).status == 200);
  const auto quiet_since = std::chrono::steady_clock::now();
  CHECK(client.closed_by_server());
  CHECK(std::chrono::steady_clock::now() - quiet_since >= kTimeout - std::chrono::milliseconds(100));
  CHECK(eventually([&] { return h.open_connections() == 0; }));
}

TEST_CASE("HTTP: shutdown closes connections whose calls are still running", "[http][late]") {
  auto h = std::make_unique<EngineOverHttp>();
  const std::string session = create_session(*h);
  h->script({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  RawHttpClient client(h->port(), 10000);
  REQUIRE(client.send_request("POST", "/rpc", {h->bearer(), kJson}, request("send", "session.send", {{"sessionId", session}, {"text", "hi"}})));
  REQUIRE(eventually([&] { return h->holding(); }));
  h.reset();  // stops the server with the call open, then destroys the engine, which answers the call
  CHECK(client.closed_by_server());
}

}  // namespace http_late_answer_tests
