#include "http/HttpConnection.h"

#include <charconv>

#include <boost/beast/http/read.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "http/SseSubscriber.h"
#include "http/WebAssets.h"
#include "http/WireResponse.h"
#include "switchboard/rpc/RpcPeer.h"

namespace switchboard::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

// The dispatcher's view of one POST /rpc: its response becomes the HTTP response body. It owns the connection
// until that one answer, however late it comes (a turn may take minutes), then lets go: a handler that keeps the
// peer (its CallContext) does not keep the connection.
class HttpRpcPeer : public rpc::RpcPeer {
 public:
  explicit HttpRpcPeer(std::shared_ptr<HttpConnection> connection) : m_connection(std::move(connection)) {}
  void send_response(std::string message) override { deliver(std::move(message)); }
  void send_nothing() override { deliver(std::nullopt); }
  bool requires_initialize() const override { return false; }  // authenticated per request, no handshake
  protocol::Transport transport() const override { return protocol::Transport::Http; }

 private:
  void deliver(std::optional<std::string> body) {
    if (auto connection = std::exchange(m_connection, nullptr)) connection->finish_rpc(std::move(body));
  }
  std::shared_ptr<HttpConnection> m_connection;
};

// How much a client may pipeline behind a running call before we stop reading (and so stop noticing EOF):
// enough for a next request's head and a modest body; beyond it TCP flow control holds the client back.
constexpr std::size_t kMaxPipelinedBytes = 64 * 1024;

// Output buffer capacity a connection keeps between answers; a larger one is released after its write.
constexpr std::size_t kKeptOutputCapacity = 16 * 1024;

