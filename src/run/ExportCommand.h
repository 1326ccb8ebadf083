#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "daemon/Daemon.h"

namespace switchboard::run {

struct ExportOptions {
  std::string session_id;
  std::string format = "markdown";  // or "json": session.export's formats
  std::optional<std::filesystem::path> output_file;  // else standard output
  bool standalone = false;
};

// `switchboard export SESSION [--format markdown|json] [-o FILE]`: session.export as a command, a client of the
// daemon like `run` (the user's running daemon when there is one, else a daemon in this process that opens the
// data directory's store for the length of the call). Writes the document and returns run's exit codes: 0
// written, 2 an unknown session or a file that cannot be written, 1 anything else that failed (the store, the
// daemon).
int run_export(const ExportOptions& options, daemon::DaemonOptions daemon_options);

}  // namespace switchboard::run
