#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "support/RunInRepository.h"
#include "support/RunProcess.h"
#include "support/SchemaValidator.h"
#include "support/TextFile.h"

// `switchboard run --worktree` in a repository with a set-up command (worktrees.setup), the real binary with the
// scripted stand-in for Claude Code: the command runs in the new worktree before the prompt, and a failing one
// fails the run with the agent never asked.

namespace run_worktree_setup_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::read_text_file;
using switchboard::testing::RunInRepository;
using switchboard::testing::RunProcess;
using switchboard::testing::SchemaValidator;

struct World : RunInRepository {
  World() : RunInRepository("run-worktree-setup") {}

  // A run in a new worktree (branch with-setup) of the repository, whose set-up command is `setup`.
  RunProcess::Outcome run_with_setup(const std::string& setup) {
    return run({"do it", "--output", "json", "--worktree=with-setup"},
               {"SWITCHBOARD_WORKTREES_SETUP=" + repo.string() + "=" + setup});
  }
};

TEST_CASE("run --worktree: the repository's set-up command runs in the new worktree before the prompt",
          "[run][worktree]") {
  World w;
  const auto outcome = w.run_with_setup("echo prepared > prepared.txt");
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
  const auto outcome = w.run_with_setup("echo cannot prepare; exit 4");
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
