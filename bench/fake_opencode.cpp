// fake_opencode: a stand-in for `opencode serve`, just faithful enough for the real OpenCode adapter, that streams
// text deltas on its event stream at a steady rate. bench_relay --agent opencode runs it (as
// $SWITCHBOARD_OPENCODE_BIN under the daemon, or directly for the floor).
//
//   fake_opencode --version          prints "1.18.33" (the daemon's discovery probe)
//   fake_opencode serve ...          listens on 127.0.0.1 at a port of its own, prints OpenCode's
//                                    "opencode server listening on http://127.0.0.1:<port>" line, and answers:
//     GET  /global/event                  the event stream (SSE, chunked), every session's events
//     POST /session                       {"id": "ses_relay<n>", ...}
//     GET  /session/<id>                  {"id": <id>}
//     POST /session/<id>/prompt_async     204, then one turn on the event stream, shaped like the recordings in
//                                         tests/fixtures/opencode/: session.status busy, message.updated (the
//                                         assistant's), the text part, N message.part.delta, the text part ended,
//                                         step-finish, session.status idle, session.idle
//     anything else                       200 `true`
//   It ends on SIGTERM (as OpenCode does; EOF on stdin means nothing to it). The password is not checked.
//
// The turn is configured by the prompt's text: "deltas=N" (default 1000) and "rate=R" events per second (default
// 10000; 0 = as fast as the socket takes them), paced on an absolute schedule as fake_claude does. Each delta is
// "relay:<CLOCK_MONOTONIC ns, 19 digits>:<index> ", stamped right before the one write() that sends its event.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "BenchSupport.h"

namespace {

using bench::die;
using bench::kStampDigits;
using bench::monotonic_ns;


bool send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

long long option(std::string_view text, std::string_view name, long long fallback) {
  const auto at = text.find(std::string(name) + "=");
  if (at == std::string_view::npos) return fallback;
  return std::strtoll(std::string(text.substr(at + name.size() + 1, 20)).c_str(), nullptr, 10);
}

// The event stream: one client (the daemon's runtime) at a time; writes from the turn thread.
class EventStream {
 public:
  void open(int fd) {
    std::lock_guard lock(m_mutex);
    m_fd = fd;
  }
  // One SSE event as one HTTP chunk, in one send(). `stamp_at`: where in `payload` to patch the stamp in, right
  // before the send (npos: none).
  void send(std::string payload, std::size_t stamp_at = std::string::npos) {
    std::string frame = "data: {\"directory\":\"" + m_directory + "\",\"project\":\"global\",\"payload\":";
    const std::size_t payload_at = frame.size();
    frame += payload;
    frame += "}\n\n";
    char size[20];
    const int n = std::snprintf(size, sizeof size, "%zx\r\n", frame.size());
    frame.insert(0, size, static_cast<std::size_t>(n));
    frame += "\r\n";
    std::lock_guard lock(m_mutex);
    if (m_fd < 0) return;
    if (stamp_at != std::string::npos) {
      char digits[kStampDigits + 1];
      std::snprintf(digits, sizeof digits, "%0*" PRId64, kStampDigits, monotonic_ns());
      std::memcpy(frame.data() + static_cast<std::size_t>(n) + payload_at + stamp_at, digits, kStampDigits);
    }
    if (!send_all(m_fd, frame)) m_fd = -1;
  }
  void set_directory(std::string directory) { m_directory = std::move(directory); }

