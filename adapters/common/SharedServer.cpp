#include "common/SharedServer.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

namespace switchboard::adapters {

SharedServer::SharedServer(boost::asio::io_context& io, Handlers handlers) : m_io(io), m_handlers(std::move(handlers)) {}

// The CliProcess kills the server's group if it still runs.
SharedServer::~SharedServer() = default;

void SharedServer::when_running(const std::function<Spec()>& spec, Completion ready) {
  if (m_running) return ready(std::nullopt);
  m_waiting.push_back(std::move(ready));
  if (m_process) return;  // starting: it completes every caller waiting

  m_spec = spec();
  CliProcess::Handlers handlers;
  handlers.on_line = [this](std::string_view line) { on_line(line); };
  handlers.on_error = [prefix = m_spec.identity.log_prefix](AgentErrorReport error) { spdlog::warn("{}: {}", prefix, error.message); };
  handlers.on_exit = [this](const std::string& reason, const std::string&) { gone(reason); };
  m_process = std::make_unique<CliProcess>(m_io, m_spec.identity, m_spec.timeouts, std::move(handlers));
  if (auto failed = m_process->spawn(m_spec.launch)) {
    boost::asio::post(m_io, [process = std::shared_ptr<CliProcess>(std::move(m_process))] {});
    return finish_waiting(failed);
  }
  // Ready once it has said where it listens and its event stream is open (on_line). A start deadline that
  // passes first kills it; its exit then reports the failure (gone()).
  m_process->begin_start([this](std::optional<AdapterError> error) {
    if (error) finish_waiting(error);
  });
}

void SharedServer::on_line(std::string_view line) {
  if (m_http) return;  // it already said where it listens; later lines are its own business
  const auto port = m_spec.listening_port(line);
  if (!port) return;
  m_port = *port;
  m_http = std::make_unique<HttpClient>(m_io, "127.0.0.1", *port);
  m_events = std::make_unique<SseClient>(m_io, "127.0.0.1", *port);
  SseClient::Options options;
  options.target = m_spec.event_target;
  options.headers = m_spec.headers;
  SseClient::Handlers handlers;
  handlers.on_open = [this] {
    m_running = true;
    m_process->finish_start(std::nullopt);
    finish_waiting(std::nullopt);
  };
  handlers.on_event = [this](SseEvent event) { m_handlers.on_event(std::move(event)); };
  handlers.on_closed = [this](std::string reason) {
    // Without its stream no session hears its turns: the server is of no use. Stopping it makes its exit the
    // one report of its end.
    spdlog::warn("{}: the event stream ended: {}", m_spec.identity.log_prefix, reason);
    if (m_process) m_process->stop();
  };
  m_events->open(std::move(options), std::move(handlers));
}

void SharedServer::send(HttpRequest request, std::function<void(HttpOutcome)> done) {
  if (!m_running || !m_http) return done(HttpFailure{m_spec.identity.name + " is not running", false});
  request.headers.insert(request.headers.end(), m_spec.headers.begin(), m_spec.headers.end());
  m_http->send(std::move(request), std::move(done));
}

void SharedServer::send_alone(HttpRequest request, std::function<void(HttpOutcome)> done) {
  if (!m_running || !m_http) return done(HttpFailure{m_spec.identity.name + " is not running", false});
  request.headers.insert(request.headers.end(), m_spec.headers.begin(), m_spec.headers.end());
  // The client lives until its one answer: it is let go after that callback has returned, never inside it.
  auto client = std::make_shared<std::unique_ptr<HttpClient>>(std::make_unique<HttpClient>(m_io, "127.0.0.1", m_port));
  (*client)->send(std::move(request), [io = &m_io, client, done = std::move(done)](HttpOutcome outcome) {
    done(std::move(outcome));
    boost::asio::post(*io, [client] { client->reset(); });
  });
}

void SharedServer::gone(const std::string& reason) {
  m_running = false;
  // Everything of this server goes; the process object is the caller, so it goes after this returns.
  boost::asio::post(m_io, [process = std::shared_ptr<CliProcess>(std::move(m_process)),
                           http = std::shared_ptr<HttpClient>(std::move(m_http)),
                           events = std::shared_ptr<SseClient>(std::move(m_events))] {});
  finish_waiting(AdapterError{protocol::ErrorCode::AgentUnavailable, m_spec.identity.name + " could not start: " + reason});
  if (auto stopped = std::exchange(m_stopped, nullptr)) return stopped();
  if (m_handlers.on_gone) m_handlers.on_gone(reason);
}

void SharedServer::finish_waiting(const std::optional<AdapterError>& error) {
  auto waiting = std::exchange(m_waiting, {});
  for (auto& ready : waiting) ready(error);
}

void SharedServer::stop(std::function<void()> done) {
  if (!m_process) return done();
  m_stopped = std::move(done);
  m_process->stop();
}

}  // namespace switchboard::adapters
