#include "fake_server_agent/FakeServerRuntime.h"

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "common/ChildEnvironment.h"
#include "common/NativeJson.h"
#include "fake_server_agent/FakeServerSession.h"

namespace switchboard::testing::fake_server {

using adapters::AdapterError;
using protocol::ErrorCode;

namespace {

constexpr std::string_view kListening = "listening on http://127.0.0.1:";

std::optional<std::string> parse_version(std::string_view output) {
  constexpr std::string_view kPrefix = "fake-server-agent ";
  if (output.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  auto version = std::string(output.substr(kPrefix.size()));
  while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
  return version;
}

adapters::VersionProbeSpec probe_spec(const FakeServerConfig& config) {
  adapters::VersionProbeSpec spec;
  spec.agent = "fakeserver";
  spec.executable = config.executable;
  spec.exec_shim = config.exec_shim;
  spec.install_hint = adapters::install_hint("fakeserver");
  spec.parse_version = &parse_version;
  spec.capabilities = FakeServerSession::static_capabilities();
  return spec;
}

}  // namespace

FakeServerRuntime::FakeServerRuntime(boost::asio::io_context& io, FakeServerConfig config)
    : m_io(io), m_config(std::move(config)), m_probe(adapters::VersionProbe::start(io, probe_spec(m_config))) {}

FakeServerRuntime::~FakeServerRuntime() = default;

std::unique_ptr<adapters::AgentAdapter> FakeServerRuntime::create(adapters::AdapterListener& listener) {
  return std::make_unique<FakeServerSession>(m_io, *this, listener);
}

void FakeServerRuntime::when_running(const std::string& cwd, adapters::Completion ready) {
  if (m_running) return ready(std::nullopt);
  m_waiting.push_back(std::move(ready));
  if (m_server) return;  // starting: it completes every waiting caller

  adapters::CliProcess::Handlers handlers;
  handlers.on_line = [this](std::string_view line) { on_server_line(line); };
  handlers.on_error = [](adapters::AgentErrorReport error) { spdlog::warn("fakeserver: {}", error.message); };
  handlers.on_exit = [this](const std::string& reason, const std::string&) { server_gone(reason); };
  m_server = std::make_unique<adapters::CliProcess>(m_io, adapters::CliIdentity{"the fake server agent", "fakeserver"},
                                                    m_config.timeouts, std::move(handlers));
  adapters::CliLaunch launch{{m_probe->executable(), "serve"}, cwd, adapters::environment_with({}), m_config.exec_shim,
                             "fakeserver"};
  if (auto failed = m_server->spawn(std::move(launch))) {
    boost::asio::post(m_io, [server = std::shared_ptr<adapters::CliProcess>(std::move(m_server))] {});
    return finish_waiting(failed);
  }
  // Ready once it says where it listens and its event stream is open (on_server_line).
  m_server->begin_start([this](std::optional<AdapterError> error) {
    if (error) finish_waiting(error);
  });
}

void FakeServerRuntime::on_server_line(std::string_view line) {
  if (m_http || line.substr(0, kListening.size()) != kListening) return;
  const auto port = std::stoi(std::string(line.substr(kListening.size())));
  m_http = std::make_unique<adapters::HttpClient>(m_io, "127.0.0.1", static_cast<std::uint16_t>(port));
  m_events = std::make_unique<adapters::SseClient>(m_io, "127.0.0.1", static_cast<std::uint16_t>(port));
  adapters::SseClient::Options options;
  options.target = "/event";
  adapters::SseClient::Handlers handlers;
  handlers.on_open = [this] {
    m_running = true;
    m_server->finish_start(std::nullopt);
    finish_waiting(std::nullopt);
  };
  handlers.on_event = [this](adapters::SseEvent event) { on_event(event); };
  handlers.on_closed = [this](std::string reason) {
    // The stream is how every session hears its turns: without it the server is of no use. Stopping it makes
    // its exit the one report.
    spdlog::warn("fakeserver: the event stream ended: {}", reason);
    if (m_server) m_server->stop();
  };
  m_events->open(std::move(options), std::move(handlers));
}

void FakeServerRuntime::on_event(const adapters::SseEvent& event) {
  auto data = adapters::native::parse_line(event.data);
  if (!data.is_object()) return spdlog::warn("fakeserver: an event that is not a JSON object: {}", event.data.substr(0, 200));
  const auto session = m_sessions.find(data.value("session", ""));
  if (session == m_sessions.end()) return;  // a session nobody here drives (any more)
  session->second->on_server_event(event.type, data);
}

void FakeServerRuntime::attach(const std::string& native_id, FakeServerSession& session) { m_sessions[native_id] = &session; }

void FakeServerRuntime::detach(const std::string& native_id) { m_sessions.erase(native_id); }

void FakeServerRuntime::server_gone(const std::string& reason) {
  m_running = false;
  // Everything of this server goes; the process object is the caller, so it goes after this returns.
  boost::asio::post(m_io, [server = std::shared_ptr<adapters::CliProcess>(std::move(m_server)),
                           http = std::shared_ptr<adapters::HttpClient>(std::move(m_http)),
                           events = std::shared_ptr<adapters::SseClient>(std::move(m_events))] {});
  finish_waiting(AdapterError{ErrorCode::AgentUnavailable, "the fake server agent could not start: " + reason});
  auto sessions = std::exchange(m_sessions, {});
  for (auto& [id, session] : sessions) session->server_lost(reason);
  if (auto stopped = std::exchange(m_stopped, nullptr)) stopped();
}

void FakeServerRuntime::finish_waiting(const std::optional<AdapterError>& error) {
  auto waiting = std::exchange(m_waiting, {});
  for (auto& ready : waiting) ready(error);
}

void FakeServerRuntime::stop(std::function<void()> done) {
  m_probe->stop();
  if (!m_server) return done();
  m_stopped = std::move(done);
  m_server->stop();  // stdin closed: the server's own way to finish; then TERM, then KILL
}

}  // namespace switchboard::testing::fake_server