std::optional<std::string_view> header(const HttpConnection::Request& request, bhttp::field field) {
  const auto it = request.find(field);
  if (it == request.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

std::optional<std::string_view> header(const HttpConnection::Request& request, std::string_view name) {
  const auto it = request.find(boost::beast::string_view(name.data(), name.size()));
  if (it == request.end()) return std::nullopt;
  return std::string_view(it->value().data(), it->value().size());
}

bool is_json_content_type(std::string_view value) {
  const auto semicolon = value.find(';');
  auto media = value.substr(0, semicolon);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  return equals_ignoring_ascii_case(media, "application/json");
}

std::optional<std::uint64_t> parse_seq(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

HttpConnection::HttpConnection(boost::asio::ip::tcp::socket socket, HttpContext& context)
    : m_stream(std::move(socket)), m_context(context), m_deadline_timer(m_stream.get_executor()) {
  m_context.connections.insert(this);
  boost::system::error_code error;
  const auto endpoint = m_stream.socket().remote_endpoint(error);
  m_remote = error ? "?" : endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
}

HttpConnection::~HttpConnection() { unregister(); }

void HttpConnection::unregister() {
  if (m_registered) m_context.connections.erase(this);
  m_registered = false;
}

void HttpConnection::close() {
  if (!m_registered) return;  // handed to SSE, or already closed
  // From here on nothing touches m_context: a late answer may arrive after the server (and context) are gone.
  unregister();
  m_closed = true;
  clear_deadline();
  m_deadline_timer.cancel();  // a pending wait would hold up the io_context's end on shutdown
  boost::system::error_code ignored;
  m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
  m_stream.socket().close(ignored);
}

void HttpConnection::start() { read_request(); }

// Beast's stream timeout would arm (and so reprogram the kernel's timer) on every read and every write: two
// system calls per request. Here a request only moves m_deadline; the timer, armed at most once per
// idle_timeout, looks at it when it fires and waits again for what is left.
void HttpConnection::restart_deadline() {
  m_deadline = std::chrono::steady_clock::now() + m_context.idle_timeout;
  if (!m_deadline_timer_pending) arm_deadline_timer();
}

void HttpConnection::clear_deadline() { m_deadline = std::chrono::steady_clock::time_point::max(); }

void HttpConnection::arm_deadline_timer() {
  m_deadline_timer_pending = true;
  m_deadline_timer.expires_at(m_deadline);
  // A weak reference: a pending deadline must not keep a connection whose client has left alive for 30 s.
  m_deadline_timer.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    if (const auto self = weak.lock()) self->on_deadline_timer(error);
  });
}

void HttpConnection::on_deadline_timer(const boost::system::error_code& error) {
  m_deadline_timer_pending = false;
  if (error || m_closed || !m_registered) return;  // cancelled, closed, or handed to SSE
  if (m_deadline == std::chrono::steady_clock::time_point::max()) return;  // a call runs; restarted after it
  if (std::chrono::steady_clock::now() < m_deadline) return arm_deadline_timer();
  // Expired. As Beast's timeout did: close the socket, so the pending read or write ends with an error and the
  // connection goes away through its usual path.
  spdlog::debug("http: closing {}: idle for {} ms", m_remote, m_context.idle_timeout.count());
  boost::system::error_code ignored;
  m_stream.socket().close(ignored);
}

void HttpConnection::read_request() {
  m_parser.emplace();
  m_parser->header_limit(static_cast<std::uint32_t>(m_context.max_header_bytes));
  m_parser->body_limit(m_context.max_body_bytes);
  restart_deadline();
  bhttp::async_read(m_stream, m_buffer, *m_parser,
                    [self = shared_from_this()](const boost::system::error_code& error, std::size_t) { self->on_read(error); });
}

void HttpConnection::on_read(const boost::system::error_code& error) {
  if (error == bhttp::error::end_of_stream || error == beast::error::timeout || error == boost::asio::error::eof ||
      error == boost::asio::error::connection_reset || error == boost::asio::error::operation_aborted) {
    boost::system::error_code ignored;
    m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
    return;
  }
  m_keep_alive = false;
  m_cors_origin.reset();
  if (error == bhttp::error::body_limit) return refuse(bhttp::status::payload_too_large, "request body too large");
  if (error == bhttp::error::header_limit) return refuse(bhttp::status::request_header_fields_too_large, "headers too large");
  if (error) {
    spdlog::debug("http: bad request from {}: {}", m_remote, error.message());
    return refuse(bhttp::status::bad_request, "malformed HTTP request");
  }
  auto request = m_parser->release();
  m_keep_alive = request.keep_alive();
  m_version = request.version();
  handle(request);
}

// append_plain_response() writes these same fields without building the message (send_plain); a field added
// here must be added there too, or HttpWireResponseTests fails.
HttpConnection::Response HttpConnection::make_response(bhttp::status status, std::string body, std::string_view content_type) {
  Response response{status, m_version};
  response.set(bhttp::field::server, "switchboard");
  response.set(bhttp::field::content_type, content_type);
  response.set(bhttp::field::cache_control, "no-store");
  response.set("X-Content-Type-Options", "nosniff");
  if (m_cors_origin) {
    response.set(bhttp::field::access_control_allow_origin, *m_cors_origin);
    response.set(bhttp::field::vary, "Origin");
  }
  response.body() = std::move(body);
  response.keep_alive(m_keep_alive);
  response.prepare_payload();
  return response;
}

void HttpConnection::refuse(bhttp::status status, std::string_view why) {
  // Refusals close the connection: the client misbehaved or is not who it should be.
  m_keep_alive = false;
  send(make_response(status, std::string(why) + "\n", "text/plain; charset=utf-8"), /*close_after=*/true);
}

void HttpConnection::send(const Response& response, bool close_after) {
  // One request is answered at a time (the next is read only after this write completes), so m_out is free.
  m_out.clear();
  append_wire_bytes(response, m_out);
  write_out(!close_after && response.keep_alive());
}

void HttpConnection::send_plain(bhttp::status status, std::string_view body, std::string_view content_type) {
  m_out.clear();
  append_plain_response({status, m_version, m_keep_alive, content_type, m_cors_origin, body}, m_out);
  write_out(m_keep_alive);
}

void HttpConnection::write_out(bool keep) {
  restart_deadline();
  boost::asio::async_write(m_stream, boost::asio::buffer(m_out), [self = shared_from_this(), keep](const boost::system::error_code& error, std::size_t) {
    // A connection keeps its buffer for the next answer, unless this one was large (an agent history, a batch).
    if (self->m_out.capacity() > kKeptOutputCapacity) std::string().swap(self->m_out);
    if (error) {
      boost::system::error_code ignored;
      self->m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
      return;
    }
    self->after_response(keep);
  });
}

void HttpConnection::after_response(bool keep) {
  if (m_watching) {
    // The departure watch of the call just answered still has a read outstanding; end it first (a socket takes
    // one read at a time). Whatever it read is pipelined input and stays in m_buffer.
    m_after_watch = keep ? AfterWatch::ReadNext : AfterWatch::Linger;
    boost::system::error_code ignored;
    m_stream.socket().cancel(ignored);
    return;
  }
  if (!keep) return linger_and_close();
  read_request();
}

void HttpConnection::linger_and_close() {
  // Closing a socket that still has unread input makes TCP send a reset, and the client may then lose the
  // response we just wrote (a 413 for a body it is still sending, say). So: stop sending, read and discard what
  // the client still sends for a short while, then close.
  boost::system::error_code ignored;
  m_stream.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
  clear_deadline();  // this short wait is the stream's own
  m_stream.expires_after(std::chrono::seconds(2));
  discard_input(0);
}

void HttpConnection::discard_input(std::size_t discarded) {
  constexpr std::size_t kMaxDiscard = 1024 * 1024;
  m_buffer.consume(m_buffer.size());
  m_stream.async_read_some(m_buffer.prepare(16 * 1024), [self = shared_from_this(), discarded](const boost::system::error_code& error, std::size_t n) {
    self->m_buffer.commit(n);
    if (error || discarded + n > kMaxDiscard) {
      boost::system::error_code ignored;
      self->m_stream.socket().close(ignored);
      return;
    }
    self->discard_input(discarded + n);
  });
}

void HttpConnection::handle(Request& request) {
  const std::string_view target(request.target().data(), request.target().size());
  const auto path = target_path(target);
  // Checked first: redact_target() copies the target, which is not worth doing per request for a discarded line.
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("http: {} {} from {}", std::string_view(request.method_string().data(), request.method_string().size()),
                  redact_target(target), m_remote);
  }

  // 1. DNS rebinding: the Host must be one of ours, on every path.
  if (!host_allowed(m_context.policy, header(request, bhttp::field::host).value_or(""))) {
    return refuse(bhttp::status::forbidden, "host not allowed");
  }
  // 2. Cross-site requests: an Origin, when present, must be ours or on the allow-list. "null" never is.
  const auto origin = header(request, bhttp::field::origin);
  switch (check_origin(m_context.policy, origin)) {
    case OriginVerdict::Refused: return refuse(bhttp::status::forbidden, "origin not allowed");
    case OriginVerdict::CorsAllowed: m_cors_origin = std::string(*origin); break;
    case OriginVerdict::NoOrigin:
    case OriginVerdict::SameDaemon: break;
  }

  if (request.method() == bhttp::verb::options) {
    if (!m_cors_origin) return refuse(bhttp::status::forbidden, "no CORS for this origin");
    auto response = make_response(bhttp::status::no_content, "", "text/plain");
    response.set(bhttp::field::access_control_allow_methods, "GET, POST, OPTIONS");
    response.set(bhttp::field::access_control_allow_headers, "Authorization, Content-Type, Last-Event-ID");
    response.set(bhttp::field::access_control_max_age, "600");
    return send(std::move(response));
  }

  // Unauthenticated paths.
  if (path == kIdentityPath) {
    if (request.method() != bhttp::verb::get) return refuse(bhttp::status::method_not_allowed, "use GET");
    return send_plain(bhttp::status::ok, m_context.identity_json, "application/json");
  }
  // The console's files are public (they hold no secret; the page takes the token from its URL fragment).
  if (const auto asset = find_web_asset(path)) {
    if (request.method() != bhttp::verb::get) return refuse(bhttp::status::method_not_allowed, "use GET");
    auto response = make_response(bhttp::status::ok, std::string(asset->bytes), asset->content_type);
    response.set("Content-Security-Policy", kConsoleContentSecurityPolicy);
    response.set("Referrer-Policy", "no-referrer");
    response.set("X-Frame-Options", "DENY");  // for browsers that predate frame-ancestors
    return send(std::move(response));
  }
  if (path != "/rpc" && path != "/events") return refuse(bhttp::status::not_found, "no such path");

  // 3. The token, on everything else, in the Authorization header or the query (EventSource cannot set headers).
  // Never a cookie: browsers send a host's cookies to every port of it, so any other local server would receive
  // the token.
  const bool is_events = path == "/events";
  const PresentedCredentials credentials{header(request, bhttp::field::authorization), query_parameter(target, "token")};
  if (!token_accepted(m_context.policy, credentials)) return refuse(bhttp::status::unauthorized, "missing or wrong token");

  if (is_events) {
    if (request.method() != bhttp::verb::get) return refuse(bhttp::status::method_not_allowed, "use GET");
    return handle_events(request, target);
  }
  if (request.method() != bhttp::verb::post) return refuse(bhttp::status::method_not_allowed, "use POST");
  handle_rpc(request);
}

