// Worktree sessions through the engine (EngineWorktrees.cpp) over the real store, with the scripted agent and a real
// repository: the session works in its own worktree, session.diff against base shows what it did there,
// session.merge takes it into the user's checkout (a second, conflicting session is refused and changes nothing),
// removing or deleting never loses uncommitted work unless asked.

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/Engine.h"
#include "support/EngineCalls.h"
#include "support/GitRepository.h"
#include "support/TempDir.h"
#include "support/TextFile.h"
#include "support/WorktreeEngineRun.h"

namespace worktree_sessions_tests {

using namespace switchboard;
using switchboard::testing::git_output;
using switchboard::testing::read_text_file;
using switchboard::testing::TempDir;
using switchboard::testing::write_text_file;
namespace fs = std::filesystem;
namespace p = protocol;
using engine::EngineError;
using engine::Outcome;

template <class T>
const EngineError& error_of(const std::optional<Outcome<T>>& outcome) {
  REQUIRE(outcome.has_value());
  REQUIRE(std::holds_alternative<EngineError>(*outcome));
  return std::get<EngineError>(*outcome);
}

template <class T>
const T& value_of(const std::optional<Outcome<T>>& outcome) {
  REQUIRE(outcome.has_value());
  if (const auto* error = std::get_if<EngineError>(&*outcome)) FAIL(error->message);
  return std::get<T>(*outcome);
}

// A repository with app.txt (three lines) and src/lib.txt, and the engine making worktree sessions from it.
struct World : switchboard::testing::WorktreeEngineRun {
  switchboard::testing::StoredEngineRun& engine_run;

  World()
      : WorktreeEngineRun("worktree-sessions", {{"app.txt", "one\ntwo\nthree\n"}, {"src/lib.txt", "lib\n"}}),
        engine_run(start()) {}

