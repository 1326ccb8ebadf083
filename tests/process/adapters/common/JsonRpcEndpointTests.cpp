#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "common/JsonRpcEndpoint.h"
#include "support/ProcessTestSupport.h"
#include "switchboard/process/ChildProcess.h"

namespace json_rpc_endpoint_tests {

using switchboard::adapters::JsonRpcEndpoint;
using nlohmann::json;

// An endpoint whose writes are kept as parsed messages; `writable` false makes every write fail.
struct Wire {
  std::vector<json> sent;
  bool writable = true;
  std::vector<std::string> notifications;
  std::vector<std::pair<std::string, JsonRpcEndpoint::Reply>> requests;
  std::vector<json> request_ids;  // as on_request was given them
  std::unique_ptr<JsonRpcEndpoint> endpoint;

  explicit Wire(bool serve_requests = true, JsonRpcEndpoint::Options options = {}) {
    JsonRpcEndpoint::Handlers handlers;
    handlers.on_notification = [this](const std::string& method, const json& params) {
      notifications.push_back(method + " " + params.dump());
    };
    if (serve_requests) {
      handlers.on_request = [this](const json& id, const std::string& method, const json&, JsonRpcEndpoint::Reply reply) {
        request_ids.push_back(id);
        requests.emplace_back(method, std::move(reply));
      };
    }
    endpoint = std::make_unique<JsonRpcEndpoint>(
        [this](std::string line) {
          if (!writable) return false;
          sent.push_back(json::parse(line));
          return true;
        },
        std::move(handlers), std::move(options));
  }
};

struct Answers {
  std::vector<JsonRpcEndpoint::Outcome> outcomes;
  JsonRpcEndpoint::ResponseHandler handler() {
    return [this](JsonRpcEndpoint::Outcome outcome) { outcomes.push_back(std::move(outcome)); };
  }
};

const JsonRpcEndpoint::Error& error_of(const JsonRpcEndpoint::Outcome& outcome) {
  REQUIRE(std::holds_alternative<JsonRpcEndpoint::Error>(outcome));
  return std::get<JsonRpcEndpoint::Error>(outcome);
}


TEST_CASE("json-rpc endpoint: requests carry increasing ids and each gets its own response once", "[json-rpc]") {
  Wire wire;
  Answers first;
  Answers second;
  CHECK(wire.endpoint->request("initialize", {{"x", 1}}, first.handler()) == 1);
  CHECK(wire.endpoint->request("thread/start", nullptr, second.handler()) == 2);
  REQUIRE(wire.sent.size() == 2);
  CHECK(wire.sent[0] == json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"}, {"params", {{"x", 1}}}});
  CHECK(wire.sent[1] == json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "thread/start"}});
  CHECK(wire.endpoint->pending() == 2);
  // Answered out of order.
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"no","data":{"why":1}}})");
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","id":1,"result":{"ok":true}})");
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","id":1,"result":{"again":true}})");  // nobody waits any more
  REQUIRE(first.outcomes.size() == 1);
  CHECK(std::get<json>(first.outcomes[0]) == json{{"ok", true}});
  REQUIRE(second.outcomes.size() == 1);
  CHECK(error_of(second.outcomes[0]).code == -32600);
  CHECK(error_of(second.outcomes[0]).message == "no");
  CHECK(error_of(second.outcomes[0]).data == json{{"why", 1}});
  CHECK(wire.endpoint->pending() == 0);
  CHECK(wire.endpoint->stats().unknown_responses == 1);
}

TEST_CASE("json-rpc endpoint: a null result is a result", "[json-rpc]") {
  Wire wire;
  Answers answers;
  wire.endpoint->request("turn/interrupt", json::object(), answers.handler());
  wire.endpoint->feed_line(R"({"id":1,"result":null})");
  REQUIRE(answers.outcomes.size() == 1);
  CHECK(std::get<json>(answers.outcomes[0]).is_null());
}

TEST_CASE("json-rpc endpoint: the agent's requests are answered through the handler's reply, once, with the agent's id", "[json-rpc]") {
  Wire wire;
  // The agent's ids may collide with ours: direction tells them apart.
  Answers ours;
  wire.endpoint->request("mine", nullptr, ours.handler());
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","id":1,"method":"item/approve","params":{"cmd":"ls"}})");
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","id":"s-7","method":"ask","params":{}})");
  REQUIRE(wire.requests.size() == 2);
  CHECK(ours.outcomes.empty());
  CHECK(wire.requests[0].first == "item/approve");
  CHECK(wire.request_ids == std::vector<json>{1, "s-7"});
  wire.requests[1].second(JsonRpcEndpoint::Error{-32000, "declined", nullptr});
  wire.requests[0].second(json{{"decision", "accept"}});
  wire.requests[0].second(json{{"decision", "twice"}});  // a second reply is dropped
  REQUIRE(wire.sent.size() == 3);
  CHECK(wire.sent[1] == json{{"jsonrpc", "2.0"}, {"id", "s-7"}, {"error", {{"code", -32000}, {"message", "declined"}}}});
  CHECK(wire.sent[2] == json{{"jsonrpc", "2.0"}, {"id", 1}, {"result", {{"decision", "accept"}}}});
}

TEST_CASE("json-rpc endpoint: without a request handler the agent's requests get method-not-found", "[json-rpc]") {
  Wire wire(false);
  wire.endpoint->feed_line(R"({"id":0,"method":"mcp/elicit"})");
  REQUIRE(wire.sent.size() == 1);
  CHECK(wire.sent[0]["id"] == 0);
  CHECK(wire.sent[0]["error"]["code"] == JsonRpcEndpoint::kMethodNotFound);
}

