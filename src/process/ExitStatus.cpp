#include "switchboard/process/ExitStatus.h"

#include <sys/wait.h>

#include <cstring>
#include <ostream>

namespace switchboard::process {

ExitStatus ExitStatus::from_wait_status(int status) {
  if (WIFEXITED(status)) return exited(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return signaled(WTERMSIG(status), WCOREDUMP(status));
  return {};
}

std::string to_string(const ExitStatus& status) {
  switch (status.kind) {
    case ExitStatus::Kind::Exited:
      return "exited with code " + std::to_string(status.code);
    case ExitStatus::Kind::Signaled: {
      std::string text = "killed by signal " + std::to_string(status.signal);
      // sigabbrev_np (glibc 2.32) gives "KILL"; it is async-signal-safe and never allocates.
      if (const char* name = ::sigabbrev_np(status.signal)) text += std::string(" (SIG") + name + ")";
      if (status.core_dumped) text += ", core dumped";
      return text;
    }
    case ExitStatus::Kind::Unknown:
      break;
  }
  return "exit status unknown (reaped elsewhere)";
}

std::ostream& operator<<(std::ostream& out, const ExitStatus& status) { return out << to_string(status); }

}  // namespace switchboard::process
