#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/GitRepository.h"
#include "support/RunProcess.h"
#include "support/SchemaValidator.h"
#include "support/SourceTree.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// `switchboard run --worktree` in a repository with a set-up command (worktrees.setup), the real binary with the
// scripted stand-in for Claude Code: the command runs in the new worktree before the prompt, and a failing one
// fails the run with the agent never asked.

namespace run_worktree_setup_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::make_repository_with_one_commit;
using switchboard::testing::read_text_file;
using switchboard::testing::RunProcess;
using switchboard::testing::SchemaValidator;
using switchboard::testing::TempDir;

struct World {
  TempDir tmp{"run-worktree-setup"};
  fs::path data = tmp.path() / "data";
  fs::path repo = tmp.path() / "repo";
  fs::path agent_log = tmp.path() / "agent-ran";

  World() { make_repository_with_one_commit(repo, {{"file.txt", "content\n"}}); }

  RunProcess::Outcome run(const std::string& setup) {
    RunProcess process(tmp.path(),
                       {"--data-dir", data.string(), "run", "--cwd", repo.string(), "do it", "--output", "json",
                        "--worktree=with-setup"},
                       {"SWITCHBOARD_CLAUDE_BIN=" + switchboard::testing::source_path("tests/fake_agents/scripted_claude.py"),
                        "FAKE_TURN=" + json::array({json{{"text", "done"}}}).dump(),
                        "SWITCHBOARD_WORKTREES_SETUP=" + repo.string() + "=" + setup, "SWITCHBOARD_LOG_LEVEL=",
                        "NO_COLOR="});
    REQUIRE(process.started());
    return process.wait();
  }
};

TEST_CASE("run --worktree: the repository's set-up command runs in the new worktree before the prompt",
          "[run][worktree]") {
  World w;
  const auto outcome = w.run("echo prepared > prepared.txt");
  INFO("stdout: " << outcome.out << "\nstderr: " << outcome.err);
  CHECK(outcome.exit == 0);
  const auto result = json::parse(outcome.out, nullptr, false);
  REQUIRE(result.is_object());
  static const SchemaValidator validator;
  CHECK(validator.validate_type("RunResult", result).empty());
  CHECK(result["text"] == "done");
  REQUIRE(result["tools"].size() == 1);  // the set-up, shown as the turn's tool call
  CHECK(result["tools"][0]["tool"] == "setup");
  CHECK(result["tools"][0]["isError"] == false);
  const fs::path path = result["worktree"]["path"].get<std::string>();
  CHECK(read_text_file(path / "prepared.txt") == "prepared\n");
  CHECK(!fs::exists(w.repo / "prepared.txt"));
  CHECK(result["worktree"]["setup"] == "done");
}

TEST_CASE("run --worktree: a failing set-up command fails the run", "[run][worktree]") {
  World w;
  const auto outcome = w.run("echo cannot prepare; exit 4");
  INFO("stdout: " << outcome.out << "\nstderr: " << outcome.err);
  CHECK(outcome.exit != 0);
  const auto result = json::parse(outcome.out, nullptr, false);
  REQUIRE(result.is_object());
  CHECK(result["status"] != "completed");
  CHECK(result.value("text", "") != "done");  // the agent never answered
  CHECK(result.dump().find("set-up command exited with code 4") != std::string::npos);
  REQUIRE(result.contains("worktree"));  // left for the user to look at
  CHECK(result["worktree"]["setup"] == "failed");
}

}  // namespace run_worktree_setup_tests
