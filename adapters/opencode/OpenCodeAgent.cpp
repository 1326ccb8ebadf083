#include "opencode/OpenCodeAgent.h"

#include <array>
#include <memory>

#include "common/EnvironmentVariable.h"
#include "opencode/OpenCodeHistory.h"

namespace switchboard::adapters::opencode {
namespace {

constexpr std::int64_t kDay = 24 * 3600 * 1000;

config::AgentSettingSpec idle_stop_setting() {
  config::AgentSettingSpec spec{"agents.opencode.idle_stop", "--opencode-idle-stop", "SWITCHBOARD_OPENCODE_IDLE_STOP",
                                config::Kind::Duration,
                                "how long the OpenCode server runs with no turn in progress before it is stopped to free "
                                "its memory (its sessions stop, and resume on a new server at their next prompt); 0: never",
                                "10m"};
  spec.max = kDay;
  return spec;
}

const std::array kSettings{
    config::AgentSettingSpec{"agents.opencode.bin", "--opencode-bin", "SWITCHBOARD_OPENCODE_BIN", config::Kind::Text,
                             "OpenCode's executable: a path, or a name looked up on PATH", "opencode"},
    idle_stop_setting(),
};

}  // namespace

std::span<const config::AgentSettingSpec> opencode_settings() { return kSettings; }

OpenCodeConfig opencode_config(const config::AgentSettings& settings) {
  OpenCodeConfig config;
  if (auto bin = settings.text("agents.opencode.bin")) config.executable = *bin;
  if (const auto* idle = settings.find("agents.opencode.idle_stop"); idle != nullptr && std::holds_alternative<std::int64_t>(*idle)) {
    config.idle_stop = std::chrono::milliseconds(std::get<std::int64_t>(*idle));
  }
  // `opencode serve` does not end at EOF on stdin: the graceful step of its stop is SIGTERM, after a short wait.
  config.timeouts.stop_grace = std::chrono::milliseconds(1000);
  return config;
}

AgentDescriptor opencode_agent(boost::asio::io_context& io, OpenCodeConfig config) {
  auto descriptor = describe_runtime("opencode", std::make_shared<OpenCodeRuntime>(io, std::move(config)));
  // The server we start inherits our environment, so it keeps its database where this one looks.
  const auto database = opencode_database(environment_variable("XDG_DATA_HOME"), environment_variable("HOME"));
  descriptor.list_history = [database](const std::string& cwd) -> HistoryOutcome<HistoryList> {
    if (!database) return HistoryList{};
    return list_history(*database, cwd);
  };
  descriptor.read_history = [database](const std::string& cwd, const std::string& id,
                                       HistorySink& sink) -> HistoryOutcome<HistoryReadStats> {
    if (!database) return AdapterError{protocol::ErrorCode::UnknownHistorySession, "OpenCode keeps no history here (no HOME)"};
    return read_history(*database, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::opencode
