#pragma once

#include "daemon/Daemon.h"
#include "run/RunOptions.h"

namespace switchboard::run {

// `switchboard run`: where the turn runs, and the process around it. Attached to the user's daemon when one
// runs for the data directory (so the run shows in the console and the TUIs), else — and always with
// --standalone or --ephemeral — with a daemon in this process for the length of the run, reached over a
// socketpair with the same protocol; either way HeadlessRun is the same client. SIGINT and SIGTERM cancel
// the turn (a second one exits at once, killing the agents this process started); SIGPIPE is ignored, so a
// closed stdout only discards output. Returns the exit code (RunExitCode).
int run_headless(RunOptions options, daemon::DaemonOptions daemon_options);

}  // namespace switchboard::run
