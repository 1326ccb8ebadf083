#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "support/TextFile.h"

namespace switchboard::testing {

// git run in `dir` as a user would, with the test's own identity and none of the machine's configuration (global
// or system); what it printed, its errors included, so a test that compares it says why git failed.
inline std::string git_output(const std::filesystem::path& dir, const std::string& args) {
  const std::string line = "cd '" + dir.string() +
                           "' && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -c user.name=Tester "
                           "-c user.email=tester@example.com " + args + " 2>&1";
  std::string out;
  if (FILE* pipe = ::popen(line.c_str(), "r")) {
    char buffer[4096];
    while (const auto got = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, got);
    ::pclose(pipe);
  }
  return out;
}

// Makes `dir` a repository on branch main whose one commit ("init") holds `files` (a path relative to `dir`, and
// its content) with whatever `dir` already held. Throws when git did not make the commit, with git's own words.
inline void make_repository_with_one_commit(const std::filesystem::path& dir,
                                            const std::map<std::string, std::string>& files) {
  for (const auto& [path, content] : files) write_text_file(dir / path, content);
  std::string said = git_output(dir, "init -q -b main");
  said += git_output(dir, "add -A");
  said += git_output(dir, "commit -q -m init");
  if (git_output(dir, "rev-parse --verify -q HEAD").empty()) {
    throw std::runtime_error("git made no first commit in " + dir.string() + ": " + said);
  }
}

}  // namespace switchboard::testing
