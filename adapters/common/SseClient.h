#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/SseParser.h"

namespace switchboard::adapters {

// Reads one server-sent event stream (GET with Accept: text/event-stream) from a local server on the daemon's
// io_context: the body, chunked or not, goes through SseParser as it arrives, so each event is reported as soon
// as its empty line is read. A response that is not 200 text/event-stream, a connection that fails or breaks,
// and a stream the server ends all end in on_closed, once; reconnecting (with last_event_id()) is the caller's
// decision. No callback runs after close() or after the client is destroyed.
class SseClient {
 public:
  struct Handlers {
    std::function<void()> on_open;  // the response's header said 200 text/event-stream
    std::function<void(SseEvent event)> on_event;
    std::function<void(std::string reason)> on_closed;
    std::function<void(std::chrono::milliseconds retry)> on_retry;  // optional
  };
  struct Options {
    std::string target = "/";
    std::vector<std::pair<std::string, std::string>> headers;  // e.g. Last-Event-ID
    std::chrono::milliseconds connect_timeout{10000};        // connect and response header
    // No byte (a heartbeat comment counts) for this long ends the stream; zero: wait for ever.
    std::chrono::milliseconds idle_timeout{0};
  };

  SseClient(boost::asio::io_context& io, std::string host, std::uint16_t port);
  ~SseClient();
  SseClient(const SseClient&) = delete;
  SseClient& operator=(const SseClient&) = delete;

  void open(Options options, Handlers handlers);
  void close();
  const std::string& last_event_id() const;

 private:
  class Stream;
  boost::asio::io_context& m_io;
  std::string m_host;
  std::uint16_t m_port;
  std::shared_ptr<Stream> m_stream;
  std::string m_last_event_id;
};

}  // namespace switchboard::adapters
