#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/HttpHarness.h"
#include "support/RawHttpClient.h"

namespace http_transport_tests {

using nlohmann::json;
using switchboard::testing::HttpHarness;
using switchboard::testing::RawHttpClient;

const std::string kJson = "Content-Type: application/json";

// Parses "id: N\ndata: {...}" into (seq, event json).
std::pair<std::uint64_t, json> parse_frame(const std::string& frame) {
  REQUIRE(frame.rfind("id: ", 0) == 0);
  const auto newline = frame.find('\n');
  const auto seq = std::stoull(frame.substr(4, newline - 4));
  REQUIRE(frame.compare(newline + 1, 6, "data: ") == 0);
  return {seq, json::parse(frame.substr(newline + 7))};
}

// Opens /events and returns the client after the response head and the retry hint.
std::unique_ptr<RawHttpClient> open_events(HttpHarness& h, const std::string& query = "",
                                           std::vector<std::string> headers = {}, int receive_buffer = 0) {
  auto client = std::make_unique<RawHttpClient>(h.port(), 5000, receive_buffer);
  headers.push_back(h.bearer());
  REQUIRE(client->send_request("GET", "/events" + query, headers));
  RawHttpClient::Response head;
  REQUIRE(client->read_head(head));
  REQUIRE(head.status == 200);
  REQUIRE(head.headers["content-type"] == "text/event-stream");
  REQUIRE(client->read_frame() == std::optional<std::string>("retry: 2000"));
  return client;
}

TEST_CASE("POST /rpc answers through the shared dispatcher", "[http]") {
  HttpHarness h;
  RawHttpClient client(h.port());
  SECTION("single request, then more on the same keep-alive connection") {
    for (int i = 0; i < 3; ++i) {
      const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"ping"})");
      REQUIRE(response.status == 200);
      CHECK(json::parse(response.body).at("id") == i);
    }
  }
  SECTION("batch") {
    const auto response = client.request("POST", "/rpc", {h.bearer(), kJson},
                                         R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"ping"}])");
    REQUIRE(response.status == 200);
    CHECK(json::parse(response.body).size() == 1);
  }
  SECTION("notifications get 204") {
    const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","method":"ping"})");
    CHECK(response.status == 204);
    CHECK(response.body.empty());
  }
  SECTION("errors are JSON-RPC errors with status 200") {
    const auto response = client.request("POST", "/rpc", {h.bearer(), "Content-Type: application/json; charset=utf-8"}, "{nope");
    REQUIRE(response.status == 200);
    CHECK(json::parse(response.body).at("error").at("code") == -32700);
  }
  SECTION("no handshake is needed over HTTP") {
    const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"web"}}})");
    CHECK(json::parse(response.body).at("result").at("protocolVersion") == 1);
  }
}

