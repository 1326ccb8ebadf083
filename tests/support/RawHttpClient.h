#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchboard::testing {

// A deliberately small HTTP/1.1 client on a plain blocking socket with a receive timeout, so a server bug makes
// a test fail instead of hang. It can also misbehave on purpose (raw bytes, half-close, never read).
class RawHttpClient {
 public:
  struct Response {
    int status = 0;
    std::map<std::string, std::string> headers;  // names lower-cased
    std::string body;
    bool complete = false;
  };

  explicit RawHttpClient(std::uint16_t port, int timeout_ms = 5000, int receive_buffer = 0) {
    m_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0) ::setsockopt(m_fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    const int one = 1;
    ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    timeval tv{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    ::setsockopt(m_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(m_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    m_connected = ::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  RawHttpClient(const RawHttpClient&) = delete;
  RawHttpClient& operator=(const RawHttpClient&) = delete;
  ~RawHttpClient() { close(); }

  bool connected() const { return m_connected; }
  void close() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
  }
  void shutdown_write() { ::shutdown(m_fd, SHUT_WR); }

  bool send_raw(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(m_fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Sends a request; `headers` are full lines without CRLF. Host defaults to 127.0.0.1:port.
  bool send_request(const std::string& method, const std::string& target, std::vector<std::string> headers,
                    const std::string& body = "", std::optional<std::string> host = std::nullopt) {
    std::string request = method + " " + target + " HTTP/1.1\r\n";
    request += "Host: " + host.value_or("127.0.0.1:" + std::to_string(port())) + "\r\n";
    for (const auto& header : headers) request += header + "\r\n";
    if (!body.empty() || method == "POST") request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    request += "\r\n" + body;
    return send_raw(request);
  }

  // Reads one response with a Content-Length body (or until close).
  Response read_response() {
    Response response;
    if (!read_head(response)) return response;
    const auto length = response.headers.find("content-length");
    if (length != response.headers.end()) {
      const std::size_t want = std::stoul(length->second);
      while (m_buffer.size() < want && fill()) {
      }
      if (m_buffer.size() < want) return response;
      response.body = m_buffer.substr(0, want);
      m_buffer.erase(0, want);
    }
    response.complete = true;
    return response;
  }

  Response request(const std::string& method, const std::string& target, std::vector<std::string> headers,
                   const std::string& body = "", std::optional<std::string> host = std::nullopt) {
    if (!send_request(method, target, std::move(headers), body, std::move(host))) return {};
    return read_response();
  }

  // For an SSE stream: the response head, then one frame ("...\n\n") at a time; nullopt on close/timeout.
  bool read_head(Response& response) {
    std::size_t end;
    while ((end = m_buffer.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return false;
    }
    const std::string head = m_buffer.substr(0, end);
    m_buffer.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    response.status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      const std::size_t start = line_end + 2;
      line_end = head.find("\r\n", start);
      const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      response.headers[name] = value;
    }
    return true;
  }
  std::optional<std::string> read_frame() {
    std::size_t end;
    while ((end = m_buffer.find("\n\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    std::string frame = m_buffer.substr(0, end);
    m_buffer.erase(0, end + 2);
    return frame;
  }
  // True if the server sent something (or closed) within `timeout_ms`, without consuming it.
  bool has_data(int timeout_ms) {
    if (!m_buffer.empty()) return true;
    pollfd entry{m_fd, POLLIN, 0};
    return ::poll(&entry, 1, timeout_ms) > 0;
  }

  // True once the server closed the connection (read returns 0) within the timeout.
  bool closed_by_server() {
    char c;
    for (;;) {
      const ssize_t n = ::recv(m_fd, &c, 1, 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  std::uint16_t port() const {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    ::getpeername(m_fd, reinterpret_cast<sockaddr*>(&address), &length);
    return ntohs(address.sin_port);
  }

 private:
  bool fill() {
    char buf[65536];
    const ssize_t n = ::recv(m_fd, buf, sizeof buf, 0);
    if (n <= 0) return false;
    m_buffer.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int m_fd = -1;
  bool m_connected = false;
  std::string m_buffer;
};

}  // namespace switchboard::testing
