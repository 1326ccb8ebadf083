#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "common/SharedServer.h"
#include "common/VersionProbe.h"
#include "switchboard/adapters/AgentRuntime.h"

// A test agent shaped like a local server (tests/fake_server_agent/fake_server_agent.py): one process serves
// every session over HTTP and reports all of them on one SSE stream. It is built from the adapter kit alone,
// the way a server-based agent (OpenCode) uses it, and runs the shared conformance scenarios (tests/e2e), which
// is how the kit is shown to fit an agent that is not one CLI per session.

namespace switchboard::testing::fake_server {

class FakeServerSession;

struct FakeServerConfig {
  std::string executable = "fake_server_agent.py";
  adapters::CliTimeouts timeouts;
};

// What the sessions of the agent share: the discovery probe, the server process (started when the first session
// needs it, in that session's directory), one HTTP client to it and its event stream, whose events go to the
// session they name. When the server goes (it exits, or its stream breaks) every session is told; the next
// start brings up a new one.
class FakeServerRuntime final : public adapters::AgentRuntime {
 public:
  FakeServerRuntime(boost::asio::io_context& io, FakeServerConfig config);
  ~FakeServerRuntime() override;

  protocol::AgentInfo info() const override { return m_probe->info(); }
  void begin_discovery() override { m_probe->run(); }
  std::unique_ptr<adapters::AgentAdapter> create(adapters::AdapterListener& listener) override;
  void stop(std::function<void()> done) override;

  // `ready` once the server takes requests and its events are being read (at once when it already runs), or
  // why it cannot. A server is started in `cwd` when none runs.
  void when_running(const std::string& cwd, adapters::Completion ready);
  adapters::SharedServer& server() { return m_server; }
  // The server's events for `native_id` go to `session` until it detaches.
  void attach(const std::string& native_id, FakeServerSession& session);
  void detach(const std::string& native_id);

 private:
  void on_event(const adapters::SseEvent& event);
  void server_gone(const std::string& reason);

  boost::asio::io_context& m_io;
  FakeServerConfig m_config;
  std::shared_ptr<adapters::VersionProbe> m_probe;
  adapters::SharedServer m_server;
  std::map<std::string, FakeServerSession*> m_sessions;  // by the server's session id
};

}  // namespace switchboard::testing::fake_server