TEST_CASE("http keep-alive: pipelined requests are answered in order on one connection, each with the full header set",
          "[http]") {
  HttpHarness h;
  const std::string host = "Host: 127.0.0.1:" + std::to_string(h.port()) + "\r\n";
  auto ping = [&](int id, const std::string& version = "HTTP/1.1", const std::string& extra = "") {
    const std::string body = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"ping"})";
    return "POST /rpc " + version + "\r\n" + host + h.bearer() + "\r\n" + kJson + "\r\n" + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  // What every JSON-RPC answer carries, and nothing else (no Set-Cookie, no Connection on HTTP/1.1 keep-alive).
  auto check_headers = [](RawHttpClient::Response& response, const std::optional<std::string>& connection) {
    CHECK(response.headers["server"] == "switchboard");
    CHECK(response.headers["content-type"] == "application/json");
    CHECK(response.headers["cache-control"] == "no-store");
    CHECK(response.headers["x-content-type-options"] == "nosniff");
    CHECK(response.headers["content-length"] == std::to_string(response.body.size()));
    CHECK(response.headers.count("connection") == (connection ? 1u : 0u));
    if (connection) CHECK(response.headers["connection"] == *connection);
    CHECK(response.headers.size() == (connection ? 6u : 5u));
  };

  SECTION("HTTP/1.1: many requests in one write, then more, all on the same connection") {
    RawHttpClient client(h.port());
    for (int round = 0; round < 3; ++round) {
      std::string burst;
      for (int i = 0; i < 5; ++i) burst += ping(round * 10 + i);
      REQUIRE(client.send_raw(burst));
      for (int i = 0; i < 5; ++i) {
        auto response = client.read_response();
        REQUIRE(response.complete);
        CHECK(response.status == 200);
        CHECK(json::parse(response.body).at("id") == round * 10 + i);
        check_headers(response, std::nullopt);
      }
    }
    CHECK_FALSE(client.has_data(100));  // nothing more, and the connection stays open
    auto last = client.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","id":99,"method":"ping"})");
    CHECK(json::parse(last.body).at("id") == 99);
  }
  SECTION("HTTP/1.1 with Connection: close: answered with Connection: close, then closed; what follows is not read") {
    RawHttpClient client(h.port());
    REQUIRE(client.send_raw(ping(1, "HTTP/1.1", "Connection: close\r\n") + ping(2)));
    auto response = client.read_response();
    REQUIRE(response.complete);
    CHECK(json::parse(response.body).at("id") == 1);
    check_headers(response, "close");
    CHECK(client.closed_by_server());
  }
  SECTION("HTTP/1.0 keeps the connection only when asked, and says so") {
    RawHttpClient kept(h.port());
    for (int i = 0; i < 3; ++i) {
      REQUIRE(kept.send_raw(ping(i, "HTTP/1.0", "Connection: keep-alive\r\n")));
      auto response = kept.read_response();
      REQUIRE(response.complete);
      CHECK(json::parse(response.body).at("id") == i);
      check_headers(response, "keep-alive");
    }
    RawHttpClient once(h.port());
    REQUIRE(once.send_raw(ping(7, "HTTP/1.0")));
    auto response = once.read_response();
    REQUIRE(response.complete);
    CHECK(json::parse(response.body).at("id") == 7);
    check_headers(response, std::nullopt);  // HTTP/1.0 closes by default, no header needed
    CHECK(once.closed_by_server());
  }
  SECTION("a notification's 204 and a refusal keep their exact framing between pipelined answers") {
    RawHttpClient client(h.port());
    const std::string note = R"({"jsonrpc":"2.0","method":"ping"})";
    REQUIRE(client.send_raw(ping(1) + "POST /rpc HTTP/1.1\r\n" + host + h.bearer() + "\r\n" + kJson +
                            "\r\nContent-Length: " + std::to_string(note.size()) + "\r\n\r\n" + note + ping(2) +
                            "POST /rpc HTTP/1.1\r\n" + host + "Content-Type: text/plain\r\nContent-Length: 2\r\n\r\n{}"));
    auto first = client.read_response();
    CHECK(json::parse(first.body).at("id") == 1);
    auto nothing = client.read_response();
    CHECK(nothing.status == 204);
    CHECK(nothing.body.empty());
    auto second = client.read_response();
    CHECK(json::parse(second.body).at("id") == 2);
    auto refused = client.read_response();
    CHECK(refused.status == 401);  // the token is checked before the content type
    CHECK(refused.headers["connection"] == "close");
    CHECK(client.closed_by_server());
  }
}

