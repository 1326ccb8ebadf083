#pragma once

#include <iosfwd>
#include <string>

namespace switchboard::process {

// How a child process ended, decoded from its wait status.
struct ExitStatus {
  enum class Kind {
    Exited,    // called exit(): `code` holds the exit code
    Signaled,  // killed by a signal: `signal` holds it
    Unknown,   // reaped by someone else (a stray waitpid(-1) elsewhere in the process): a bug, but not a hang
  };

  Kind kind = Kind::Unknown;
  int code = 0;
  int signal = 0;
  bool core_dumped = false;

  static ExitStatus exited(int code) { return {Kind::Exited, code, 0, false}; }
  static ExitStatus signaled(int signal, bool core_dumped = false) { return {Kind::Signaled, 0, signal, core_dumped}; }
  // Decodes a status from waitpid().
  static ExitStatus from_wait_status(int status);

  bool success() const { return kind == Kind::Exited && code == 0; }
  friend bool operator==(const ExitStatus&, const ExitStatus&) = default;
};

// "exited with code 3", "killed by signal 9 (SIGKILL)", for logs and error messages shown to users.
std::string to_string(const ExitStatus& status);
std::ostream& operator<<(std::ostream& out, const ExitStatus& status);

}  // namespace switchboard::process
