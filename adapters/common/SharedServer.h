#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/CliProcess.h"
#include "common/HttpClient.h"
#include "common/SseClient.h"

namespace switchboard::adapters {

// A local server process that all of one agent's sessions share (OpenCode's `opencode serve`; the tests' fake
// server agent), held by that agent's runtime. It is started when the first session needs it, and is ready once
// it has printed the port it listens on and its event stream is open, so no event of a session can be missed. It
// gives one HTTP client to it (every request carrying the headers the spec names, e.g. credentials) and hands
// every event of its stream to `on_event`. When the process ends, or its event stream does, `on_gone` is called
// once; the next when_running() starts a new server.
//
// Callbacks run on the io_context thread and never after the SharedServer is destroyed, which kills a server
// still running (its whole process group).
class SharedServer {
 public:
  struct Spec {
    CliIdentity identity;  // how messages and logs name it
    CliTimeouts timeouts;  // start: spawn → ready; stop_grace: each step of the graceful stop
    CliLaunch launch;      // argv, working directory, environment, exec shim, log name
    // The port it listens on (127.0.0.1), read from one line of its stdout; nullopt for any other line.
    std::function<std::optional<std::uint16_t>(std::string_view line)> listening_port;
    std::string event_target;                                  // GET target of its event stream
    std::vector<std::pair<std::string, std::string>> headers;  // sent with every request and the stream
  };
  struct Handlers {
    std::function<void(SseEvent event)> on_event;
    std::function<void(const std::string& reason)> on_gone;
  };

  SharedServer(boost::asio::io_context& io, Handlers handlers);
  ~SharedServer();
  SharedServer(const SharedServer&) = delete;
  SharedServer& operator=(const SharedServer&) = delete;

  // `ready` once the server takes requests and its events are read (at once when it already runs), or why it
  // cannot: AgentUnavailable when it cannot be spawned, exits, or is not ready within the start deadline. `spec`
  // is asked for only when a server must be started.
  void when_running(const std::function<Spec()>& spec, Completion ready);
  bool running() const { return m_running; }

  // A request to the running server with the spec's headers added. Fails at once when none runs.
  void send(HttpRequest request, std::function<void(HttpOutcome)> done);
  // The same on a connection of its own, for a request the server answers only once its work is done (OpenCode's
  // command and summarize): send() sends one request at a time, and the others must not wait behind it.
  void send_alone(HttpRequest request, std::function<void(HttpOutcome)> done);

  // Graceful stop (close stdin, then SIGTERM, then SIGKILL, each after the spec's stop_grace); `done` once the
  // process is gone (at once when none runs). on_gone is not called for a stop asked for here.
  void stop(std::function<void()> done);

 private:
  void on_line(std::string_view line);
  void gone(const std::string& reason);
  void finish_waiting(const std::optional<AdapterError>& error);

  boost::asio::io_context& m_io;
  Handlers m_handlers;
  Spec m_spec;
  std::unique_ptr<CliProcess> m_process;
  std::unique_ptr<HttpClient> m_http;
  std::uint16_t m_port = 0;
  std::unique_ptr<SseClient> m_events;
  bool m_running = false;
  std::vector<Completion> m_waiting;
  std::function<void()> m_stopped;  // stop() waits for the exit
};

}  // namespace switchboard::adapters