  engine::Engine& engine() { return *engine_run.engine; }
  std::optional<Outcome<p::SessionDiffResult>> diff(const std::string& session) {
    p::SessionDiffParams params;
    params.session_id = session;
    params.against = p::SessionDiffParamsAgainst::Base;
    return wait<p::SessionDiffResult>([&](auto done) { engine().diff(params, done); });
  }
  std::optional<Outcome<p::SessionMergeResult>> merge(const std::string& session) {
    p::SessionMergeParams params;
    params.session_id = session;
    return wait<p::SessionMergeResult>([&](auto done) { engine().merge(params, done); });
  }
  std::optional<Outcome<p::SessionRemoveWorktreeResult>> remove(const std::string& session, bool force) {
    p::SessionRemoveWorktreeParams params;
    params.session_id = session;
    params.force = force;
    return wait<p::SessionRemoveWorktreeResult>([&](auto done) { engine().remove_worktree(params, done); });
  }
  std::optional<EngineError> remove_session(const std::string& session, std::optional<p::SessionDeleteParamsWorktree> choice) {
    std::optional<std::optional<EngineError>> outcome;
    engine().delete_session(session, [&](std::optional<EngineError> error) { outcome = std::move(error); }, choice);
    REQUIRE(engine_run.run_until([&] { return outcome.has_value(); }));
    return *outcome;
  }
  std::string status() { return git_output(repo, "status --porcelain"); }
};

TEST_CASE("worktree sessions: a session works in its own worktree, reviewed against its base, merged into the "
          "clean checkout; a second conflicting one is refused and the checkout stays clean",
          "[engine][worktree]") {
  World w;
  const auto first = value_of(w.create(w.repo / "src", p::WorktreeRequest{}, "First change"));
  const auto second = value_of(w.create(w.repo / "src", p::WorktreeRequest{std::string("second-change"), std::nullopt}));
  REQUIRE(first.worktree);
  CHECK(first.worktree->branch == "switchboard/first-change");
  CHECK(first.worktree->base == "main");
  CHECK(first.worktree->repository == fs::canonical(w.repo).string());
  CHECK(first.cwd == (fs::path(first.worktree->path) / "src").string());
  REQUIRE(second.worktree);
  CHECK(second.worktree->branch == "second-change");
  CHECK(switchboard::testing::get_session(w.engine(), w.engine_run.io, first.session_id).index() == 0);

  // each "agent" changes the same line in its own worktree
  write_text_file(fs::path(first.worktree->path) / "app.txt", "one\nfirst\nthree\n");
  write_text_file(fs::path(second.worktree->path) / "app.txt", "one\nsecond\nthree\n");
  CHECK(read_text_file(w.repo / "app.txt") == "one\ntwo\nthree\n");

  const auto diff = value_of(w.diff(first.session_id));
  REQUIRE(diff.files.size() == 1);
  CHECK(diff.files[0].path == "app.txt");
  CHECK(diff.files[0].diff.find("+first") != std::string::npos);

  const auto merged = value_of(w.merge(first.session_id));
  CHECK(read_text_file(w.repo / "app.txt") == "one\nfirst\nthree\n");
  CHECK(git_output(w.repo, "log -1 --format=%s") == "First change\n");  // the title is the default message
  CHECK(merged.files.size() == 1);

  const auto conflict = error_of(w.merge(second.session_id));
  CHECK(conflict.code == p::ErrorCode::MergeConflict);
  CHECK(conflict.files == std::vector<std::string>{"app.txt"});
  CHECK(w.status().empty());
  CHECK(read_text_file(w.repo / "app.txt") == "one\nfirst\nthree\n");
}

TEST_CASE("worktree sessions: removing and deleting keep uncommitted work unless told to discard it",
          "[engine][worktree]") {
  World w;
  const auto session = value_of(w.create(w.repo, p::WorktreeRequest{std::string("work"), std::nullopt}));
  const fs::path tree = session.worktree->path;
  write_text_file(tree / "draft.txt", "not committed\n");

  CHECK(error_of(w.remove(session.session_id, false)).code == p::ErrorCode::UncommittedWork);
  auto refused = w.remove_session(session.session_id, std::nullopt);
  REQUIRE(refused);
  CHECK(refused->code == p::ErrorCode::UncommittedWork);
  CHECK(refused->files == std::vector<std::string>{"draft.txt"});
  CHECK(switchboard::testing::get_session(w.engine(), w.engine_run.io, session.session_id).index() == 0);  // still there
  CHECK(read_text_file(tree / "draft.txt") == "not committed\n");

  SECTION("removeWorktree with force: the session stays, without a worktree; the branch stays") {
    const auto removed = value_of(w.remove(session.session_id, true));
    CHECK(!removed.session.worktree);
    CHECK(!removed.branch_deleted);
    CHECK(!fs::exists(tree));
    CHECK(git_output(w.repo, "branch --list work") == "  work\n");
    CHECK(error_of(w.diff(session.session_id)).code == p::ErrorCode::NoWorktree);
    bool announced = false;
    for (const auto& e : w.engine_run.events)
      if (const auto* updated = std::get_if<p::SessionUpdatedEvent>(&e.payload))
        announced = announced || !updated->session.worktree;
    CHECK(announced);
  }
  SECTION("delete with discard: the session, the directory and git's entry are gone") {
    CHECK(!w.remove_session(session.session_id, p::SessionDeleteParamsWorktree::Discard));
    CHECK(switchboard::testing::get_session(w.engine(), w.engine_run.io, session.session_id).index() == 1);
    CHECK(!fs::exists(tree));
    CHECK(git_output(w.repo, "worktree list").find(tree.string()) == std::string::npos);
    CHECK(git_output(w.repo, "branch --list work") == "  work\n");
  }
  SECTION("delete with keep: the worktree stays for the user") {
    CHECK(!w.remove_session(session.session_id, p::SessionDeleteParamsWorktree::Keep));
    CHECK(read_text_file(tree / "draft.txt") == "not committed\n");
  }
}

TEST_CASE("worktree sessions: what is refused", "[engine][worktree]") {
  World w;
  TempDir plain{"worktree-plain"};
  CHECK(error_of(w.create(plain.path(), p::WorktreeRequest{})).code == p::ErrorCode::NotARepository);
  CHECK(switchboard::testing::listed(w.engine(), w.engine_run.io, p::SessionListParams{}).sessions.empty());

  const auto session = value_of(w.create(w.repo, p::WorktreeRequest{std::string("taken"), std::nullopt}));
  CHECK(error_of(w.create(w.repo, p::WorktreeRequest{std::string("taken"), std::nullopt})).code == p::ErrorCode::BranchExists);
  CHECK(error_of(w.create(w.repo, p::WorktreeRequest{std::nullopt, std::string("no-such-base")})).code ==
        p::ErrorCode::WorktreeFailure);

  const auto plain_session = value_of(w.create(w.repo, std::nullopt));
  CHECK(!plain_session.worktree);
  CHECK(error_of(w.diff(plain_session.session_id)).code == p::ErrorCode::NoWorktree);
  CHECK(error_of(w.merge(plain_session.session_id)).code == p::ErrorCode::NoWorktree);

  write_text_file(w.repo / "src" / "lib.txt", "user's edit\n");
  write_text_file(fs::path(session.worktree->path) / "app.txt", "changed\n");
  CHECK(error_of(w.merge(session.session_id)).code == p::ErrorCode::CheckoutNotClean);
  CHECK(read_text_file(w.repo / "app.txt") == "one\ntwo\nthree\n");

  // the list shows each worktree session's branch
  const auto listed = switchboard::testing::listed(w.engine(), w.engine_run.io, p::SessionListParams{});
  int with_branch = 0;
  for (const auto& info : listed.sessions)
    if (info.worktree && info.worktree->branch == "taken") ++with_branch;
  CHECK(with_branch == 1);
}

TEST_CASE("worktree sessions: a restarted daemon keeps the session in its worktree", "[engine][worktree]") {
  switchboard::testing::WorktreeEngineRun w("worktree-restart", {{"app.txt", "one\n"}});
  w.start();
  const auto created = value_of(w.create(w.repo, p::WorktreeRequest{std::string("kept"), std::nullopt}));
  write_text_file(fs::path(created.worktree->path) / "app.txt", "two\n");

  auto& restarted = w.start();
  const auto info = switchboard::testing::get_session(*restarted.engine, restarted.io, created.session_id);
  REQUIRE(std::holds_alternative<p::SessionInfo>(info));
  const auto& again = std::get<p::SessionInfo>(info);
  REQUIRE(again.worktree);
  CHECK(again.worktree->branch == "kept");
  CHECK(again.worktree->path == created.worktree->path);
  CHECK(again.worktree->base == "main");
  CHECK(again.cwd == created.cwd);

  p::SessionMergeParams merge;
  merge.session_id = created.session_id;
  value_of(w.wait<p::SessionMergeResult>([&](auto done) { restarted.engine->merge(merge, done); }));
  CHECK(read_text_file(w.repo / "app.txt") == "two\n");
}

}  // namespace worktree_sessions_tests
