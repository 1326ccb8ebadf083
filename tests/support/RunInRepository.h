#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/GitRepository.h"
#include "support/RunProcess.h"
#include "support/SourceTree.h"
#include "support/TempDir.h"

namespace switchboard::testing {

// `switchboard run`, the real binary, started in the folder `sub` of a repository whose one commit holds
// sub/file.txt, with the scripted stand-in for Claude Code answering "done" and its own data directory.
struct RunInRepository {
  TempDir tmp;
  std::filesystem::path data = tmp.path() / "data";
  std::filesystem::path repo = tmp.path() / "repo";

  explicit RunInRepository(std::string_view purpose) : tmp(purpose) {
    make_repository_with_one_commit(repo, {{"sub/file.txt", "content\n"}});
  }

  // The run with `run_args` after `run --cwd <repo>/sub`, and `environment` added to the daemon's.
  RunProcess::Outcome run(const std::vector<std::string>& run_args, const std::vector<std::string>& environment = {}) {
    std::vector<std::string> args{"--data-dir", data.string(), "run", "--cwd", (repo / "sub").string()};
    args.insert(args.end(), run_args.begin(), run_args.end());
    std::vector<std::string> env{"SWITCHBOARD_CLAUDE_BIN=" + source_path("tests/fake_agents/scripted_claude.py"),
                                 "FAKE_TURN=" + nlohmann::json::array({nlohmann::json{{"text", "done"}}}).dump(),
                                 "SWITCHBOARD_LOG_LEVEL=", "NO_COLOR="};
    env.insert(env.end(), environment.begin(), environment.end());
    RunProcess process(tmp.path(), args, env);
    REQUIRE(process.started());
    return process.wait();
  }
};

}  // namespace switchboard::testing
