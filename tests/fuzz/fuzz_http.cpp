// libFuzzer target for the HTTP request path: bytes -> a real connected socket -> HttpConnection (Beast parser,
// limits, the security checks, routing) -> Dispatcher with the real core methods / SseSubscriber -> bytes back.
//
// Per input: a socketpair; one end becomes the session's tcp::socket (remote_endpoint fails on it, which the
// session tolerates), the other is the client. The input is written to the client end in two or three pieces cut
// at fractions chosen by the first byte's nibbles (so requests straddle reads), with the io_context polled
// until quiet after each piece; then the client half-closes (SHUT_WR), everything the server wrote is read back
// and checked, the client end is closed and the io_context polled again. Polling (not run_for) means timers
// never fire, so a run is fast and repeatable; a stuck session shows up as a leak check failing instead.
// FUZZ_HTTP_VERBOSE=1 prints what the server wrote (when reproducing a crash).
//
// Oracles (a violation traps):
//   - the output is a sequence of complete HTTP/1.x responses: status line `HTTP/1.1 NNN reason` (or HTTP/1.0:
//     Beast answers a 1.0 request in kind and refuses other versions), a known status (never 5xx), headers, no
//     Transfer-Encoding, at most one Content-Length, a body of exactly Content-Length bytes (none for 204);
//     nothing follows a response that closes the connection, and every refusal (4xx) closes it;
//   - or, last, an SSE stream: status 200, `Content-Type: text/event-stream`, then `retry: 2000` and whole frames
//     (`id: N` + one `data:` line of JSON whose "seq" is N, strictly increasing ids of published events;
//     `event: gap` first if at all, data {"from","to"}, followed only by ids past `to`; `: ping`);
//   - every 200 application/json body parses as JSON (a JSON-RPC response: an object with "jsonrpc":"2.0" or a
//     non-empty array of them, unless it is the identity document);
//   - security: no answer but 400/403/413/431 unless an allowed Host value occurs in the input; no RPC answer
//     (application/json other than the identity document) and no event stream unless the token occurs in the
//     input; Access-Control-Allow-Origin only ever names the allow-listed origin; no Set-Cookie, ever (a cookie
//     would reach every server on the host);
//   - no leak: after the client end is closed, the connection object is gone, `context.connections` is empty, the hub
//     has no client, no RPC call is in flight, the server's descriptor is closed and the io_context has no
//     outstanding work (no stray timer or operation);
//   - report_bug() traps.

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "daemon/CoreMethods.h"
#include "http/HttpContext.h"
#include "http/HttpSecurity.h"
#include "http/HttpConnection.h"
#include "http/SseHub.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/support/Bug.h"

namespace {

using nlohmann::json;

constexpr unsigned short kPort = 7337;
constexpr std::string_view kToken = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
constexpr std::string_view kCorsOrigin = "https://app.example.com";
constexpr std::string_view kIdentity = R"({"name":"switchboard","version":"fuzz","protocolVersion":1})";
constexpr std::size_t kMaxBodyBytes = 4096;
constexpr std::size_t kMaxHeaderBytes = 2048;

[[noreturn]] void fail() { __builtin_trap(); }

#define FUZZ_CHECK(condition) \
  do {                        \
    if (!(condition)) fail(); \
  } while (false)

// Process-wide state, built once: initialize publishes on the installed bus, and only one egress may exist.
// The hub is an egress sink with a small replay buffer, filled once at start-up (kPublished events for two sessions,
// of which the last 16 are retained), so GET /events with Last-Event-ID / ?lastEventId / ?session= exercises
// replay, the gap notice and the session filter. (Requests may publish more, e.g. initialize's client.attached,
// which is internal today; the checks below do not assume the replay buffer is fixed.)
constexpr int kPublished = 24;

struct World {
  World() : hub(limits()), context(dispatcher, hub) {}
  static switchboard::http::SseLimits limits() {
    switchboard::http::SseLimits limits;
    limits.replay_events = 16;
    return limits;
  }

  switchboard::bus::EventBus bus;
  switchboard::bus::EventBus::Installation installation{bus};
  switchboard::bus::Egress egress{bus};
  switchboard::rpc::Dispatcher dispatcher;
  boost::asio::io_context io{1};
  switchboard::http::SseHub hub;
  switchboard::http::HttpContext context;
  std::vector<std::string> lowered_hosts;
};

World* g_world = nullptr;
bool g_verbose = false;  // FUZZ_HTTP_VERBOSE

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

// ---------------------------------------------------------------------------------------------------------------
// The client end of the connection.

struct Client {
  int fd = -1;
  std::string received;
  bool stalled = false;  // the server stopped taking input (closed, or not reading): the rest is dropped