void HttpConnection::handle_rpc(Request& request) {
  const auto content_type = header(request, bhttp::field::content_type);
  if (!content_type || !is_json_content_type(*content_type)) {
    return refuse(bhttp::status::unsupported_media_type, "Content-Type must be application/json");
  }
  // A call may run for minutes (a whole agent turn): no deadline while the dispatcher works on it.
  clear_deadline();
  m_call_running = true;
  m_context.dispatcher.handle_message(request.body(), std::make_shared<HttpRpcPeer>(shared_from_this()));
  // Answered already (most calls are), or the answer comes later: then watch the client while we wait.
  if (m_call_running && !m_closed) watch_for_departure();
}

void HttpConnection::finish_rpc(std::optional<std::string> body) {
  m_call_running = false;
  if (m_closed) {
    spdlog::debug("http: the answer to a call from {} is dropped: the connection is closed", m_remote);
    return;
  }
  if (!body) return send_plain(bhttp::status::no_content, "", "application/json");
  send_plain(bhttp::status::ok, *body, "application/json");
}

void HttpConnection::watch_for_departure() {
  if (m_buffer.size() >= kMaxPipelinedBytes) return;  // the client is held back by TCP now; nothing to notice
  m_watching = true;
  m_stream.async_read_some(m_buffer.prepare(kMaxPipelinedBytes - m_buffer.size()),
                           [self = shared_from_this()](const boost::system::error_code& error, std::size_t n) {
                             self->on_watch(error, n);
                           });
}

