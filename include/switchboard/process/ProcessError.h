#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include <boost/system/result.hpp>

namespace switchboard::process {

// An expected failure of the process layer, as a value: a CLI that is not installed, a working directory that
// is gone, a child that reads its stdin too slowly. The message is lower-case, names what was being done and
// is safe to log or show a user (it never contains environment values).
struct ProcessError {
  enum class Code {
    ExecutableNotFound,       // no such file, or not found on PATH
    NotExecutable,            // found, but not a regular executable file (permissions, directory, bad format)
    WorkingDirectoryInvalid,  // the requested working directory does not exist or is not a directory
    InvalidSpec,              // empty program, NUL bytes in an argument, a bad environment name
    ResourceExhausted,        // out of file descriptors, processes or registry slots
    SpawnFailed,              // any other failure of pipe creation or the spawn
    StdinQueueFull,           // write_stdin would exceed the bounded stdin queue; nothing was queued
    StdinClosed,              // write_stdin after close_stdin, after the child closed its stdin, or after exit
  };

  Code code = Code::SpawnFailed;
  std::string message;
  int system_errno = 0;  // the errno behind it, 0 if none
};

std::string_view to_string(ProcessError::Code code);
// "<code>: <message>", for logs and test output.
std::ostream& operator<<(std::ostream& out, const ProcessError& error);

// result<T, ProcessError>: check it (`if (!r)`), then use `*r` or `r.error()`. value() does not compile on
// purpose: a process failure is never turned into an exception.
template <class T>
using ProcessResult = boost::system::result<T, ProcessError>;

}  // namespace switchboard::process
