#include <array>
#include <filesystem>
#include <system_error>

#include "claude-code/ClaudeCodeAdapter.h"
#include "claude-code/ClaudeHistory.h"
#include "common/CliRuntime.h"
#include "common/EnvironmentVariable.h"

// Discovery and registration of Claude Code: what `agents.list` reports, how the engine creates adapters, and
// how it reads the CLI's own history (ClaudeHistory.h).

namespace switchboard::adapters::claude {
namespace {

constexpr std::size_t kMaxSessionIdLength = 200;

namespace fs = std::filesystem;

// Where the CLIs this daemon starts keep their history: the configured CLAUDE_CONFIG_DIR, else the one the child
// inherits from the daemon's environment ($CLAUDE_CONFIG_DIR, else $HOME/.claude).
std::optional<fs::path> history_config_dir(const ClaudeCodeConfig& config) {
  if (config.endpoint.config_dir && !config.endpoint.config_dir->empty()) return fs::path(*config.endpoint.config_dir);
  return claude_config_dir(environment_variable("CLAUDE_CONFIG_DIR"), environment_variable("HOME"));
}

// A session id names a file in the project directory, never a path: letters, digits, '-', '_' and inner dots.
// Sub-agent transcripts (agent-*) are not sessions.
bool plausible_session_id(const std::string& id) {
  if (id.empty() || id.size() > kMaxSessionIdLength || id.front() == '.' || id.starts_with("agent-")) return false;
  for (const char c : id) {
    const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

AdapterError unknown_history_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                      "Claude Code has no session " + id.substr(0, kMaxSessionIdLength) + " for " + cwd.substr(0, 500)};
}

HistoryOutcome<HistoryList> list_sessions(const std::optional<fs::path>& config_dir, const std::string& cwd) {
  if (!config_dir) return HistoryList{};  // no HOME and no CLAUDE_CONFIG_DIR: the CLI could not have written any
  return list_history(*config_dir, cwd);
}

HistoryOutcome<HistoryReadStats> read_session(const std::optional<fs::path>& config_dir, const std::string& cwd,
                                              const std::string& id, HistorySink& sink) {
  if (!config_dir || !plausible_session_id(id)) return unknown_history_session(cwd, id);
  const auto directory = find_project_directory(*config_dir, cwd);
  if (!directory) return unknown_history_session(cwd, id);
  const fs::path file = *directory / (id + ".jsonl");
  std::error_code error;
  if (!fs::is_regular_file(file, error)) return unknown_history_session(cwd, id);
  const auto stats = read_history(file, sink);
  if (!stats.opened) {
    return AdapterError{protocol::ErrorCode::UnknownHistorySession, "cannot read Claude Code's history file " + file.string()};
  }
  return HistoryReadStats{stats.lines, stats.malformed};
}

// clang-format off
const std::array kSettings{
  config::AgentSettingSpec{"agents.claude.bin", "--claude-bin", "SWITCHBOARD_CLAUDE_BIN", config::Kind::Text,
                           "Claude Code's executable: a path, or a name looked up on PATH", "claude"},
  config::AgentSettingSpec{"agents.claude.default_model", "--claude-default-model", "SWITCHBOARD_CLAUDE_DEFAULT_MODEL",
                           config::Kind::Text,
                           "model of every Claude Code turn that names none (a session's own model, chosen at create or "
                           "with setModel, wins)"},
};
// clang-format on

}  // namespace

std::span<const config::AgentSettingSpec> claude_code_settings() { return kSettings; }

ClaudeCodeConfig claude_code_config(const config::AgentSettings& settings) {
  ClaudeCodeConfig config;
  if (auto bin = settings.text("agents.claude.bin")) config.executable = *bin;
  config.file_pool = std::make_shared<boost::asio::thread_pool>(1);
  return config;
}

AgentDescriptor claude_code_agent(boost::asio::io_context& io, ClaudeCodeConfig config) {
  const auto history = history_config_dir(config);
  auto name = config.agent_name;
  auto descriptor = describe_cli_agent<ClaudeCodeAdapter>(io, std::move(name), std::move(config), &parse_version_output);
  descriptor.list_history = [config_dir = history](const std::string& cwd) { return list_sessions(config_dir, cwd); };
  descriptor.read_history = [config_dir = history](const std::string& cwd, const std::string& id, HistorySink& sink) {
    return read_session(config_dir, cwd, id, sink);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::claude
