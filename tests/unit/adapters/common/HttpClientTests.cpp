#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include "common/HttpClient.h"
#include "common/SseClient.h"
#include "support/ProcessTestSupport.h"

namespace http_client_tests {

namespace asio = boost::asio;
using asio::ip::tcp;
using switchboard::adapters::HttpClient;
using switchboard::adapters::HttpFailure;
using switchboard::adapters::HttpOutcome;
using switchboard::adapters::HttpRequest;
using switchboard::adapters::HttpResponse;
using switchboard::adapters::SseClient;
using switchboard::adapters::SseEvent;
using switchboard::testing::run_until;

// What the server does with one request: the raw bytes it answers with, written in pieces with a pause between
// them (to show a streamed body arriving in pieces), and whether it closes the connection afterwards.
struct Answer {
  std::vector<std::string> pieces;
  std::chrono::milliseconds pause{0};
  bool close = false;
  bool silent = false;  // read the request, never answer
};

// A scripted HTTP server on 127.0.0.1 and the test's io_context: it reads each request (header and a
// Content-Length body) and answers with what `respond` returns for it.
class ScriptedServer {
 public:
  struct Seen {
    std::string head;  // request line and headers
    std::string body;
  };

  ScriptedServer(asio::io_context& io, std::function<Answer(const Seen&)> respond)
      : m_io(io), m_acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), m_respond(std::move(respond)) {
    accept();
  }

  std::uint16_t port() const { return m_acceptor.local_endpoint().port(); }
  int accepted = 0;
  std::vector<Seen> seen;

 private:
  struct Connection {
    explicit Connection(asio::io_context& io) : socket(io), timer(io) {}
    tcp::socket socket;
    asio::streambuf buffer;
    asio::steady_timer timer;
  };

  void accept() {
    auto connection = std::make_shared<Connection>(m_io);
    m_acceptor.async_accept(connection->socket, [this, connection](const boost::system::error_code& error) {
      if (error) return;
      ++accepted;
      read(connection);
      accept();
    });
  }

  void read(std::shared_ptr<Connection> connection) {
    asio::async_read_until(connection->socket, connection->buffer, "\r\n\r\n",
                           [this, connection](const boost::system::error_code& error, std::size_t size) {
                             if (error) return;
                             Seen request;
                             request.head.resize(size);
                             connection->buffer.sgetn(request.head.data(), static_cast<std::streamsize>(size));
                             std::size_t length = 0;
                             if (const auto at = request.head.find("Content-Length: "); at != std::string::npos) {
                               length = std::stoul(request.head.substr(at + 16));
                             }
                             read_body(connection, std::move(request), length);
                           });
  }

  void read_body(std::shared_ptr<Connection> connection, Seen request, std::size_t length) {
    if (connection->buffer.size() < length) {
      asio::async_read(connection->socket, connection->buffer, asio::transfer_exactly(length - connection->buffer.size()),
                       [this, connection, request, length](const boost::system::error_code& error, std::size_t) {
                         if (!error) read_body(connection, request, length);
                       });
      return;
    }
    request.body.resize(length);
    connection->buffer.sgetn(request.body.data(), static_cast<std::streamsize>(length));
    seen.push_back(request);
    auto answer = std::make_shared<Answer>(m_respond(request));
    // A silent server keeps the connection open (a dropped one would close it: an answer of sorts).
    if (answer->silent) return m_silent.push_back(connection);
    write(connection, answer, 0);
  }

  void write(std::shared_ptr<Connection> connection, std::shared_ptr<Answer> answer, std::size_t piece) {
    if (piece == answer->pieces.size()) {
      if (answer->close) {
        boost::system::error_code ignored;
        connection->socket.shutdown(tcp::socket::shutdown_both, ignored);
        connection->socket.close(ignored);
        return;
      }
      return read(connection);
    }
    asio::async_write(connection->socket, asio::buffer(answer->pieces[piece]),
                      [this, connection, answer, piece](const boost::system::error_code& error, std::size_t) {
                        if (error) return;
                        connection->timer.expires_after(answer->pause);
                        connection->timer.async_wait([this, connection, answer, piece](const boost::system::error_code&) {
                          write(connection, answer, piece + 1);
                        });
                      });
  }

