// switchboard: one local daemon that hosts coding agents behind one protocol.
// This file only parses the command line and hands over to Daemon.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"
#include "daemon/Daemon.h"
#include "daemon/Logging.h"
#include "process/ExecShim.h"
#include "process/FatalSignalCleanup.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

namespace {

// Where state lives and how much of it is kept, shared by `serve` and `stdio`.
void add_state_options(CLI::App& command, switchboard::daemon::DaemonOptions& options, std::string& data_dir) {
  command.add_option("--data-dir", data_dir,
                     "state directory: database, event log, lock (one daemon per directory; default "
                     "$SWITCHBOARD_DATA_DIR, $XDG_DATA_HOME/switchboard or ~/.local/share/switchboard)");
  command.add_flag("--ephemeral", options.ephemeral,
                   "keep nothing on disk: sessions and events live only as long as this process");
  command.add_option("--max-stored-events", options.store.event_log.max_events,
                     "event log retention: the oldest events beyond this many are deleted")
      ->check(CLI::Range(std::uint64_t{1000}, std::uint64_t{1} << 40))
      ->capture_default_str();
}

// Options of the HTTP transport, shared by `serve` and `stdio --http`.
void add_http_options(CLI::App& command, switchboard::daemon::HttpOptions& http) {
  command.add_option("--host", http.server.host, "address to listen on (loopback unless --allow-remote)")
      ->capture_default_str();
  command.add_option("--port", http.server.port, "port to listen on; 0 picks a free one; a taken port is "
                                                 "followed by the next ones")
      ->capture_default_str();
  command.add_flag("--allow-remote", http.server.allow_remote, "allow a non-loopback --host (the token stays required)");
  command.add_option("--allow-host", http.allowed_hosts, "extra Host header name to accept (repeatable)");
  command.add_option("--allow-origin", http.cors_origins, "extra browser origin allowed to use the API, e.g. "
                                                          "http://localhost:5173 (repeatable)");
  command.add_option("--max-body-bytes", http.max_body_bytes, "largest POST /rpc body")->capture_default_str();
  command.add_option("--sse-heartbeat-ms", http.sse.heartbeat, "SSE comment heartbeat interval");
  command.add_option("--sse-history-events", http.sse.history_events, "events kept for Last-Event-ID replay")
      ->capture_default_str();
}

}  // namespace

int main(int argc, char** argv) {
  // `switchboard __exec-shim ...` is how the daemon starts agents (see process/ExecShim.h): it must exec at
  // once, before any option parsing or logging set-up.
  if (switchboard::process::is_exec_shim_call(argc, argv)) return switchboard::process::run_exec_shim(argc, argv);
  // A crash or exit() of the daemon SIGKILLs the agent process groups it started (process/FatalSignalCleanup.h).
  switchboard::process::install_fatal_signal_cleanup();

  CLI::App app{"switchboard: hosts coding agents behind one JSON-RPC protocol"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may also follow the subcommand
  app.set_version_flag("--version", std::string(switchboard::kVersion));

  std::string log_level = "info";
  std::string log_file;
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error, critical or off (logs go to stderr)")
      ->envname("SWITCHBOARD_LOG_LEVEL");
  app.add_option("--log-file", log_file, "also append logs to this file")->envname("SWITCHBOARD_LOG_FILE");

  switchboard::daemon::DaemonOptions options;
  switchboard::daemon::HttpOptions http;
  std::string data_dir;

  auto* stdio = app.add_subcommand("stdio", "serve JSON-RPC 2.0 over NDJSON on stdin/stdout");
  stdio->add_option("--max-line-bytes", options.max_line_bytes, "longest request line accepted")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();
  bool stdio_http = false;
  stdio->add_flag("--http", stdio_http, "also serve HTTP + SSE from this process (same sessions and events)");
  add_state_options(*stdio, options, data_dir);
  add_http_options(*stdio, http);

  auto* serve = app.add_subcommand("serve", "serve JSON-RPC over HTTP and events over SSE on localhost");
  add_state_options(*serve, options, data_dir);
  add_http_options(*serve, http);

  auto* version = app.add_subcommand("version", "print the version and protocol version");

  CLI11_PARSE(app, argc, argv);

  if (*version) {
    std::cout << "switchboard " << switchboard::kVersion << " (protocol " << switchboard::protocol::kProtocolVersion
              << ")\n";
    return switchboard::daemon::kExitOk;
  }
  if (auto error = switchboard::daemon::configure_logging(log_level, log_file)) {
    std::cerr << "switchboard: " << *error << "\n";
    return switchboard::daemon::kExitUsage;
  }
  if (!data_dir.empty()) options.data_dir = data_dir;
  // The agents this binary hosts. Each adapter finds its CLI and provider from the environment (see
  // docs/agents/*.md); the daemon itself knows them only as descriptors.
  options.agents = [data_dir](boost::asio::io_context& io) {
    namespace claude = switchboard::adapters::claude;
    namespace codex = switchboard::adapters::codex;
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    claude::ClaudeCodeConfig claude_config;
    if (const char* bin = std::getenv("SWITCHBOARD_CLAUDE_BIN"); bin && *bin) claude_config.executable = bin;
    claude_config.exec_shim = self;
    claude_config.file_pool = std::make_shared<boost::asio::thread_pool>(1);
    const auto state_dir = data_dir.empty() ? switchboard::daemon::DataDirectory::default_path() : std::filesystem::path(data_dir);
    auto codex_config = codex::codex_config_from_environment(state_dir / "codex-home");
    codex_config.exec_shim = self;
    std::vector<switchboard::adapters::AgentDescriptor> agents;
    agents.push_back(claude::claude_code_agent(io, std::move(claude_config)));
    agents.push_back(codex::codex_agent(io, std::move(codex_config)));
    return agents;
  };
  if (*stdio) {
    if (stdio_http) options.http = http;
    switchboard::daemon::Daemon daemon(options);
    return daemon.run_stdio();
  }
  if (*serve) {
    options.http = http;
    switchboard::daemon::Daemon daemon(options);
    return daemon.run_serve();
  }
  return switchboard::daemon::kExitUsage;
}