TEST_CASE("json-rpc endpoint: notifications go to their handler with their params", "[json-rpc]") {
  Wire wire;
  wire.endpoint->feed_line(R"({"jsonrpc":"2.0","method":"turn/started","params":{"turn":{"id":"t1"}}})");
  wire.endpoint->feed_line(R"({"method":"noParams"})");
  CHECK(wire.notifications == std::vector<std::string>{R"(turn/started {"turn":{"id":"t1"}})", "noParams {}"});
  CHECK(wire.endpoint->notify("initialized", nullptr));
  CHECK(wire.sent.back() == json{{"jsonrpc", "2.0"}, {"method", "initialized"}});
}

TEST_CASE("json-rpc endpoint: malformed lines are counted and skipped, and the conversation goes on", "[json-rpc]") {
  Wire wire;
  Answers answers;
  wire.endpoint->request("a", nullptr, answers.handler());
  for (const char* line : {"not json", "[1,2]", "{\"jsonrpc\":\"2.0\"}", "{\"id\":1}", "{\"id\":{},\"method\":\"m\"}", "\"text\""}) {
    wire.endpoint->feed_line(line);
  }
  wire.endpoint->feed_line("   ");  // blank: not a line worth counting
  CHECK(wire.endpoint->stats().malformed == 6);
  CHECK(wire.endpoint->stats().lines == 6);
  wire.endpoint->feed_line(R"({"id":1,"result":1})");
  CHECK(answers.outcomes.size() == 1);
}

TEST_CASE("json-rpc endpoint: when the agent goes away every pending request fails, and later ones fail at once", "[json-rpc]") {
  Wire wire;
  Answers first;
  Answers second;
  Answers from_handler;
  wire.endpoint->request("a", nullptr, first.handler());
  wire.endpoint->request("b", nullptr, [&](JsonRpcEndpoint::Outcome outcome) {
    second.outcomes.push_back(outcome);
    wire.endpoint->request("c", nullptr, from_handler.handler());  // sent from inside close(): fails at once too
  });
  wire.endpoint->close("codex exited (code 1)");
  REQUIRE(first.outcomes.size() == 1);
  CHECK(error_of(first.outcomes[0]).code == JsonRpcEndpoint::kAgentGone);
  CHECK(error_of(first.outcomes[0]).message == "codex exited (code 1)");
  REQUIRE(second.outcomes.size() == 1);
  REQUIRE(from_handler.outcomes.size() == 1);
  CHECK(error_of(from_handler.outcomes[0]).code == JsonRpcEndpoint::kAgentGone);
  CHECK(wire.endpoint->pending() == 0);
  CHECK(wire.sent.size() == 2);
  CHECK_FALSE(wire.endpoint->notify("late", nullptr));
}

TEST_CASE("json-rpc endpoint: a request that cannot be written fails at once", "[json-rpc]") {
  Wire wire;
  wire.writable = false;
  Answers answers;
  wire.endpoint->request("a", nullptr, answers.handler());
  REQUIRE(answers.outcomes.size() == 1);
  CHECK(error_of(answers.outcomes[0]).code == JsonRpcEndpoint::kWriteFailed);
  CHECK(wire.endpoint->pending() == 0);
}

TEST_CASE("json-rpc endpoint: without the jsonrpc member for agents that do not send it", "[json-rpc]") {
  JsonRpcEndpoint::Options options;
  options.send_jsonrpc_member = false;
  Wire wire(true, options);
  Answers answers;
  wire.endpoint->request("initialize", nullptr, answers.handler());
  CHECK(wire.sent[0] == json{{"id", 1}, {"method", "initialize"}});
}

TEST_CASE("json-rpc endpoint: over a child's stdio, answered requests complete and the child's exit fails the rest", "[json-rpc][process]") {
  namespace process = switchboard::process;
  boost::asio::io_context io;
  // Answers every request whose method is "echo" with its params, ignores the others, and exits at "bye".
  const std::string script =
      "import json, sys\n"
      "for line in sys.stdin:\n"
      "    m = json.loads(line)\n"
      "    if m.get('method') == 'echo':\n"
      "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': m.get('params')}), flush=True)\n"
      "    elif m.get('method') == 'bye':\n"
      "        sys.exit(0)\n";
  process::SpawnSpec spec;
  spec.program = "python3";
  spec.args = {"-c", script};
  std::unique_ptr<process::ChildProcess> child;
  std::unique_ptr<JsonRpcEndpoint> endpoint;
  bool exited = false;
  process::ChildProcess::Handlers handlers;
  handlers.on_stdout_line = [&](std::string_view line) { endpoint->feed_line(line); };
  handlers.on_exit = [&](const process::ExitStatus&) {
    exited = true;
    endpoint->close("the agent exited");
  };
  auto spawned = process::ChildProcess::spawn(io, std::move(spec), std::move(handlers));
  REQUIRE(spawned);
  child = std::move(*spawned);
  endpoint = std::make_unique<JsonRpcEndpoint>([&](std::string line) { return child->write_stdin(line + "\n").has_value(); },
                                               JsonRpcEndpoint::Handlers{});
  Answers echoed;
  Answers ignored;
  endpoint->request("echo", {{"n", 42}}, echoed.handler());
  endpoint->request("ignored", nullptr, ignored.handler());
  REQUIRE(switchboard::testing::run_until(io, [&] { return !echoed.outcomes.empty(); }));
  CHECK(std::get<json>(echoed.outcomes[0]) == json{{"n", 42}});
  CHECK(ignored.outcomes.empty());
  endpoint->notify("bye", nullptr);
  REQUIRE(switchboard::testing::run_until(io, [&] { return exited; }));
  REQUIRE(ignored.outcomes.size() == 1);
  CHECK(error_of(ignored.outcomes[0]).code == JsonRpcEndpoint::kAgentGone);
}

}  // namespace json_rpc_endpoint_tests
