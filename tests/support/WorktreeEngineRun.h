#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "engine/Engine.h"
#include "support/StoredEngineRun.h"
#include "support/WorktreeRepository.h"

namespace switchboard::testing {

// A repository (WorktreeRepository) and the daemon's engine over the real store in the same directory, with the
// scripted agent, making its worktree sessions from that repository. start() starts the engine; starting it again
// is the daemon after a crash and a restart, over the same store and worktrees.
struct WorktreeEngineRun : WorktreeRepository {
  std::unique_ptr<StoredEngineRun> run;

  using WorktreeRepository::WorktreeRepository;

  StoredEngineRun& start(engine::EngineConfig config = {}) {
    run.reset();
    run = std::make_unique<StoredEngineRun>(temp.path(), nullptr, nullptr, std::move(config));
    run->engine->set_worktrees(&worktrees);
    return *run;
  }

  // The outcome of an engine call that answers through its callback, once the reactor has run it.
  template <class T, class Call>
  std::optional<engine::Outcome<T>> wait(Call call) {
    std::optional<engine::Outcome<T>> outcome;
    call([&](engine::Outcome<T> result) { outcome = std::move(result); });
    REQUIRE(run->run_until([&] { return outcome.has_value(); }));
    return outcome;
  }

  // session.create with the scripted agent in `cwd`, in a new worktree when `worktree` asks for one.
  std::optional<engine::Outcome<protocol::SessionInfo>> create(const std::filesystem::path& cwd,
                                                               std::optional<protocol::WorktreeRequest> worktree,
                                                               const std::string& title = "") {
    protocol::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = cwd.string();
    params.worktree = std::move(worktree);
    if (!title.empty()) params.title = title;
    return wait<protocol::SessionInfo>([&](auto done) { run->engine->create_session(params, done); });
  }
};

}  // namespace switchboard::testing