  asio::io_context& m_io;
  tcp::acceptor m_acceptor;
  std::function<Answer(const Seen&)> m_respond;
  std::vector<std::shared_ptr<Connection>> m_silent;
};

Answer json_answer(const std::string& body, bool close = false, unsigned status = 200) {
  return Answer{{"HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + body},
                {},
                close};
}

std::string chunk(const std::string& data) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx", data.size());
  return std::string(size) + "\r\n" + data + "\r\n";
}


TEST_CASE("http client: a JSON request gets its JSON response", "[http-client]") {
  asio::io_context io;
  ScriptedServer server(io, [](const ScriptedServer::Seen& request) {
    return json_answer(nlohmann::json{{"echo", nlohmann::json::parse(request.body)}}.dump());
  });
  HttpClient client(io, "127.0.0.1", server.port());
  std::optional<HttpClient::JsonOutcome> outcome;
  client.send_json(boost::beast::http::verb::post, "/session?x=1", {{"title", "t"}}, [&](auto result) { outcome = std::move(result); });
  REQUIRE(run_until(io, [&] { return outcome.has_value(); }));
  REQUIRE(std::holds_alternative<nlohmann::json>(*outcome));
  CHECK(std::get<nlohmann::json>(*outcome) == nlohmann::json{{"echo", {{"title", "t"}}}});
  REQUIRE(server.seen.size() == 1);
  CHECK(server.seen[0].head.starts_with("POST /session?x=1 HTTP/1.1\r\n"));
  CHECK(server.seen[0].head.find("Content-Type: application/json\r\n") != std::string::npos);
  CHECK(server.seen[0].head.find("Host: 127.0.0.1:" + std::to_string(server.port())) != std::string::npos);
}

TEST_CASE("http client: requests go one at a time, in order, over one kept-alive connection", "[http-client]") {
  asio::io_context io;
  int count = 0;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) { return json_answer(std::to_string(++count)); });
  HttpClient client(io, "127.0.0.1", server.port());
  std::vector<std::string> order;
  for (int i = 0; i < 5; ++i) {
    client.send_json(boost::beast::http::verb::get, "/n/" + std::to_string(i), nullptr, [&, i](auto result) {
      order.push_back(std::to_string(i) + "=" + std::get<nlohmann::json>(result).dump());
    });
  }
  REQUIRE(run_until(io, [&] { return order.size() == 5; }));
  CHECK(order == std::vector<std::string>{"0=1", "1=2", "2=3", "3=4", "4=5"});
  CHECK(server.accepted == 1);
  CHECK(client.connections_opened() == 1);
}

TEST_CASE("http client: a connection the server closed is replaced, and the request is not lost", "[http-client]") {
  asio::io_context io;
  // The first answer claims keep-alive, then the server closes the connection anyway (an idle timeout).
  int count = 0;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    auto answer = json_answer(std::to_string(++count));
    answer.close = count == 1;
    return answer;
  });
  HttpClient client(io, "127.0.0.1", server.port());
  std::vector<nlohmann::json> results;
  const auto get = [&] {
    client.send_json(boost::beast::http::verb::get, "/", nullptr, [&](auto result) {
      REQUIRE(std::holds_alternative<nlohmann::json>(result));
      results.push_back(std::get<nlohmann::json>(result));
    });
  };
  get();
  REQUIRE(run_until(io, [&] { return results.size() == 1; }));
  run_until(io, [] { return false; }, std::chrono::milliseconds(50));  // the close reaches the client's socket
  get();
  REQUIRE(run_until(io, [&] { return results.size() == 2; }));
  CHECK(results == std::vector<nlohmann::json>{1, 2});
  CHECK(server.accepted == 2);
  CHECK(server.seen.size() == 2);  // sent once on the fresh connection, not twice
}