 private:
  std::mutex m_mutex;
  int m_fd = -1;
  std::string m_directory = "/";
};

EventStream g_events;
std::mutex g_turn_mutex;  // one turn at a time
std::atomic<long long> g_sessions = 0;
std::atomic<long long> g_turns = 0;

std::string event(const std::string& type, const std::string& properties) {
  return R"({"id":"evt_relay","type":")" + type + R"(","properties":)" + properties + "}";
}

void run_turn(std::string session, long long deltas, long long rate, long long turn) {
  std::lock_guard turn_lock(g_turn_mutex);
  const std::string message = "msg_relay" + std::to_string(turn);
  const std::string part = "prt_relay" + std::to_string(turn);
  const std::string ids = R"("sessionID":")" + session + R"(","messageID":")" + message + "\"";
  g_events.send(event("session.status", R"({"sessionID":")" + session + R"(","status":{"type":"busy"}})"));
  g_events.send(event("message.updated", R"({"sessionID":")" + session + R"(","info":{"id":")" + message +
                                             R"(","role":"assistant","sessionID":")" + session + R"(","time":{"created":1}}})"));
  g_events.send(event("message.part.updated", R"({"sessionID":")" + session + R"(","part":{"id":")" + part + R"(",)" + ids +
                                                  R"(,"type":"text","text":"","time":{"start":1}}})"));
  const std::int64_t start = monotonic_ns();
  std::int64_t last = start;
  for (long long i = 0; i < deltas; ++i) {
    if (rate > 0) {
      const std::int64_t due = start + static_cast<std::int64_t>(static_cast<double>(i) * 1e9 / static_cast<double>(rate));
      if (monotonic_ns() < due) {
        const timespec at{static_cast<time_t>(due / 1'000'000'000), static_cast<long>(due % 1'000'000'000)};
        while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, nullptr) == EINTR) {
        }
      }
    }
    char delta[64];
    std::snprintf(delta, sizeof delta, "relay:%0*d:%lld ", kStampDigits, 0, i);
    std::string payload = event("message.part.delta", "{" + ids + R"(,"partID":")" + part + R"(","field":"text","delta":")" + delta + "\"}");
    const auto stamp_at = payload.find("relay:") + 6;
    g_events.send(std::move(payload), stamp_at);
    last = monotonic_ns();
  }
  char summary[200];
  const double seconds = static_cast<double>(last - start) / 1e9;
  std::snprintf(summary, sizeof summary, "fake_opencode: %lld deltas in %.3f s (%.0f events/s, asked %lld)", deltas, seconds,
                seconds > 0 ? static_cast<double>(deltas - 1) / seconds : 0.0, rate);
  g_events.send(event("message.part.updated", R"({"sessionID":")" + session + R"(","part":{"id":")" + part + R"(",)" + ids +
                                                  R"(,"type":"text","text":")" + summary + R"(","time":{"start":1,"end":2}}})"));
  g_events.send(event("message.part.updated", R"({"sessionID":")" + session + R"(","part":{"id":")" + part + R"(f",)" + ids +
                                                  R"(,"type":"step-finish","reason":"stop","tokens":{"input":100,"output":)" +
                                                  std::to_string(deltas) + R"(,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0}})"));
  g_events.send(event("session.status", R"({"sessionID":")" + session + R"(","status":{"type":"idle"}})"));
  g_events.send(event("session.idle", R"({"sessionID":")" + session + "\"}"));
}

void reply(int fd, const char* status, std::string_view body) {
  std::string response = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: application/json\r\nContent-Length: " +
                         std::to_string(body.size()) + "\r\n\r\n";
  response += body;
  send_all(fd, response);
}

// One connection: requests one after another (keep-alive), until the peer closes it.
void serve_connection(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::string buffer;
  // More of the request into `buffer`; false once the client is gone.
  const auto receive = [&] {
    char chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  };
  for (;;) {
    std::size_t header_end;
    while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!receive()) {
        ::close(fd);
        return;
      }
    }
    const std::string head = buffer.substr(0, header_end);
    std::size_t length = 0;
    for (const char* name : {"Content-Length: ", "content-length: "}) {
      if (const auto at = head.find(name); at != std::string::npos) length = std::strtoull(head.c_str() + at + std::strlen(name), nullptr, 10);
    }
    while (buffer.size() < header_end + 4 + length) {
      if (!receive()) {
        ::close(fd);
        return;
      }
    }
    const std::string body = buffer.substr(header_end + 4, length);
    buffer.erase(0, header_end + 4 + length);
    const auto space = head.find(' ');
    const std::string method = head.substr(0, space);
    std::string target = head.substr(space + 1, head.find(' ', space + 1) - space - 1);
    const std::string path = target.substr(0, target.find('?'));

    if (method == "GET" && path == "/global/event") {
      send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n");
      g_events.open(fd);
      g_events.send(event("server.connected", "{}"));
      return;  // the stream keeps the descriptor; the turn thread writes to it
    }
    if (method == "POST" && path == "/session") {
      const std::string id = "ses_relay" + std::to_string(++g_sessions);
      reply(fd, "200 OK", R"({"id":")" + id + R"(","title":"relay","time":{"created":1,"updated":1}})");
    } else if (method == "GET" && path.rfind("/session/", 0) == 0) {
      reply(fd, "200 OK", R"({"id":")" + path.substr(9) + R"("})");
    } else if (method == "POST" && path.size() > 13 && path.rfind("/prompt_async") == path.size() - 13) {
      const std::string session = path.substr(9, path.size() - 9 - 13);
      reply(fd, "204 No Content", "");
      std::thread(run_turn, session, option(body, "deltas", 1000), option(body, "rate", 10000), ++g_turns).detach();
    } else {
      reply(fd, "200 OK", "true");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bench::g_program = "fake_opencode";
  bool serve = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--version") {
      std::printf("1.18.33\n");
      return 0;
    }
    if (arg == "serve") serve = true;
  }
  if (!serve) {
    std::fprintf(stderr, "fake_opencode: only `serve` and `--version`\n");
    return 2;
  }
  (void)::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) != nullptr) g_events.set_directory(cwd);
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) die("socket");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) die("bind");
  if (::listen(listener, 16) != 0) die("listen");
  socklen_t size = sizeof address;
  if (::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size) != 0) die("getsockname");
  std::printf("opencode server listening on http://127.0.0.1:%d\n", ntohs(address.sin_port));
  std::fflush(stdout);
  for (;;) {
    const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      die("accept");
    }
    std::thread(serve_connection, fd).detach();
  }
}
