#include "pi/PiAgent.h"

#include <array>
#include <memory>

#include "common/EnvironmentVariable.h"
#include "pi/PiHistory.h"

namespace switchboard::adapters::pi {
namespace {

namespace fs = std::filesystem;

AdapterError unknown_history_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession, "Pi has no session " + id.substr(0, 200) + " for " + cwd.substr(0, 500)};
}

HistoryOutcome<HistoryReadStats> read_session(const SessionPlaces& places, const std::string& cwd, const std::string& id, HistorySink& sink) {
  const auto folder = session_folder(places, cwd);
  const auto file = folder ? find_session_file(*folder, cwd, id) : std::nullopt;
  if (!file) return unknown_history_session(cwd, id);
  const auto stats = read_history(*file, sink);
  if (!stats.opened) return AdapterError{protocol::ErrorCode::UnknownHistorySession, "cannot read Pi's session file " + file->string()};
  return HistoryReadStats{stats.lines, stats.malformed};
}

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.pi.bin", "--pi-bin", "SWITCHBOARD_PI_BIN", config::Kind::Text,
                           "Pi's executable: a path, or a name looked up on PATH", "pi"},
  config::AgentSettingSpec{"agents.pi.node", "--pi-node", "SWITCHBOARD_PI_NODE", config::Kind::Text,
                           "the Node that runs Pi (unset: node on PATH if it is >= 22.19, else the one installed "
                           "beside Pi)"},
  config::AgentSettingSpec{"agents.pi.default_model", "--pi-default-model", "SWITCHBOARD_PI_DEFAULT_MODEL",
                           config::Kind::Text,
                           "model of every Pi turn that names none, as provider/model (a session's own model wins)"},
  config::AgentSettingSpec{"agents.pi.extension_dir", "--pi-extension-dir", "SWITCHBOARD_PI_EXTENSION_DIR",
                           config::Kind::Path,
                           "where the daemon writes the Pi extension that asks before every tool call (default: pi "
                           "in data_dir)", {}, "pi"},
};
// clang-format on

}  // namespace

std::span<const config::AgentSettingSpec> pi_settings() { return kSettings; }

PiConfig pi_config(const config::AgentSettings& settings) {
  PiConfig config;
  if (auto bin = settings.text("agents.pi.bin")) config.executable = *bin;
  config.node = settings.text("agents.pi.node");
  if (auto dir = settings.text("agents.pi.extension_dir")) config.extension_dir = *dir;
  return config;
}

AgentDescriptor pi_agent(boost::asio::io_context& io, PiConfig config) {
  auto runtime = std::make_shared<PiRuntime>(io, std::move(config));
  runtime->locate();
  auto descriptor = describe_runtime("pi", std::move(runtime));
  // Pi runs with the daemon's environment, so it keeps its sessions where this environment (and Pi's settings)
  // say.
  const auto places = session_places(environment_variable("PI_CODING_AGENT_DIR"), environment_variable("PI_CODING_AGENT_SESSION_DIR"),
                                     environment_variable("HOME"));
  descriptor.list_history = [places](const std::string& cwd) -> HistoryOutcome<HistoryList> {
    const auto folder = session_folder(places, cwd);
    if (!folder) return HistoryList{};
    return list_history(*folder, cwd);
  };
  descriptor.read_history = [places](const std::string& cwd, const std::string& id, HistorySink& sink) {
    return read_session(places, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::pi
