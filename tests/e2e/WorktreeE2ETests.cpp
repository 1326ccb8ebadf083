#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/AgentProfiles.h"
#include "e2e/AgentWorld.h"
#include "e2e/Conformance.h"
#include "support/DaemonClient.h"
#include "support/GitRepository.h"
#include "support/SchemaValidator.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// Worktree sessions with the real agent CLIs (docs/worktrees.md): Claude Code, Codex and OpenCode, each in a
// worktree of one repository, each change the same file differently with their own file tools, hosted by one
// daemon. The user's checkout is untouched until a merge; the first merge brings its change, the second
// conflicts and leaves the checkout clean, and the third session's worktree, refused while it holds the agent's
// uncommitted change, is removed when forced (its branch kept).

namespace worktree_e2e_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace e2e = switchboard::testing::e2e;
using switchboard::testing::DaemonClient;
using switchboard::testing::git_output;
using switchboard::testing::make_repository_with_one_commit;
using switchboard::testing::read_text_file;
using switchboard::testing::SchemaValidator;
using switchboard::testing::TempDir;

const std::string kOriginal = "a line every agent rewrites\nand one none touches\n";

// One agent of the test: its mock provider (in an AgentWorld, which also finds its CLI), the line it writes, and
// its session once created.
struct Participant {
  const e2e::AgentProfile& profile;
  std::string line;
  std::unique_ptr<e2e::AgentWorld> world;
  Json session;

  Participant(const e2e::AgentProfile& agent_profile, std::string new_line) : profile(agent_profile), line(std::move(new_line)) {
    // The model's replies: the file tool calls that rewrite the first line, then a closing text after the output.
    world = std::make_unique<e2e::AgentWorld>(
        profile, e2e::file_changing_turn(profile, {{"notes.txt", "a line every agent rewrites", line}}, "Rewrote it."));
  }
  std::string expected() const { return line + "\nand one none touches\n"; }
  std::string id() const { return session.at("sessionId").get<std::string>(); }
  fs::path worktree() const { return session.at("worktree").at("path").get<std::string>(); }
  std::string branch() const { return session.at("worktree").at("branch").get<std::string>(); }
};

Json result_of(DaemonClient& client, const std::string& method, const Json& params) {
  const auto answer = client.call(method, params);
  INFO(method << ": " << answer.dump());
  REQUIRE(answer.contains("result"));
  return answer.at("result");
}

