#pragma once

#include <filesystem>
#include <string_view>

#include "switchboard/process/ProcessError.h"

namespace switchboard::process {

// Finds the file a spawn will execute, before spawning, so that "the CLI is not installed" is a typed
// ExecutableNotFound error and not an exit code 127 that could also be the CLI's own (through the exec shim
// there is no other way to tell). It also pins the file: the child runs what was checked.
//
// - A program containing '/' is a path: relative paths are taken against `working_directory` (what the
//   child's execve would see after its chdir), or against the daemon's directory if that is empty.
// - A bare name is looked up in `search_path` (a PATH value; empty entries are skipped, unlike execvp, so
//   that a stray "::" never makes the working directory, often a repository a model writes to, searchable).
//
// The result is an absolute path to a regular file the daemon may execute. It is a check, not a guarantee: the
// file can change before the exec, in which case the spawn reports what execve said.
ProcessResult<std::filesystem::path> find_executable(std::string_view program, std::string_view search_path,
                                                     const std::filesystem::path& working_directory);

// The default search path when the child's environment has no PATH (confstr(_CS_PATH), e.g. "/bin:/usr/bin").
std::string default_search_path();

}  // namespace switchboard::process
