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
// The checks on the output live in HttpOracle.cpp, built without coverage hooks.

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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
#include <spdlog/spdlog.h>

#include "FuzzCheck.h"
#include "HttpOracle.h"
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

constexpr unsigned short kPort = 7337;
constexpr std::string_view kToken = "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0";
constexpr std::string_view kCorsOrigin = "https://app.example.com";
constexpr std::string_view kIdentity = R"({"name":"switchboard","version":"fuzz","protocolVersion":1})";
constexpr std::size_t kMaxBodyBytes = 4096;
constexpr std::size_t kMaxHeaderBytes = 2048;

using switchboard::fuzz::fail;

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
  std::optional<switchboard::fuzz::HttpOracle> oracle;  // once the policy is set
};

World* g_world = nullptr;
bool g_verbose = false;  // FUZZ_HTTP_VERBOSE

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
  context.policy.allowed_hosts = switchboard::http::loopback_hosts(kPort);
  context.policy.own_origins = switchboard::http::loopback_origins(kPort);
  context.policy.cors_origins = {std::string(kCorsOrigin)};
  context.identity_json = std::string(kIdentity);
  context.max_body_bytes = kMaxBodyBytes;
  context.max_header_bytes = kMaxHeaderBytes;
  g_world->oracle.emplace(context.policy.allowed_hosts, std::string(kToken), std::string(kCorsOrigin),
                          std::string(kIdentity));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto& world = *g_world;

  const switchboard::fuzz::InputFacts facts = world.oracle->facts_of(input);

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
  world.oracle->check_output(client.received, facts, world.hub.last_seq());

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
