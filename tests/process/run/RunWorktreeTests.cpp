#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/GitRepository.h"
#include "support/RunInRepository.h"
#include "support/SchemaValidator.h"

// `switchboard run --worktree [BRANCH]`, the real binary, with the scripted stand-in for Claude Code: the run's
// session works in a new worktree of the repository it was started in, on a new branch it leaves behind, named in
// the JSON result and on stderr; the checkout it was started in is left as it was.

namespace run_worktree_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::git_output;
using switchboard::testing::RunInRepository;
using switchboard::testing::SchemaValidator;

TEST_CASE("run --worktree: the run works in a new worktree on a new branch, printed and in the JSON result", "[run][worktree]") {
  RunInRepository w{"run-worktree"};
  const auto outcome = w.run({"do it", "--output", "json", "--worktree=feature-x"});
  INFO("stdout: " << outcome.out << "\nstderr: " << outcome.err);
  CHECK(outcome.exit == 0);
  const auto result = json::parse(outcome.out, nullptr, false);
  REQUIRE(result.is_object());
  static const SchemaValidator validator;
  CHECK(validator.validate_type("RunResult", result).empty());
  REQUIRE(result.contains("worktree"));
  const auto& worktree = result["worktree"];
  CHECK(worktree["branch"] == "feature-x");
  CHECK(worktree["base"] == "main");
  CHECK(worktree["repository"] == fs::canonical(w.repo).string());
  const fs::path path = worktree["path"].get<std::string>();
  CHECK(path.parent_path() == fs::weakly_canonical(w.data / "worktrees"));
  CHECK(fs::exists(path / "sub" / "file.txt"));
  CHECK(git_output(path, "rev-parse --abbrev-ref HEAD") == "feature-x\n");
  CHECK(git_output(w.repo, "status --porcelain").empty());
  CHECK(git_output(w.repo, "rev-parse --abbrev-ref HEAD") == "main\n");
}

TEST_CASE("run --worktree: without a name the branch comes from the title, and the text output names it", "[run][worktree]") {
  RunInRepository w{"run-worktree"};
  const auto outcome = w.run({"do it", "--title", "Tidy up", "--worktree"});
  INFO("stdout: " << outcome.out << "\nstderr: " << outcome.err);
  CHECK(outcome.exit == 0);
  CHECK(outcome.err.find("branch switchboard/tidy-up in ") != std::string::npos);
  CHECK(git_output(w.repo, "rev-parse --verify --quiet refs/heads/switchboard/tidy-up").size() == 41);
}

TEST_CASE("run --worktree: refused outside a repository and with a session to continue", "[run][worktree]") {
  RunInRepository w{"run-worktree"};
  fs::remove_all(w.repo / ".git");
  const auto outside = w.run({"do it", "--output", "json", "--worktree"});
  CHECK(outside.exit != 0);
  CHECK(outside.out.find("not inside a git repository") != std::string::npos);
  const auto excluded = w.run({"do it", "--continue", "--worktree"});
  CHECK(excluded.exit == 2);
}

}  // namespace run_worktree_tests
