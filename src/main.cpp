// switchboard: one local daemon that hosts coding agents behind one protocol.
// This file only parses the command line and hands over to Daemon.

#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "daemon/Daemon.h"
#include "daemon/Logging.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

int main(int argc, char** argv) {
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
  auto* stdio = app.add_subcommand("stdio", "serve JSON-RPC 2.0 over NDJSON on stdin/stdout");
  stdio->add_option("--max-line-bytes", options.max_line_bytes, "longest request line accepted")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30))
      ->capture_default_str();

  auto* version = app.add_subcommand("version", "print the version and protocol version");

  CLI11_PARSE(app, argc, argv);

  if (*version) {
    std::cout << "switchboard " << switchboard::kVersion << " (protocol " << switchboard::protocol::kProtocolVersion
              << ")\n";
    return 0;
  }
  if (auto error = switchboard::daemon::configure_logging(log_level, log_file)) {
    std::cerr << "switchboard: " << *error << "\n";
    return 2;
  }
  if (*stdio) {
    switchboard::daemon::Daemon daemon(options);
    return daemon.run_stdio();
  }
  return 2;
}