TEST_CASE("http client: Connection: close is honoured with a fresh connection for the next request", "[http-client]") {
  asio::io_context io;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) { return json_answer("true", /*close=*/true); });
  HttpClient client(io, "127.0.0.1", server.port());
  int answered = 0;
  for (int i = 0; i < 3; ++i) {
    client.send_json(boost::beast::http::verb::get, "/", nullptr, [&](auto result) {
      CHECK(std::holds_alternative<nlohmann::json>(result));
      ++answered;
    });
  }
  REQUIRE(run_until(io, [&] { return answered == 3; }));
  CHECK(client.connections_opened() == 3);
}

TEST_CASE("http client: a server that does not answer in time is a timeout, and the next request still works", "[http-client]") {
  asio::io_context io;
  int count = 0;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    if (++count == 1) return Answer{{}, {}, false, /*silent=*/true};
    return json_answer("\"late but fine\"");
  });
  HttpClient client(io, "127.0.0.1", server.port());
  std::optional<HttpClient::JsonOutcome> first;
  std::optional<HttpClient::JsonOutcome> second;
  client.send_json(boost::beast::http::verb::get, "/", nullptr, [&](auto result) { first = std::move(result); },
                   std::chrono::milliseconds(150));
  client.send_json(boost::beast::http::verb::get, "/", nullptr, [&](auto result) { second = std::move(result); });
  REQUIRE(run_until(io, [&] { return second.has_value(); }));
  REQUIRE(std::holds_alternative<HttpFailure>(*first));
  CHECK(std::get<HttpFailure>(*first).timed_out);
  CHECK(std::get<HttpFailure>(*first).message == "no response within 150 ms");
  REQUIRE(std::holds_alternative<nlohmann::json>(*second));
  CHECK(std::get<nlohmann::json>(*second) == "late but fine");
}

TEST_CASE("http client: a status other than 2xx and a body that is not JSON are failures saying so", "[http-client]") {
  asio::io_context io;
  int count = 0;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    return ++count == 1 ? json_answer("{\"error\":\"no such session\"}", false, 404) : json_answer("not json");
  });
  HttpClient client(io, "127.0.0.1", server.port());
  std::vector<std::string> failures;
  for (int i = 0; i < 2; ++i) {
    client.send_json(boost::beast::http::verb::get, "/", nullptr, [&](auto result) {
      REQUIRE(std::holds_alternative<HttpFailure>(result));
      failures.push_back(std::get<HttpFailure>(result).message);
    });
  }
  REQUIRE(run_until(io, [&] { return failures.size() == 2; }));
  CHECK(failures[0] == "HTTP 404: {\"error\":\"no such session\"}");
  CHECK(failures[1] == "the response is not JSON: not json");
}

TEST_CASE("http client: nothing listening is a failure naming the address", "[http-client]") {
  asio::io_context io;
  std::uint16_t port = 0;
  {
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = probe.local_endpoint().port();
  }
  HttpClient client(io, "127.0.0.1", port);
  std::optional<HttpOutcome> outcome;
  client.send(HttpRequest{}, [&](HttpOutcome result) { outcome = std::move(result); });
  REQUIRE(run_until(io, [&] { return outcome.has_value(); }));
  REQUIRE(std::holds_alternative<HttpFailure>(*outcome));
  CHECK(std::get<HttpFailure>(*outcome).message.starts_with("cannot connect to 127.0.0.1:" + std::to_string(port)));
}

TEST_CASE("http client: a client destroyed with requests in flight calls nobody", "[http-client]") {
  asio::io_context io;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) { return Answer{{}, {}, false, true}; });
  bool called = false;
  {
    HttpClient client(io, "127.0.0.1", server.port());
    client.send(HttpRequest{}, [&](HttpOutcome) { called = true; });
    run_until(io, [&] { return !server.seen.empty(); });
  }
  run_until(io, [] { return false; }, std::chrono::milliseconds(50));
  CHECK_FALSE(called);
}

