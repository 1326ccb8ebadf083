#include "common/HttpClient.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include "common/NativeJson.h"

namespace switchboard::adapters {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// A bound on what a response may hold: a local agent server answering with more is broken.
constexpr std::uint64_t kMaxResponseBody = 64ULL * 1024 * 1024;

}  // namespace

std::string HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (same_name(key, name)) return value;
  }
  return {};
}

// The connection and the queue, shared with the operations in flight so that a client destroyed meanwhile only
// marks it dead: the operations then end without calling anyone.
class HttpClient::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(boost::asio::io_context& io, std::string host, std::uint16_t port)
      : m_host(std::move(host)), m_port(port), m_stream(io) {}

  void send(HttpRequest request, std::function<void(HttpOutcome)> done) {
    m_queue.push_back(Pending{std::move(request), std::move(done)});
    if (!m_busy) next();
  }

  void kill() {
    m_dead = true;
    m_queue.clear();
    beast::error_code ignored;
    m_stream.socket().close(ignored);
  }

  std::uint64_t connections_opened() const { return m_connections; }

 private:
  struct Pending {
    HttpRequest request;
    std::function<void(HttpOutcome)> done;
  };

  void next() {
    if (m_dead || m_queue.empty()) {
      m_busy = false;
      return;
    }
    m_busy = true;
    m_retried = false;
    start();
  }

  void start() {
    const auto& request = m_queue.front().request;
    m_request = http::request<http::string_body>(request.method, request.target, 11);
    m_request.set(http::field::host, m_host + ":" + std::to_string(m_port));
    m_request.set(http::field::user_agent, "switchboard");
    for (const auto& [name, value] : request.headers) m_request.set(name, value);
    if (!request.body.empty() || request.method == http::verb::post || request.method == http::verb::put ||
        request.method == http::verb::patch) {
      if (!request.content_type.empty()) m_request.set(http::field::content_type, request.content_type);
      m_request.body() = request.body;
      m_request.prepare_payload();
    }
    m_request.keep_alive(true);
    m_stream.expires_after(request.timeout);
    if (m_connected) return write(/*reused=*/true);
    connect();
  }

  void connect() {
    beast::error_code not_an_address;
    const auto address = boost::asio::ip::make_address(m_host, not_an_address);
    if (not_an_address) return fail("not an IP address: " + m_host, false);
    m_stream.async_connect(tcp::endpoint(address, m_port), [self = shared_from_this()](const beast::error_code& error) {
      if (self->m_dead) return;
      if (error) return self->fail("cannot connect to " + self->m_host + ":" + std::to_string(self->m_port) + ": " + error.message(),
                                   error == beast::error::timeout);
      self->m_connected = true;
      ++self->m_connections;
      self->write(false);
    });
  }

  void write(bool reused) {
    http::async_write(m_stream, m_request, [self = shared_from_this(), reused](const beast::error_code& error, std::size_t) {
      if (self->m_dead) return;
      if (error) return self->broken(error, reused);
      self->read(reused);
    });
  }

  void read(bool reused) {
    m_buffer.clear();
    m_parser.emplace();
    m_parser->body_limit(kMaxResponseBody);
    http::async_read(m_stream, m_buffer, *m_parser, [self = shared_from_this(), reused](const beast::error_code& error, std::size_t) {
      if (self->m_dead) return;
      if (error) return self->broken(error, reused);
      self->answered();
    });
  }

  // A kept-alive connection the server had closed fails at once (EOF, reset): the request never reached it, so
  // it goes again, once, on a fresh connection.
  void broken(const beast::error_code& error, bool reused) {
    drop_connection();
    if (reused && !m_retried && error != beast::error::timeout) {
      m_retried = true;
      m_stream.expires_after(m_queue.front().request.timeout);
      return connect();
    }
    fail(error == beast::error::timeout ? "no response within " + std::to_string(m_queue.front().request.timeout.count()) + " ms"
                                        : "the request failed: " + error.message(),
         error == beast::error::timeout);
  }

  void answered() {
    auto message = m_parser->release();
    HttpResponse response;
    response.status = message.result_int();
    for (const auto& field : message) response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    response.body = std::move(message.body());
    if (!message.keep_alive()) drop_connection();
    m_stream.expires_never();
    finish(std::move(response));
  }

  void fail(std::string message, bool timed_out) {
    drop_connection();
    finish(HttpFailure{std::move(message), timed_out});
  }

  void finish(HttpOutcome outcome) {
    auto done = std::move(m_queue.front().done);
    m_queue.pop_front();
    // The caller may send the next request, or destroy the client, from its callback.
    auto self = shared_from_this();
    done(std::move(outcome));
    if (!self->m_dead) self->next();
  }

  void drop_connection() {
    beast::error_code ignored;
    m_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    m_stream.socket().close(ignored);
    m_connected = false;
  }

  std::string m_host;
  std::uint16_t m_port;
  beast::tcp_stream m_stream;
  beast::flat_buffer m_buffer;
  http::request<http::string_body> m_request;
  std::optional<http::response_parser<http::string_body>> m_parser;
  std::deque<Pending> m_queue;
  bool m_busy = false;
  bool m_connected = false;
  bool m_retried = false;
  bool m_dead = false;
  std::uint64_t m_connections = 0;
};

HttpClient::HttpClient(boost::asio::io_context& io, std::string host, std::uint16_t port)
    : m_impl(std::make_shared<Impl>(io, std::move(host), port)) {}

HttpClient::~HttpClient() { m_impl->kill(); }

void HttpClient::send(HttpRequest request, std::function<void(HttpOutcome)> done) { m_impl->send(std::move(request), std::move(done)); }

void HttpClient::send_json(http::verb method, std::string target, const nlohmann::json& body, std::function<void(JsonOutcome)> done,
                           std::chrono::milliseconds timeout) {
  HttpRequest request;
  request.method = method;
  request.target = std::move(target);
  request.timeout = timeout;
  request.headers.emplace_back("Accept", "application/json");
  if (!body.is_null()) {
    request.body = native::dump(body);
    request.content_type = "application/json";
  }
  send(std::move(request), [done = std::move(done)](HttpOutcome outcome) {
    if (auto* failure = std::get_if<HttpFailure>(&outcome)) return done(std::move(*failure));
    const auto& response = std::get<HttpResponse>(outcome);
    if (response.status < 200 || response.status > 299) {
      return done(HttpFailure{"HTTP " + std::to_string(response.status) + ": " + response.body.substr(0, 200), false});
    }
    if (response.body.empty()) return done(nlohmann::json(nullptr));
    auto parsed = native::parse_line(response.body);
    if (parsed.is_discarded()) return done(HttpFailure{"the response is not JSON: " + response.body.substr(0, 200), false});
    done(std::move(parsed));
  });
}

std::uint64_t HttpClient::connections_opened() const { return m_impl->connections_opened(); }

}  // namespace switchboard::adapters
