#pragma once

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::run {

// The exit codes of `switchboard run`, one per RunStatus (docs/run.md; `switchboard run --help` lists them).
enum RunExitCode : int {
  kRunCompleted = 0,     // the turn ended normally and nothing was denied
  kRunFailed = 1,        // the agent or its model provider failed (or another client cancelled the turn)
  kRunInvalid = 2,       // usage or configuration error (bad flag, unknown agent/session, bad directory)
  kRunUnavailable = 3,   // the agent cannot run (not installed, wrong version, could not start)
  kRunBlocked = 4,       // a permission was denied (--on-ask fail stops at the first ask)
  kRunTimedOut = 124,    // --timeout or --idle-timeout ran out: the turn was cancelled
  kRunInterrupted = 130, // SIGINT
  kRunTerminated = 143,  // SIGTERM
};

// The status a code stands for (130 and 143 both are `interrupted`).
constexpr protocol::RunStatus status_of(RunExitCode code) {
  switch (code) {
    case kRunCompleted: return protocol::RunStatus::Completed;
    case kRunFailed: return protocol::RunStatus::Failed;
    case kRunInvalid: return protocol::RunStatus::Invalid;
    case kRunUnavailable: return protocol::RunStatus::Unavailable;
    case kRunBlocked: return protocol::RunStatus::Blocked;
    case kRunTimedOut: return protocol::RunStatus::Timeout;
    case kRunInterrupted:
    case kRunTerminated: return protocol::RunStatus::Interrupted;
  }
  return protocol::RunStatus::Failed;
}

// The text `--help` ends with.
inline constexpr const char* kRunExitCodesHelp =
    "Exit codes: 0 success; 1 the agent or its provider failed; 2 usage or configuration error; 3 agent\n"
    "unavailable (not installed, bad version, cannot start); 4 blocked by a permission (a denied ask, or\n"
    "--on-ask fail at the first ask); 124 --timeout/--idle-timeout (the turn is cancelled); 130 SIGINT, 143 SIGTERM.";

}  // namespace switchboard::run