TEST_CASE("HTTP refuses what it must: status codes for bad requests", "[http]") {
  HttpHarness h({}, {}, /*max_body=*/4096);
  SECTION("415 for a wrong content type") {
    RawHttpClient client(h.port());
    CHECK(client.request("POST", "/rpc", {h.bearer(), "Content-Type: text/plain"}, "{}").status == 415);
  }
  SECTION("413 over the body limit") {
    RawHttpClient client(h.port());
    CHECK(client.request("POST", "/rpc", {h.bearer(), kJson}, std::string(5000, ' ')).status == 413);
  }
  SECTION("413 reaches a client that is still sending a large body (no reset before the answer)") {
    RawHttpClient client(h.port());
    CHECK(client.request("POST", "/rpc", {h.bearer(), kJson}, std::string(512 * 1024, ' ')).status == 413);
  }
  SECTION("404 and 405") {
    RawHttpClient a(h.port());
    CHECK(a.request("GET", "/nope", {h.bearer()}).status == 404);
    RawHttpClient b(h.port());
    CHECK(b.request("GET", "/rpc", {h.bearer()}).status == 405);
    RawHttpClient c(h.port());
    CHECK(c.request("DELETE", "/events", {h.bearer()}).status == 405);
  }
  SECTION("400 for malformed HTTP") {
    RawHttpClient client(h.port());
    REQUIRE(client.send_raw("THIS IS NOT HTTP\r\n\r\n"));
    CHECK(client.read_response().status == 400);
  }
  SECTION("431 for oversized headers") {
    RawHttpClient client(h.port());
    CHECK(client.request("GET", "/", {"X-Padding: " + std::string(20000, 'x')}).status == 431);
  }
  SECTION("a half-closed connection is answered and closed, the server goes on") {
    {
      RawHttpClient client(h.port());
      REQUIRE(client.send_raw("POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(h.port()) + "\r\nContent-Length: 100\r\n\r\n{"));
      client.shutdown_write();
      CHECK(client.closed_by_server());
    }
    RawHttpClient after(h.port());
    CHECK(after.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status == 200);
  }
}

TEST_CASE("security checklist: every refusal", "[http][security]") {
  HttpHarness h({}, {"http://localhost:5173"});
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  auto status = [&](const std::string& method, const std::string& target, std::vector<std::string> headers,
                    const std::string& body = "", std::optional<std::string> host = std::nullopt) {
    RawHttpClient client(h.port());
    return client.request(method, target, std::move(headers), body, std::move(host)).status;
  };
  SECTION("1. token required on /rpc and /events, also on loopback") {
    CHECK(status("POST", "/rpc", {kJson}, ping) == 401);
    CHECK(status("POST", "/rpc", {kJson, "Authorization: Bearer " + std::string(64, 'b')}, ping) == 401);
    CHECK(status("GET", "/events", {}) == 401);
    CHECK(status("POST", "/rpc", {kJson, h.bearer()}, ping) == 200);
    CHECK(status("POST", "/rpc?token=" + h.token(), {kJson}, ping) == 200);
    // No cookie carries the token anywhere: not for a POST (CSRF), not for the event stream.
    CHECK(status("POST", "/rpc", {kJson, "Cookie: switchboard_token=" + h.token()}, ping) == 401);
    CHECK(status("GET", "/events", {"Cookie: switchboard_token=" + h.token()}) == 401);
  }
  SECTION("1b. EventSource: the query token opens the stream") {
    RawHttpClient client(h.port());
    REQUIRE(client.send_request("GET", "/events?token=" + h.token(), {}));
    RawHttpClient::Response head;
    REQUIRE(client.read_head(head));
    CHECK(head.status == 200);
  }
  SECTION("3. Host allow-list defeats DNS rebinding") {
    CHECK(status("GET", "/", {}, "", "evil.example:" + std::to_string(h.port())) == 403);
    CHECK(status("POST", "/rpc", {kJson, h.bearer()}, ping, "evil.example:" + std::to_string(h.port())) == 403);
    CHECK(status("GET", "/.well-known/switchboard", {}, "", "evil.example") == 403);
    CHECK(status("GET", "/", {}, "", "localhost:" + std::to_string(h.port())) == 200);
  }
  SECTION("4. Origin: null and foreign origins refused; Origin equal to Host proves nothing") {
    CHECK(status("POST", "/rpc", {kJson, h.bearer(), "Origin: null"}, ping) == 403);
    CHECK(status("POST", "/rpc", {kJson, h.bearer(), "Origin: http://evil.example"}, ping) == 403);
    const std::string rebound = "evil.example:" + std::to_string(h.port());
    CHECK(status("POST", "/rpc", {kJson, h.bearer(), "Origin: http://" + rebound}, ping, rebound) == 403);
    CHECK(status("POST", "/rpc", {kJson, h.bearer(), "Origin: http://127.0.0.1:" + std::to_string(h.port())}, ping) == 200);
  }
  SECTION("5. CORS: explicit allow-list, exact origin echoed, never *; preflight handled") {
    RawHttpClient allowed(h.port());
    auto preflight = allowed.request("OPTIONS", "/rpc", {"Origin: http://localhost:5173",
                                                               "Access-Control-Request-Method: POST"});
    CHECK(preflight.status == 204);
    CHECK(preflight.headers["access-control-allow-origin"] == "http://localhost:5173");
    CHECK(preflight.headers["access-control-allow-headers"].find("Authorization") != std::string::npos);
    RawHttpClient call(h.port());
    auto response = call.request("POST", "/rpc", {kJson, h.bearer(), "Origin: http://localhost:5173"}, ping);
    CHECK(response.status == 200);
    CHECK(response.headers["access-control-allow-origin"] == "http://localhost:5173");
    CHECK(status("OPTIONS", "/rpc", {"Origin: http://evil.example", "Access-Control-Request-Method: POST"}) == 403);
    RawHttpClient plain(h.port());
    CHECK(plain.request("POST", "/rpc", {kJson, h.bearer()}, ping).headers.count("access-control-allow-origin") == 0);
  }
  SECTION("the page and the identity need no token") {
    RawHttpClient page(h.port());
    const auto response = page.request("GET", "/", {});
    CHECK(response.status == 200);
    CHECK(response.headers.at("content-type") == "text/html; charset=utf-8");
    CHECK(response.body.find(h.token()) == std::string::npos);  // the page never embeds the token
    CHECK(status("GET", "/.well-known/switchboard", {}) == 200);
  }
}

TEST_CASE("no response ever sets a cookie, whatever the path, the credentials or the verdict", "[http][security]") {
  // Browsers send a host's cookies to every port of that host: a cookie would give the token to any other local
  // web server. So no answer, to any request, carries Set-Cookie.
  HttpHarness h({}, {"http://localhost:5173"});
  const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  const std::vector<std::string> paths = {"/", "/.well-known/switchboard", "/rpc", "/events", "/nope"};
  const std::vector<std::string> methods = {"GET", "POST", "OPTIONS", "DELETE"};
  const std::vector<std::vector<std::string>> credentials = {
      {}, {h.bearer()}, {"Authorization: Bearer wrong"}, {"Cookie: switchboard_token=" + h.token()}};
  const std::vector<std::string> queries = {"", "?token=" + h.token(), "?token=wrong"};
  const std::vector<std::optional<std::string>> origins = {std::nullopt, "http://localhost:5173", "http://evil.example"};
  int responses = 0;
  for (const auto& path : paths) {
    for (const auto& method : methods) {
      for (const auto& credential : credentials) {
        for (const auto& query : queries) {
          for (const auto& origin : origins) {
            auto headers = credential;
            headers.push_back(kJson);
            if (origin) headers.push_back("Origin: " + *origin);
            RawHttpClient client(h.port());
            REQUIRE(client.send_request(method, path + query, headers, method == "POST" ? ping : ""));
            RawHttpClient::Response response;
            REQUIRE(client.read_head(response));  // SSE streams too: their head is all we need
            CAPTURE(method, path, query, credential, origin.value_or("-"), response.status);
            CHECK(response.headers.count("set-cookie") == 0);
            ++responses;
          }
        }
      }
    }
  }
  CHECK(responses == 5 * 4 * 4 * 3 * 3);
}

TEST_CASE("SSE: reconnect with Last-Event-ID loses nothing and duplicates nothing", "[http][sse]") {
  HttpHarness h;
  auto first = open_events(h);
  REQUIRE(h.sse_clients() == 1);
  h.publish_deltas(500);
  std::uint64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    const auto frame = first->read_frame();
    REQUIRE(frame);
    const auto [seq, event] = parse_frame(*frame);
    REQUIRE(seq == last + 1);
    CHECK(event.at("seq") == seq);
    last = seq;
  }
  first.reset();  // drop mid-stream
  h.publish_deltas(300, "s-1", 500);

  SECTION("header") {
    auto second = open_events(h, "", {"Last-Event-ID: " + std::to_string(last)});
    for (std::uint64_t expected = last + 1; expected <= 800; ++expected) {
      const auto frame = second->read_frame();
      REQUIRE(frame);
      REQUIRE(parse_frame(*frame).first == expected);
      REQUIRE(parse_frame(*frame).second.at("data").at("text") == std::to_string(expected - 1));
    }
    h.publish_deltas(1, "s-1", 800);  // and then the live stream continues
    const auto live = second->read_frame();
    REQUIRE(live);
    CHECK(parse_frame(*live).first == 801);
  }
  SECTION("query parameter") {
    auto second = open_events(h, "?lastEventId=" + std::to_string(last));
    const auto frame = second->read_frame();
    REQUIRE(frame);
    CHECK(parse_frame(*frame).first == last + 1);
  }
}

TEST_CASE("SSE: an explicit gap event when history no longer covers the request", "[http][sse]") {
  switchboard::http::SseLimits limits;
  limits.replay_events = 50;
  HttpHarness h(limits);
  h.publish_deltas(200);
  auto client = open_events(h, "", {"Last-Event-ID: 10"});
  const auto gap = client->read_frame();
  REQUIRE(gap);
  CHECK(*gap == "event: gap\ndata: {\"from\":11,\"to\":150}");
  for (std::uint64_t expected = 151; expected <= 200; ++expected) {
    const auto frame = client->read_frame();
    REQUIRE(frame);
    REQUIRE(parse_frame(*frame).first == expected);
  }
}

TEST_CASE("SSE: session filter keeps that session and global events", "[http][sse]") {
  HttpHarness h;
  auto client = open_events(h, "?session=s-2");
  h.publish_deltas(3, "s-1");
  h.publish_deltas(2, "s-2", 100);
  h.on_reactor([] {
    switchboard::bus::EventBus::the().publish_global(
        switchboard::protocol::DaemonShutdownEvent{switchboard::protocol::DaemonShutdownEventReason::Request});
  });
  std::vector<std::uint64_t> seqs;
  for (int i = 0; i < 3; ++i) {
    const auto frame = client->read_frame();
    REQUIRE(frame);
    seqs.push_back(parse_frame(*frame).first);
  }
  CHECK(seqs == std::vector<std::uint64_t>{4, 5, 6});
}

TEST_CASE("SSE: heartbeat comments on a quiet stream", "[http][sse]") {
  switchboard::http::SseLimits limits;
  limits.heartbeat = std::chrono::milliseconds(50);
  HttpHarness h(limits);
  auto client = open_events(h);
  CHECK(client->read_frame() == std::optional<std::string>(": ping"));
}

TEST_CASE("SSE: a slow client is cut off while a fast one receives everything", "[http][sse]") {
  switchboard::http::SseLimits limits;
  limits.client_queue_frames = 256;
  limits.replay_events = 100000;
  HttpHarness h(limits);
  auto slow = open_events(h, "", {}, /*receive_buffer=*/4096);  // never reads again
  auto fast = open_events(h);
  constexpr int kEvents = 100000;  // well past what kernel socket buffers absorb
  std::atomic<int> fast_received{0};
  std::atomic<bool> fast_in_order{true};
  std::thread reader([&] {
    for (std::uint64_t expected = 1; expected <= kEvents; ++expected) {
      const auto frame = fast->read_frame();
      if (!frame || frame->rfind("id: " + std::to_string(expected) + "\n", 0) != 0) {
        fast_in_order = false;
        return;
      }
      ++fast_received;
    }
  });
  // The fast client keeps up: it is never more than 150 events (< the 256-frame queue) behind the publisher.
  for (int published = 0; published < kEvents && fast_in_order; published += 50) {
    while (published - fast_received > 100 && fast_in_order) std::this_thread::sleep_for(std::chrono::microseconds(200));
    h.publish_deltas(50, "s-1", published);
  }
  reader.join();
  CHECK(fast_in_order);
  CHECK(fast_received == kEvents);
  CHECK(h.sse_clients() == 1);  // the slow one was disconnected, the fast one is still there
  // The slow client sees its stream end, then catches up from history with Last-Event-ID.
  std::uint64_t last_seen = 0;
  while (const auto frame = slow->read_frame()) {
    if (frame->rfind("id: ", 0) == 0) last_seen = parse_frame(*frame).first;
  }
  CHECK(last_seen < kEvents);
  auto again = open_events(h, "", {"Last-Event-ID: " + std::to_string(last_seen)});
  const auto next = again->read_frame();
  REQUIRE(next);
  CHECK(parse_frame(*next).first == last_seen + 1);
}

TEST_CASE("a thousand idle connections stay bounded and the server keeps answering", "[http]") {
  HttpHarness h;
  std::vector<std::unique_ptr<RawHttpClient>> idle;
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(std::make_unique<RawHttpClient>(h.port()));
    REQUIRE(idle.back()->connected());
  }
  RawHttpClient client(h.port());
  const auto response = client.request("POST", "/rpc", {h.bearer(), kJson}, R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  CHECK(response.status == 200);
}

}  // namespace http_transport_tests