  // Reads whatever is available; true if anything was.
  bool drain() {
    if (fd < 0) return false;
    bool got = false;
    char buffer[65536];
    for (;;) {
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        received.append(buffer, static_cast<std::size_t>(n));
        got = true;
        continue;
      }
      return got;  // 0: EOF; -1: EAGAIN, or ECONNRESET after the server closed with input unread
    }
  }
};

// Runs ready handlers and reads the server's output until neither makes progress twice in a row. Timers never
// fire here (poll does not wait), so this ends as soon as the session waits for input or has finished.
void pump(Client& client) {
  auto& io = g_world->io;
  std::size_t rounds = 0;
  for (int quiet = 0; quiet < 2;) {
    FUZZ_CHECK(++rounds < 1000000);  // a livelock, not a wait for input
    if (io.stopped()) io.restart();
    const std::size_t ran = io.poll();
    const bool got = client.drain();
    quiet = (ran == 0 && !got) ? quiet + 1 : 0;
  }
}

// Writes `piece` as far as the socket takes it, polling the server when the buffer is full.
void write_piece(Client& client, std::string_view piece) {
  while (!piece.empty() && !client.stalled) {
    const ssize_t n = ::send(client.fd, piece.data(), piece.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      piece.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pump(client);
      const ssize_t retry = ::send(client.fd, piece.data(), piece.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (retry > 0) {
        piece.remove_prefix(static_cast<std::size_t>(retry));
        continue;
      }
    }
    client.stalled = true;  // EPIPE/ECONNRESET (the server closed), or it does not read any more
  }
  pump(client);
}

// ---------------------------------------------------------------------------------------------------------------
// Checking the output.

struct Facts {
  bool has_host = false;          // an allowed Host value occurs somewhere in the input
  bool has_token = false;         // the token occurs somewhere in the input
};

bool known_status(unsigned status) {
  switch (status) {
    case 200: case 204: case 400: case 401: case 403: case 404: case 405: case 413: case 415: case 431: return true;
    default: return false;
  }
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return contains("!#$%&'*+-.^_`|~", std::string_view(&c, 1));
}

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  std::uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_rpc_response_object(const json& value) {
  if (!value.is_object()) return false;
  const auto version = value.find("jsonrpc");
  return version != value.end() && version->is_string() && *version == "2.0" && value.contains("id") &&
         (value.contains("result") != value.contains("error"));
}

// After the SSE response head: the retry hint, then whole frames.
void check_sse(std::string_view stream) {
  constexpr std::string_view kRetry = "retry: 2000\n\n";
  FUZZ_CHECK(stream.substr(0, kRetry.size()) == kRetry);
  stream.remove_prefix(kRetry.size());
  std::optional<std::uint64_t> last_id;
  std::optional<std::uint64_t> expected_next;  // after a gap notice: the first id after it is past its end
  while (!stream.empty()) {
    const auto end = stream.find("\n\n");
    FUZZ_CHECK(end != std::string_view::npos);  // frames are written whole
    const std::string_view frame = stream.substr(0, end + 1);  // with its last "\n"
    stream.remove_prefix(end + 2);
    if (frame == ": ping\n") continue;
    constexpr std::string_view kGap = "event: gap\ndata: ";
    if (frame.substr(0, kGap.size()) == kGap) {
      FUZZ_CHECK(!last_id && !expected_next);  // the gap notice comes first
      const json data = json::parse(frame.substr(kGap.size()), nullptr, false);
      FUZZ_CHECK(data.is_object() && data.size() == 2);
      FUZZ_CHECK(data.contains("from") && data["from"].is_number_unsigned());
      FUZZ_CHECK(data.contains("to") && data["to"].is_number_unsigned());
      const auto from = data["from"].get<std::uint64_t>(), to = data["to"].get<std::uint64_t>();
      FUZZ_CHECK(from >= 1 && from <= to);
      expected_next = to + 1;
      continue;
    }
    constexpr std::string_view kId = "id: ";
    FUZZ_CHECK(frame.substr(0, kId.size()) == kId);
    const auto id_end = frame.find('\n');
    const auto id = parse_decimal(frame.substr(kId.size(), id_end - kId.size()));
    FUZZ_CHECK(id && *id > 0);
    if (last_id) FUZZ_CHECK(*id > *last_id);
    if (expected_next && !last_id) FUZZ_CHECK(*id >= *expected_next);  // not equal: ?session= filters
    FUZZ_CHECK(*id <= g_world->hub.last_seq());
    last_id = id;
    constexpr std::string_view kData = "data: ";
    const std::string_view rest = frame.substr(id_end + 1);
    FUZZ_CHECK(rest.substr(0, kData.size()) == kData);
    const std::string_view data_text = rest.substr(kData.size(), rest.size() - kData.size() - 1);
    FUZZ_CHECK(!contains(data_text, "\n"));  // one data: line
    const json event = json::parse(data_text, nullptr, false);
    FUZZ_CHECK(event.is_object() && event.contains("seq") && event["seq"].is_number_unsigned());
    FUZZ_CHECK(event["seq"].get<std::uint64_t>() == *id);
  }
}

void check_output(std::string_view out, const Facts& facts) {
  std::size_t pos = 0;
  while (pos < out.size()) {
    const auto head_end = out.find("\r\n\r\n", pos);
    FUZZ_CHECK(head_end != std::string_view::npos);  // responses are written whole
    const std::string_view head = out.substr(pos, head_end + 2 - pos);  // every line ends with CRLF
    pos = head_end + 4;

    // Status line.
    auto line_end = head.find("\r\n");
    const std::string_view status_line = head.substr(0, line_end);
    FUZZ_CHECK(status_line.size() >= 14);
    const std::string_view version = status_line.substr(0, 9);
    FUZZ_CHECK(version == "HTTP/1.1 " || version == "HTTP/1.0 ");
    const bool http10 = version == "HTTP/1.0 ";
    const auto status = parse_decimal(status_line.substr(9, 3));
    FUZZ_CHECK(status && known_status(static_cast<unsigned>(*status)));
    FUZZ_CHECK(status_line[12] == ' ');
    for (const char c : status_line.substr(13)) FUZZ_CHECK(c >= ' ' && c < 0x7f);

    // Header fields.
    std::optional<std::string_view> content_length, content_type, connection, allow_origin;
    std::size_t content_lengths = 0;
    std::string_view fields = head.substr(line_end + 2);
    while (!fields.empty()) {
      line_end = fields.find("\r\n");
      FUZZ_CHECK(line_end != std::string_view::npos);
      const std::string_view line = fields.substr(0, line_end);
      fields.remove_prefix(line_end + 2);
      const auto colon = line.find(':');
      FUZZ_CHECK(colon != std::string_view::npos && colon > 0);
      const std::string_view name = line.substr(0, colon);
      for (const char c : name) FUZZ_CHECK(is_tchar(c));
      std::string_view value = line.substr(colon + 1);
      FUZZ_CHECK(value.empty() || value.front() == ' ');
      if (!value.empty()) value.remove_prefix(1);
      for (const char c : value) FUZZ_CHECK(c != '\r' && c != '\n' && c != '\0');
      if (iequals(name, "Content-Length")) {
        content_length = value;
        ++content_lengths;
      } else if (iequals(name, "Content-Type")) {
        content_type = value;
      } else if (iequals(name, "Connection")) {
        connection = value;
      } else if (iequals(name, "Access-Control-Allow-Origin")) {
        FUZZ_CHECK(!allow_origin);
        allow_origin = value;
      } else if (iequals(name, "Set-Cookie")) {
        FUZZ_CHECK(false);
      } else {
        FUZZ_CHECK(!iequals(name, "Transfer-Encoding"));
      }
    }
    FUZZ_CHECK(content_lengths <= 1);

    // Security.
    if (!facts.has_host) FUZZ_CHECK(*status == 400 || *status == 403 || *status == 413 || *status == 431);
    if (allow_origin) FUZZ_CHECK(iequals(*allow_origin, kCorsOrigin));

    // The event stream takes over the rest of the connection.
    if (content_type && iequals(*content_type, "text/event-stream")) {
      FUZZ_CHECK(*status == 200 && !http10);
      FUZZ_CHECK(facts.has_token && facts.has_host);
      check_sse(out.substr(pos));
      return;
    }

    // Body.
    std::uint64_t length = 0;
    if (*status == 204) {
      FUZZ_CHECK(!content_length || *content_length == "0");
    } else {
      FUZZ_CHECK(content_length);
      const auto parsed = parse_decimal(*content_length);
      FUZZ_CHECK(parsed);
      length = *parsed;
    }
    FUZZ_CHECK(length <= out.size() - pos);
    const std::string_view body = out.substr(pos, length);
    pos += length;

    FUZZ_CHECK(content_type);
    if (content_type->substr(0, 16) == "application/json") {
      FUZZ_CHECK(*status == 200 || *status == 204);
      if (body != kIdentity) {
        FUZZ_CHECK(facts.has_token);  // an RPC answer
        if (*status == 200) {
          const json value = json::parse(body, nullptr, /*allow_exceptions=*/false);
          FUZZ_CHECK(!value.is_discarded());
          if (value.is_array()) {
            FUZZ_CHECK(!value.empty());
            for (const auto& member : value) FUZZ_CHECK(is_rpc_response_object(member));
          } else {
            FUZZ_CHECK(is_rpc_response_object(value));
          }
        }
      } else {
        FUZZ_CHECK(*status == 200);
      }
    }

    // Connection management: refusals close, and nothing follows a response that closes.
    const bool keep_alive = http10 ? (connection && iequals(*connection, "keep-alive"))
                                   : !(connection && iequals(*connection, "close"));
    if (*status >= 400) FUZZ_CHECK(!keep_alive);
    if (!keep_alive) FUZZ_CHECK(pos == out.size());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  spdlog::set_level(spdlog::level::off);
  g_verbose = std::getenv("FUZZ_HTTP_VERBOSE") != nullptr;
  std::signal(SIGPIPE, SIG_IGN);
  // report_bug() aborts only in !NDEBUG builds and the fuzz preset is RelWithDebInfo: make every bug a crash.
  switchboard::set_bug_handler([](std::string_view) { __builtin_trap(); });
  g_world = new World();
  switchboard::daemon::bind_core_methods(g_world->dispatcher, {kMaxBodyBytes});
  g_world->egress.add_sink(g_world->hub);
  for (int i = 1; i <= kPublished; ++i) {
    g_world->bus.publish(i % 2 == 0 ? "s-2" : "s-1",
                         switchboard::protocol::MessageDeltaEvent{"t-1", "m-1", switchboard::protocol::DeltaKind::Text,
                                                                  "delta " + std::to_string(i)});
  }
  if (g_world->hub.last_seq() != static_cast<std::uint64_t>(kPublished)) fail();
  auto& context = g_world->context;
  context.policy.token = std::string(kToken);
  context.policy.allowed_hosts = switchboard::http::loopback_hosts(kPort, {});
  context.policy.own_origins = switchboard::http::loopback_origins(kPort);
  context.policy.cors_origins = {std::string(kCorsOrigin)};
  context.identity_json = std::string(kIdentity);
  context.max_body_bytes = kMaxBodyBytes;
  context.max_header_bytes = kMaxHeaderBytes;
  for (const auto& host : context.policy.allowed_hosts) g_world->lowered_hosts.push_back(lowered(host));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto& world = *g_world;

  Facts facts;
  {
    const std::string input_lower = lowered(input);
    facts.has_host = std::any_of(world.lowered_hosts.begin(), world.lowered_hosts.end(),
                                 [&](const std::string& host) { return contains(input_lower, host); });
    facts.has_token = contains(input, kToken);
  }

  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  const int server_fd = fds[0];
  Client client;
  client.fd = fds[1];

  std::weak_ptr<switchboard::http::HttpConnection> connection_ref;
  {
    boost::asio::ip::tcp::socket socket(world.io);
    boost::system::error_code error;
    socket.assign(boost::asio::ip::tcp::v4(), server_fd, error);
    FUZZ_CHECK(!error);
    auto connection = std::make_shared<switchboard::http::HttpConnection>(std::move(socket), world.context);
    connection_ref = connection;
    connection->start();
  }

  // Two or three pieces, cut at fractions of the input chosen by the first byte's nibbles.
  const std::size_t control = size == 0 ? 0 : data[0];
  const std::size_t cut1 = size * (control & 0x0F) / 15;
  const std::size_t cut2 = cut1 + (size - cut1) * (control >> 4) / 15;
  pump(client);
  write_piece(client, input.substr(0, cut1));
  write_piece(client, input.substr(cut1, cut2 - cut1));
  write_piece(client, input.substr(cut2));
  ::shutdown(client.fd, SHUT_WR);
  pump(client);

  if (g_verbose) {
    std::fprintf(stderr, "---- %zu input bytes in pieces of %zu/%zu/%zu; server wrote %zu bytes:\n%s\n----\n", size,
                 cut1, cut2 - cut1, size - cut2, client.received.size(), client.received.c_str());
  }
  check_output(client.received, facts);

  // The peer goes away: every session, SSE streams included, must end and let go of everything.
  ::close(client.fd);
  client.fd = -1;
  pump(client);
  FUZZ_CHECK(connection_ref.expired());
  FUZZ_CHECK(world.context.connections.empty());
  FUZZ_CHECK(world.hub.client_count() == 0);
  FUZZ_CHECK(world.dispatcher.calls_in_flight() == 0);
  FUZZ_CHECK(::fcntl(server_fd, F_GETFD) == -1 && errno == EBADF);  // nothing else opened an fd meanwhile
  world.io.restart();
  world.io.poll();
  FUZZ_CHECK(world.io.stopped());  // no outstanding work: no timer or operation left behind
  world.io.restart();
  return 0;
}
