#include "switchboard/process/ProcessError.h"

#include <ostream>

namespace switchboard::process {

std::string_view to_string(ProcessError::Code code) {
  switch (code) {
    case ProcessError::Code::ExecutableNotFound:
      return "executable not found";
    case ProcessError::Code::NotExecutable:
      return "not executable";
    case ProcessError::Code::WorkingDirectoryInvalid:
      return "invalid working directory";
    case ProcessError::Code::InvalidSpec:
      return "invalid spawn spec";
    case ProcessError::Code::ResourceExhausted:
      return "resources exhausted";
    case ProcessError::Code::SpawnFailed:
      return "spawn failed";
    case ProcessError::Code::StdinQueueFull:
      return "stdin queue full";
    case ProcessError::Code::StdinClosed:
      return "stdin closed";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, const ProcessError& error) {
  return out << to_string(error.code) << ": " << error.message;
}

}  // namespace switchboard::process