TEST_CASE("worktree e2e: Claude Code, Codex and OpenCode change one file in worktrees of one repository, the first "
          "merges, the second conflicts, the third's worktree is removed",
          "[e2e][worktree]") {
  std::vector<std::unique_ptr<Participant>> candidates;
  candidates.push_back(std::make_unique<Participant>(claude_code_e2e_tests::claude(), "rewritten by Claude Code"));
  candidates.push_back(std::make_unique<Participant>(codex_e2e_tests::codex_with_apply_patch(), "rewritten by Codex"));
  candidates.push_back(std::make_unique<Participant>(opencode_e2e_tests::opencode(), "rewritten by OpenCode"));
  // A missing CLI is skipped (with a WARN, a failure under CI); the others take the roles in order.
  std::vector<Participant*> agents;
  for (const auto& candidate : candidates) {
    if (candidate->world->ready()) agents.push_back(candidate.get());
  }
  if (agents.empty()) return;

  TempDir tmp("worktree-e2e");
  const fs::path home = tmp.path() / "home";
  const fs::path repo = tmp.path() / "repo";
  fs::create_directories(home);
  make_repository_with_one_commit(repo, {{"notes.txt", kOriginal}});

  // One daemon hosts them all: the agents' environments differ only in HOME, which they share here.
  std::vector<std::string> environment;
  for (const auto* agent : agents) {
    for (auto& variable : agent->profile.environment(home, agent->world->mock->base_url(), agent->world->binary)) {
      environment.push_back(std::move(variable));
    }
  }
  DaemonClient client({"--log-level", "info", "stdio", "--data-dir", (tmp.path() / "data").string()}, environment);
  REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "e2e"}}}, {"capabilities", {{"answersPermissions", true}}}})
              .contains("result"));

  for (auto* agent : agents) {
    INFO(agent->profile.agent);
    agent->session = result_of(client, "session.create",
                               {{"agent", agent->profile.agent},
                                {"cwd", repo.string()},
                                {"mode", agent->profile.asking_mode},
                                {"title", agent->profile.agent + " way"},
                                {"worktree", Json::object()}})
                         .at("session");
    CHECK(agent->branch() == "switchboard/" + agent->profile.agent + "-way");
    CHECK(agent->session.at("cwd") == agent->session.at("worktree").at("path"));
    REQUIRE(read_text_file(agent->worktree() / "notes.txt") == kOriginal);
  }
  for (auto* agent : agents) {
    INFO(agent->profile.agent);
    const auto done = e2e::send_allowing_everything(client, agent->id(), "rewrite the first line of notes.txt");
    CHECK(done.value("text", "") == "Rewrote it.");
    CHECK(read_text_file(agent->worktree() / "notes.txt") == agent->expected());
    CHECK(read_text_file(repo / "notes.txt") == kOriginal);
  }
  CHECK(git_output(repo, "status --porcelain").empty());

  // The first merge brings its change into the checkout.
  const auto* first = agents[0];
  const auto merged = result_of(client, "session.merge", {{"sessionId", first->id()}});
  REQUIRE(merged.at("files").size() == 1);
  CHECK(merged.at("files")[0].at("path") == "notes.txt");
  CHECK(merged.at("files")[0].at("diff").get<std::string>().find("+" + first->line) != std::string::npos);
  CHECK(read_text_file(repo / "notes.txt") == first->expected());
  CHECK(git_output(repo, "status --porcelain").empty());

  if (agents.size() >= 2) {
    // The second changed the same line: a conflict naming the file, and the checkout as the first merge left it.
    const auto conflict = client.call("session.merge", {{"sessionId", agents[1]->id()}});
    INFO(conflict.dump());
    REQUIRE(conflict.contains("error"));
    CHECK(conflict["error"]["code"] == -32028);
    CHECK(conflict["error"]["data"]["files"] == Json::array({"notes.txt"}));
    CHECK(git_output(repo, "status --porcelain").empty());
    CHECK(read_text_file(repo / "notes.txt") == first->expected());
  } else {
    WARN("SKIPPED: the conflicting merge needs a second agent CLI");
  }

  if (agents.size() >= 3) {
    // The third's worktree holds its uncommitted change: removing it is refused, naming the file, until forced;
    // then it goes (its directory and git's entry) and its branch stays.
    const auto* third = agents[2];
    const fs::path directory = third->worktree();
    REQUIRE(git_output(repo, "worktree list").find(directory.string()) != std::string::npos);
    const auto refused = client.call("session.removeWorktree", {{"sessionId", third->id()}, {"deleteBranch", false}});
    INFO(refused.dump());
    REQUIRE(refused.contains("error"));
    CHECK(refused["error"]["code"] == -32030);
    CHECK(refused["error"]["data"]["files"] == Json::array({"notes.txt"}));
    CHECK(read_text_file(directory / "notes.txt") == third->expected());
    result_of(client, "session.removeWorktree", {{"sessionId", third->id()}, {"deleteBranch", false}, {"force", true}});
    CHECK_FALSE(fs::exists(directory));
    CHECK(git_output(repo, "worktree list").find(directory.string()) == std::string::npos);
    CHECK(git_output(repo, "branch --list " + third->branch()).find(third->branch()) != std::string::npos);
    CHECK(read_text_file(repo / "notes.txt") == first->expected());
  } else {
    WARN("SKIPPED: removing a worktree is checked with a third agent CLI");
  }

  static const SchemaValidator validator;
  const auto events = client.events();
  for (const auto& event : events) {
    INFO(event.dump());
    CHECK(validator.validate_event(event).empty());
  }
  for (const auto& violation : e2e::lifecycle_violations(events)) FAIL_CHECK(violation);
}

}  // namespace worktree_e2e_tests
