#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include "claude-code/ClaudeCodeAdapter.h"
#include "claude-code/ClaudeHistory.h"
#include "process/ChildProcess.h"
#include "process/ExecutableLookup.h"
#include "switchboard/support/Clock.h"

// Discovery and registration of Claude Code: what `agents.list` reports, how the engine creates adapters, and
// how it reads the CLI's own history (ClaudeHistory.h).

namespace switchboard::adapters::claude {
namespace {

// What discovery knows, shared by the descriptor's copies and the background probe.
struct Discovery {
  protocol::AgentInfo info;
  std::unique_ptr<process::ChildProcess> probe;
  std::unique_ptr<boost::asio::steady_timer> probe_deadline;
  std::string output;
};

constexpr auto kProbeTimeout = std::chrono::seconds(20);
constexpr std::size_t kMaxSessionIdLength = 200;

namespace fs = std::filesystem;

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

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
  HistoryList list;
  if (!config_dir) return list;  // no HOME and no CLAUDE_CONFIG_DIR: the CLI could not have written any
  auto listing = list_history(*config_dir, cwd);
  list.skipped_files = listing.skipped_files;
  list.skipped_lines = listing.malformed_lines;
  list.sessions.reserve(listing.sessions.size());
  for (auto& session : listing.sessions) {
    HistoryEntry entry;
    entry.provider_session_id = std::move(session.provider_session_id);
    entry.title = std::move(session.title);
    entry.cwd = session.cwd.empty() ? cwd : std::move(session.cwd);
    if (session.started_at) entry.created_at = parse_iso8601_millis(*session.started_at);
    entry.updated_at = session.modified_at_ms;
    entry.prompts = static_cast<std::int64_t>(session.prompts);
    entry.path = session.path.string();
    list.sessions.push_back(std::move(entry));
  }
  return list;
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

}  // namespace

AgentDescriptor claude_code_agent(boost::asio::io_context& io, ClaudeCodeConfig config) {
  auto discovery = std::make_shared<Discovery>();
  discovery->info.agent = "claude";
  discovery->info.capabilities = ClaudeCodeAdapter::static_capabilities();

  const char* path_variable = std::getenv("PATH");
  auto found = process::find_executable(config.executable, path_variable ? path_variable : process::default_search_path(), {});
  if (!found) {
    discovery->info.installed = false;
    discovery->info.problem = "'" + config.executable + "' not found (install it with scripts/install-agents claude, or "
                              "configure agents.claude.bin: --claude-bin, SWITCHBOARD_CLAUDE_BIN or the config file)";
  } else {
    // Installed as far as the file system can tell; `--version` runs in the background (it takes a second or
    // two) and fills in the version, or the problem if the binary does not run.
    discovery->info.installed = true;
    discovery->info.path = found->string();
    process::SpawnSpec spec;
    const auto argv = version_command(found->string());
    spec.program = argv.front();
    spec.args.assign(argv.begin() + 1, argv.end());
    spec.exec_shim = config.exec_shim;
    process::ChildProcess::Handlers handlers;
    handlers.on_stdout_line = [weak = std::weak_ptr<Discovery>(discovery)](std::string_view line) {
      if (auto d = weak.lock()) d->output.append(line).append("\n");
    };
    handlers.on_exit = [weak = std::weak_ptr<Discovery>(discovery), &io](const process::ExitStatus& status) {
      auto d = weak.lock();
      if (!d) return;
      if (auto version = parse_version_output(d->output); version && status.success()) {
        d->info.version = *version;
        spdlog::info("claude: {} version {}", d->info.path.value_or("?"), *version);
      } else {
        d->info.installed = false;
        d->info.problem = "'" + d->info.path.value_or("claude") + " --version' failed (" + process::to_string(status) + ")";
        spdlog::warn("claude: {}", *d->info.problem);
      }
      if (d->probe_deadline) d->probe_deadline->cancel();
      boost::asio::post(io, [probe = std::shared_ptr<process::ChildProcess>(std::move(d->probe))] {});
    };
    if (auto probe = process::ChildProcess::spawn(io, std::move(spec), std::move(handlers))) {
      discovery->probe = std::move(*probe);
      // A probe that hangs is killed; its exit then reports the problem.
      discovery->probe_deadline = std::make_unique<boost::asio::steady_timer>(io, kProbeTimeout);
      discovery->probe_deadline->async_wait([weak = std::weak_ptr<Discovery>(discovery)](const boost::system::error_code& error) {
        auto d = weak.lock();
        if (!error && d && d->probe) d->probe->kill();
      });
    } else {
      discovery->info.installed = false;
      discovery->info.problem = "cannot run '" + found->string() + " --version': " + probe.error().message;
    }
  }
  if (found) config.executable = found->string();

  AgentDescriptor descriptor;
  descriptor.name = "claude";
  descriptor.discover = [discovery] { return discovery->info; };
  const auto config_dir = history_config_dir(config);
  descriptor.list_history = [config_dir](const std::string& cwd) { return list_sessions(config_dir, cwd); };
  descriptor.read_history = [config_dir](const std::string& cwd, const std::string& id, HistorySink& sink) {
    return read_session(config_dir, cwd, id, sink);
  };
  descriptor.create = [&io, config = std::move(config)](AdapterListener& listener) {
    return std::make_unique<ClaudeCodeAdapter>(io, listener, config);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::claude
