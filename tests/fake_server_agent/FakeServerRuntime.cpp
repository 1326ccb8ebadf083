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
  spec.install_hint = adapters::install_hint("fakeserver");
  spec.parse_version = &parse_version;
  spec.capabilities = FakeServerSession::static_capabilities();
  return spec;
}

}  // namespace

FakeServerRuntime::FakeServerRuntime(boost::asio::io_context& io, FakeServerConfig config)
    : m_io(io),
      m_config(std::move(config)),
      m_probe(adapters::VersionProbe::locate(io, probe_spec(m_config))),
      m_server(io, {[this](adapters::SseEvent event) { on_event(event); },
                    [this](const std::string& reason) { server_gone(reason); }}) {}

FakeServerRuntime::~FakeServerRuntime() = default;

std::unique_ptr<adapters::AgentAdapter> FakeServerRuntime::create(adapters::AdapterListener& listener) {
  return std::make_unique<FakeServerSession>(m_io, *this, listener);
}

void FakeServerRuntime::when_running(const std::string& cwd, adapters::Completion ready) {
  m_server.when_running(
      [&] {
        adapters::SharedServer::Spec spec;
        spec.identity = adapters::CliIdentity{"the fake server agent", "fakeserver"};
        spec.timeouts = m_config.timeouts;
        spec.launch = adapters::CliLaunch{{m_probe->executable(), "serve"}, cwd, adapters::environment_with({}),
                                          "fakeserver"};
        spec.listening_port = [](std::string_view line) -> std::optional<std::uint16_t> {
          if (line.substr(0, kListening.size()) != kListening) return std::nullopt;
          return static_cast<std::uint16_t>(std::stoi(std::string(line.substr(kListening.size()))));
        };
        spec.event_target = "/event";
        return spec;
      },
      std::move(ready));
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
  auto sessions = std::exchange(m_sessions, {});
  for (auto& [id, session] : sessions) session->server_lost(reason);
}

void FakeServerRuntime::stop(std::function<void()> done) {
  m_probe->stop();
  m_server.stop(std::move(done));
}

}  // namespace switchboard::testing::fake_server
