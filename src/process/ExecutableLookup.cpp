#include "switchboard/process/ExecutableLookup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

namespace switchboard::process {

namespace {

enum class Candidate { Executable, Missing, NotExecutable };

// Why a candidate is not usable, for the error message.
struct Verdict {
  Candidate candidate = Candidate::Missing;
  std::string reason;
};

Verdict check_candidate(const std::filesystem::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return {Candidate::Missing, std::strerror(errno)};
    return {Candidate::NotExecutable, std::strerror(errno)};
  }
  if (!S_ISREG(info.st_mode)) return {Candidate::NotExecutable, "not a regular file"};
  // access() checks with the real uid, which is what a non-setuid daemon executes with.
  if (::access(path.c_str(), X_OK) != 0) return {Candidate::NotExecutable, std::strerror(errno)};
  return {Candidate::Executable, {}};
}

// The daemon's directory; empty if it was deleted under us (then relative paths simply do not resolve).
std::filesystem::path daemon_directory() {
  std::error_code error;
  auto directory = std::filesystem::current_path(error);
  return error ? std::filesystem::path() : directory;
}

std::filesystem::path absolute_from(const std::filesystem::path& path, const std::filesystem::path& base) {
  if (path.is_absolute()) return path;
  if (!base.empty()) return (base.is_absolute() ? base : daemon_directory() / base) / path;
  return daemon_directory() / path;
}

}  // namespace

std::string default_search_path() {
  const std::size_t size = ::confstr(_CS_PATH, nullptr, 0);
  if (size == 0) return "/usr/bin:/bin";
  std::string value(size, '\0');
  ::confstr(_CS_PATH, value.data(), size);
  value.resize(size - 1);  // drop the terminating NUL confstr counts
  return value;
}

ProcessResult<std::filesystem::path> find_executable(std::string_view program, std::string_view search_path,
                                                     const std::filesystem::path& working_directory) {
  if (program.empty()) return ProcessError{ProcessError::Code::InvalidSpec, "empty program name", 0};
  if (program.find('\0') != std::string_view::npos)
    return ProcessError{ProcessError::Code::InvalidSpec, "program name contains a NUL byte", 0};

  if (program.find('/') != std::string_view::npos) {
    const auto path = absolute_from(std::filesystem::path(program), working_directory).lexically_normal();
    const Verdict verdict = check_candidate(path);
    switch (verdict.candidate) {
      case Candidate::Executable:
        return path;
      case Candidate::Missing:
        return ProcessError{ProcessError::Code::ExecutableNotFound,
                            "cannot run " + std::string(program) + ": no such file (" + path.string() + ")", ENOENT};
      case Candidate::NotExecutable:
        return ProcessError{ProcessError::Code::NotExecutable,
                            "cannot run " + path.string() + ": " + verdict.reason, EACCES};
    }
  }

  // Like execvp: the first executable match wins; a match that is not executable is remembered and reported
  // only if nothing executable comes later (so "found but not executable" is distinguished from "missing").
  std::optional<std::string> unusable;
  std::string_view rest = search_path;
  while (true) {
    const auto colon = rest.find(':');
    const std::string_view directory = rest.substr(0, colon);
    if (!directory.empty()) {
      const auto path = absolute_from(std::filesystem::path(directory) / std::string(program), working_directory);
      const Verdict verdict = check_candidate(path);
      if (verdict.candidate == Candidate::Executable) return path.lexically_normal();
      if (verdict.candidate == Candidate::NotExecutable && !unusable)
        unusable = path.string() + ": " + verdict.reason;
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  if (unusable)
    return ProcessError{ProcessError::Code::NotExecutable, "cannot run " + std::string(program) + ": " + *unusable,
                        EACCES};
  return ProcessError{ProcessError::Code::ExecutableNotFound,
                      "cannot run " + std::string(program) + ": not found on PATH", ENOENT};
}

}  // namespace switchboard::process