TEST_CASE("sse client: events of a chunked stream arrive as they are written, then the end is reported", "[http-client][sse]") {
  asio::io_context io;
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string stream = ": hello\n\nid: 1\nevent: message.updated\ndata: {\"a\":1}\n\ndata: two\ndata: lines\r\n\r\n";
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    Answer answer;
    answer.pieces.push_back(head);
    // One byte per chunk, each written on its own: the parser sees the stream split everywhere.
    for (const char c : stream) answer.pieces.push_back(chunk(std::string(1, c)));
    answer.pieces.push_back("0\r\n\r\n");
    answer.pause = std::chrono::milliseconds(1);
    return answer;
  });
  SseClient client(io, "127.0.0.1", server.port());
  bool opened = false;
  std::vector<std::string> events;
  std::optional<std::string> closed;
  SseClient::Options options;
  options.target = "/event";
  options.headers.emplace_back("Last-Event-ID", "0");
  client.open(options, {[&] { opened = true; },
                        [&](SseEvent event) { events.push_back(event.type + "|" + event.data + "|" + event.last_event_id); },
                        [&](std::string reason) { closed = std::move(reason); },
                        {}});
  REQUIRE(run_until(io, [&] { return closed.has_value(); }));
  CHECK(opened);
  CHECK(events == std::vector<std::string>{"message.updated|{\"a\":1}|1", "message|two\nlines|1"});
  CHECK(*closed == "the server ended the stream");
  CHECK(client.last_event_id() == "1");
  REQUIRE(server.seen.size() == 1);
  CHECK(server.seen[0].head.starts_with("GET /event HTTP/1.1\r\n"));
  CHECK(server.seen[0].head.find("Accept: text/event-stream\r\n") != std::string::npos);
  CHECK(server.seen[0].head.find("Last-Event-ID: 0\r\n") != std::string::npos);
}

TEST_CASE("sse client: a response that is not an event stream is closed at once, saying what it was", "[http-client][sse]") {
  asio::io_context io;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) { return json_answer("{}", false, 404); });
  SseClient client(io, "127.0.0.1", server.port());
  bool opened = false;
  std::optional<std::string> closed;
  client.open({}, {[&] { opened = true; }, {}, [&](std::string reason) { closed = std::move(reason); }, {}});
  REQUIRE(run_until(io, [&] { return closed.has_value(); }));
  CHECK_FALSE(opened);
  CHECK(*closed == "HTTP 404 application/json is not an event stream");
}

TEST_CASE("sse client: a stream silent for longer than the idle timeout is closed", "[http-client][sse]") {
  asio::io_context io;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    Answer answer;
    answer.pieces = {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: one\n\n"};
    answer.pause = std::chrono::seconds(30);
    return answer;
  });
  SseClient client(io, "127.0.0.1", server.port());
  std::vector<std::string> events;
  std::optional<std::string> closed;
  SseClient::Options options;
  options.idle_timeout = std::chrono::milliseconds(150);
  client.open(options, {{}, [&](SseEvent event) { events.push_back(event.data); }, [&](std::string reason) { closed = std::move(reason); }, {}});
  REQUIRE(run_until(io, [&] { return closed.has_value(); }));
  CHECK(events == std::vector<std::string>{"one"});
  CHECK(*closed == "no data for 150 ms");
}

TEST_CASE("sse client: after close() no callback runs", "[http-client][sse]") {
  asio::io_context io;
  ScriptedServer server(io, [&](const ScriptedServer::Seen&) {
    Answer answer;
    answer.pieces = {"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n", "data: one\n\n", "data: two\n\n"};
    answer.pause = std::chrono::milliseconds(20);
    return answer;
  });
  SseClient client(io, "127.0.0.1", server.port());
  std::vector<std::string> events;
  bool closed = false;
  client.open({}, {{}, [&](SseEvent event) {
                     events.push_back(event.data);
                     client.close();
                   },
                   [&](std::string) { closed = true; }, {}});
  run_until(io, [] { return false; }, std::chrono::milliseconds(200));
  CHECK(events == std::vector<std::string>{"one"});
  CHECK_FALSE(closed);
}

}  // namespace http_client_tests