void HttpConnection::on_watch(const boost::system::error_code& error, std::size_t n) {
  m_watching = false;
  if (m_closed) return;
  m_buffer.commit(n);  // the start of a pipelined request: parsed after this call's answer
  if (m_call_running) {
    if (error) return on_client_gone(error);
    return watch_for_departure();
  }
  // The call was answered meanwhile and its response written; go on as after_response() was told to. A real
  // error (not our cancel) shows up again on the next read, which handles it as usual.
  switch (std::exchange(m_after_watch, AfterWatch::Nothing)) {
    case AfterWatch::ReadNext: return read_request();
    case AfterWatch::Linger: return linger_and_close();
    case AfterWatch::Nothing: return;  // the response is still being written; after_response() follows
  }
}

void HttpConnection::on_client_gone(const boost::system::error_code& error) {
  // The client closed (or reset) the connection while its call runs. The call goes on (its effects stand; a
  // client that wants the outcome reads the events or asks again), its answer will be dropped, and the socket
  // and buffers go now: a departed client must not hold a descriptor for the minutes a turn may take.
  spdlog::debug("http: {} left while its call runs ({}); the call goes on, its answer will be dropped", m_remote,
                error.message());
  close();
  m_buffer.clear();
  m_buffer.shrink_to_fit();
  m_parser.reset();
}

void HttpConnection::handle_events(Request& request, std::string_view target) {
  std::optional<std::uint64_t> last_event_id;
  if (const auto value = header(request, std::string_view("Last-Event-ID"))) {
    last_event_id = parse_seq(*value);
    if (!last_event_id) return refuse(bhttp::status::bad_request, "Last-Event-ID must be an event seq");
  } else if (const auto query = query_parameter(target, "lastEventId")) {
    last_event_id = parse_seq(*query);
    if (!last_event_id) return refuse(bhttp::status::bad_request, "lastEventId must be an event seq");
  }
  std::optional<std::string> session_filter;
  if (const auto session = query_parameter(target, "session")) session_filter = std::string(*session);

  std::string head = "HTTP/1.1 200 OK\r\nServer: switchboard\r\nContent-Type: text/event-stream\r\n"
                     "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\nConnection: keep-alive\r\n";
  if (m_cors_origin) head += "Access-Control-Allow-Origin: " + *m_cors_origin + "\r\nVary: Origin\r\n";
  head += "\r\n";

  unregister();  // from now on the hub owns the connection
  clear_deadline();
  m_deadline_timer.cancel();
  auto sse = std::make_shared<SseSubscriber>(std::move(m_stream), m_context.hub, std::move(session_filter), m_remote);
  sse->start(std::move(head), last_event_id);
}

}  // namespace switchboard::http
