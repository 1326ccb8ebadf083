#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/GitRepository.h"
#include "support/StdioTestDaemon.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// Worktree sessions through the real daemon (the tests' daemon, whose `controls` agent writes files as a tool
// call): two sessions in worktrees of one repository write the same file differently, the user's checkout is
// unchanged until a merge, the first merge succeeds, the second answers MergeConflict with data.files and leaves
// the checkout clean, session.list shows the branches, and a restarted daemon still has the sessions in their
// worktrees.

namespace worktree_daemon_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Daemon = switchboard::testing::StdioTestDaemon;
using switchboard::testing::git_output;
using switchboard::testing::make_repository_with_one_commit;
using switchboard::testing::read_text_file;
using switchboard::testing::TempDir;

TEST_CASE("worktree sessions through the daemon: two sessions change one file, the first merges, the second "
          "conflicts and the checkout stays clean, and a restart keeps them",
          "[worktree][daemon]") {
  TempDir data("worktree-daemon-data");
  TempDir repo("worktree-daemon-repo");
  make_repository_with_one_commit(repo.path(), {{"notes.txt", "original\n"}});
  std::string first;
  std::string second;
  {
    Daemon d(data.path());
    const auto a = d.result("session.create", {{"agent", "controls"}, {"cwd", repo.path().string()}, {"title", "First way"}, {"worktree", Json::object()}})
                       .at("session");
    const auto b = d.result("session.create", {{"agent", "controls"}, {"cwd", repo.path().string()}, {"worktree", {{"branch", "second-way"}}}})
                       .at("session");
    first = a.at("sessionId").get<std::string>();
    second = b.at("sessionId").get<std::string>();
    CHECK(a.at("worktree").at("branch") == "switchboard/first-way");
    CHECK(b.at("worktree").at("branch") == "second-way");
    CHECK(a.at("cwd") == a.at("worktree").at("path"));

    d.result("session.send", {{"sessionId", first}, {"text", "write notes.txt first"}});
    d.result("session.send", {{"sessionId", second}, {"text", "write notes.txt second"}});
    CHECK(read_text_file(fs::path(a.at("cwd").get<std::string>()) / "notes.txt") == "first\n");
    CHECK(read_text_file(fs::path(b.at("cwd").get<std::string>()) / "notes.txt") == "second\n");
    CHECK(read_text_file(repo.path() / "notes.txt") == "original\n");

    const auto review = d.result("session.diff", {{"sessionId", first}, {"against", "base"}}).at("files");
    REQUIRE(review.size() == 1);
    CHECK(review[0].at("path") == "notes.txt");
    CHECK(review[0].at("diff").get<std::string>().find("+first") != std::string::npos);

    int branches = 0;
    const auto listed = d.result("session.list", Json::object());
    INFO(listed.dump());
    for (const auto& session : listed.at("sessions"))
      if (session.contains("worktree")) ++branches;
    CHECK(branches == 2);

    CHECK(d.result("session.merge", {{"sessionId", first}}).at("files").size() == 1);
    CHECK(read_text_file(repo.path() / "notes.txt") == "first\n");
    const auto conflict = d.error("session.merge", {{"sessionId", second}});
    CHECK(conflict.at("code") == -32028);
    CHECK(conflict.at("data").at("files") == Json::array({"notes.txt"}));
    CHECK(git_output(repo.path(), "status --porcelain").empty());
    CHECK(read_text_file(repo.path() / "notes.txt") == "first\n");
  }
  Daemon restarted(data.path());
  const auto again = restarted.result("session.get", {{"sessionId", second}}).at("session");
  CHECK(again.at("worktree").at("branch") == "second-way");
  CHECK(restarted.result("session.diff", {{"sessionId", second}, {"against", "base"}}).at("files").size() == 1);
  // Its work is on its branch (the merge attempt committed it); discarding the worktree loses nothing committed.
  restarted.result("session.delete", {{"sessionId", second}, {"worktree", "remove"}});
  CHECK(!fs::exists(again.at("worktree").at("path").get<std::string>()));
  CHECK(git_output(repo.path(), "log --format=%s -1 second-way").find("Merge") != std::string::npos);
}

TEST_CASE("worktree sessions through the daemon: a worktree a killed daemon was creating is removed at the next "
          "start; a stored session's and a kept one are not",
          "[worktree][daemon]") {
  TempDir data("worktree-leftover-data");
  TempDir repo("worktree-leftover-repo");
  make_repository_with_one_commit(repo.path(), {{"notes.txt", "original\n"}});
  std::string owned_id;
  fs::path owned;
  fs::path kept;
  {
    Daemon d(data.path());
    const auto a = d.result("session.create", {{"agent", "controls"}, {"cwd", repo.path().string()}, {"worktree", {{"branch", "owned"}}}})
                       .at("session");
    owned_id = a.at("sessionId").get<std::string>();
    owned = a.at("worktree").at("path").get<std::string>();
    const auto k = d.result("session.create", {{"agent", "controls"}, {"cwd", repo.path().string()}, {"worktree", {{"branch", "kept"}}}})
                       .at("session");
    kept = k.at("worktree").at("path").get<std::string>();
    d.result("session.delete", {{"sessionId", k.at("sessionId")}, {"worktree", "keep"}});
  }
  // What a daemon killed in the middle of a create leaves: git's worktree and its branch, still marked pending.
  // The owned worktree is marked too: a daemon killed after storing its session but before settling it.
  const auto worktrees = data.path() / "worktrees";
  const auto half = worktrees / "half";
  git_output(repo.path(), "worktree add -q --no-checkout -b half '" + half.string() + "' HEAD");
  REQUIRE(fs::exists(half / ".git"));
  std::ofstream(worktrees / ".creating" / "half");
  std::ofstream(worktrees / ".creating" / owned.filename());
  REQUIRE(git_output(repo.path(), "worktree list --porcelain").find(half.string()) != std::string::npos);

  Daemon restarted(data.path());
  CHECK(!fs::exists(half));
  CHECK(git_output(repo.path(), "worktree list --porcelain").find(half.string()) == std::string::npos);
  CHECK(fs::exists(owned / "notes.txt"));
  CHECK(fs::exists(kept / "notes.txt"));
  CHECK(fs::is_empty(worktrees / ".creating"));
  restarted.result("session.send", {{"sessionId", owned_id}, {"text", "write notes.txt changed"}});
  CHECK(restarted.result("session.diff", {{"sessionId", owned_id}, {"against", "base"}}).at("files").size() == 1);
}

}  // namespace worktree_daemon_tests
