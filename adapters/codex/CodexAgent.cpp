#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <spdlog/spdlog.h>

#include "codex/CodexAdapter.h"
#include "codex/CodexHistory.h"
#include "process/ChildProcess.h"
#include "process/ExecutableLookup.h"

// Discovery and registration of Codex: what `agents.list` reports, how the engine creates adapters, and how it
// reads Codex's own history (CodexHistory.h).

namespace switchboard::adapters::codex {
namespace {

// What discovery knows, shared by the descriptor's copies and the background probe.
struct Discovery {
  protocol::AgentInfo info;
  std::unique_ptr<process::ChildProcess> probe;
  std::unique_ptr<boost::asio::steady_timer> probe_deadline;
  std::string output;
};

constexpr auto kProbeTimeout = std::chrono::seconds(20);
constexpr std::size_t kMaxQuotedLength = 200;

namespace fs = std::filesystem;

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// Where the CLIs this daemon starts keep their rollouts: the private home when a provider is configured (the
// adapter points CODEX_HOME there), else the CODEX_HOME they inherit from the daemon, else $HOME/.codex.
std::optional<fs::path> history_home(const CodexConfig& config) {
  std::optional<fs::path> private_home;
  if (config.endpoint) private_home = config.endpoint->codex_home;
  return history_codex_home(private_home, environment_variable("CODEX_HOME"), environment_variable("HOME"));
}

AdapterError unknown_history_session(const std::string& cwd, const std::string& id) {
  return AdapterError{protocol::ErrorCode::UnknownHistorySession,
                      "Codex has no thread " + id.substr(0, kMaxQuotedLength) + " for " + cwd.substr(0, 500)};
}

HistoryOutcome<HistoryList> list_threads(const std::optional<fs::path>& codex_home, const std::string& cwd) {
  if (!codex_home) return HistoryList{};  // no HOME and no CODEX_HOME: the CLI could not have written any
  return list_history(*codex_home, cwd);
}

HistoryOutcome<HistoryReadStats> read_thread(const std::optional<fs::path>& codex_home, const std::string& cwd,
                                             const std::string& id, HistorySink& sink) {
  if (!codex_home || !is_thread_id(id)) return unknown_history_session(cwd, id);
  const auto file = find_rollout(*codex_home, id, cwd);
  if (!file) return unknown_history_session(cwd, id);
  const auto stats = read_history(*file, sink, *codex_home);
  if (!stats.opened) {
    return AdapterError{protocol::ErrorCode::UnknownHistorySession, "cannot read Codex's rollout file " + file->string()};
  }
  return HistoryReadStats{stats.lines, stats.malformed};
}

}  // namespace

AgentDescriptor codex_agent(boost::asio::io_context& io, CodexConfig config) {
  auto discovery = std::make_shared<Discovery>();
  discovery->info.agent = "codex";
  discovery->info.capabilities = CodexAdapter::static_capabilities();

  const char* path_variable = std::getenv("PATH");
  auto found = process::find_executable(config.executable, path_variable ? path_variable : process::default_search_path(), {});
  if (!found) {
    discovery->info.installed = false;
    discovery->info.problem = "'" + config.executable + "' not found (install it with scripts/install-agents codex, or "
                              "configure agents.codex.bin: --codex-bin, SWITCHBOARD_CODEX_BIN or the config file)";
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
        spdlog::info("codex: {} version {}", d->info.path.value_or("?"), *version);
      } else {
        d->info.installed = false;
        d->info.problem = "'" + d->info.path.value_or("codex") + " --version' failed (" + process::to_string(status) + ")";
        spdlog::warn("codex: {}", *d->info.problem);
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
  descriptor.name = "codex";
  descriptor.discover = [discovery] { return discovery->info; };
  const auto codex_home = history_home(config);
  descriptor.list_history = [codex_home](const std::string& cwd) { return list_threads(codex_home, cwd); };
  descriptor.read_history = [codex_home](const std::string& cwd, const std::string& id, HistorySink& sink) {
    return read_thread(codex_home, cwd, id, sink);
  };
  descriptor.create = [&io, config = std::move(config)](AdapterListener& listener) {
    return std::make_unique<CodexAdapter>(io, listener, config);
  };
  return descriptor;
}

}  // namespace switchboard::adapters::codex
