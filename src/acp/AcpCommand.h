#pragma once

#include <string>

#include "daemon/Daemon.h"

namespace switchboard::acp {

struct AcpOptions {
  std::string agent;
  std::string cwd;  // default for sessions the editor opens without one
  bool standalone = false;  // never attach: host a daemon in this process
};

// `switchboard acp`: serves the Agent Client Protocol on stdin/stdout for `options.agent`, as a client of the
// user's running daemon when there is one (its socket), else of a daemon hosted in this process for as long as
// the editor keeps us. Returns the exit code.
int run_acp(AcpOptions options, daemon::DaemonOptions daemon_options);

}  // namespace switchboard::acp
