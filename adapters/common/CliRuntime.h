#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/VersionProbe.h"
#include "switchboard/adapters/AgentRuntime.h"

namespace switchboard::adapters {

// The runtime of an agent whose sessions each run a CLI process of their own (Claude Code, Codex): nothing is
// shared but discovery (the `--version` probe, in the background once begin_discovery() is called), so there are
// no events to route and the stop at daemon shutdown only ends a probe still running.
class CliRuntime final : public AgentRuntime {
 public:
  // `make_adapter` gets the executable as discovery found it (an absolute path when it is on PATH).
  using AdapterFactory = std::function<std::unique_ptr<AgentAdapter>(AdapterListener& listener, const std::string& executable)>;

  CliRuntime(boost::asio::io_context& io, VersionProbeSpec probe, AdapterFactory make_adapter)
      : m_probe(VersionProbe::locate(io, std::move(probe))), m_make_adapter(std::move(make_adapter)) {}

  protocol::AgentInfo info() const override { return m_probe->info(); }
  void begin_discovery() override { m_probe->run(); }
  std::unique_ptr<AgentAdapter> create(AdapterListener& listener) override {
    return m_make_adapter(listener, m_probe->executable());
  }
  void stop(std::function<void()> done) override {
    m_probe->stop();
    done();
  }

 private:
  std::shared_ptr<VersionProbe> m_probe;
  AdapterFactory m_make_adapter;
};

// The descriptor of a one-CLI-per-session agent: its runtime probes `<config.executable> --version` (read with
// `parse_version`), and each session gets an `Adapter(io, listener, config)` running the executable discovery found.
template <class Adapter, class Config>
AgentDescriptor describe_cli_agent(boost::asio::io_context& io, std::string agent, Config config,
                                   std::optional<std::string> (*parse_version)(std::string_view output)) {
  VersionProbeSpec probe;
  probe.agent = agent;
  probe.executable = config.executable;
  if constexpr (requires { config.leading_arguments; }) probe.leading_arguments = config.leading_arguments;
  probe.install_hint = install_hint(agent);
  probe.parse_version = parse_version;
  probe.capabilities = Adapter::static_capabilities();
  if constexpr (requires { Adapter::static_modes(); }) probe.modes = Adapter::static_modes();
  auto runtime = std::make_shared<CliRuntime>(
      io, std::move(probe), [&io, config = std::move(config)](AdapterListener& listener, const std::string& executable) {
        auto own = config;
        own.executable = executable;
        return std::make_unique<Adapter>(io, listener, std::move(own));
      });
  return describe_runtime(std::move(agent), std::move(runtime));
}

}  // namespace switchboard::adapters
