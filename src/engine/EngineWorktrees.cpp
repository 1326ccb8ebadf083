// The engine's side of worktree sessions (docs/worktrees.md): making the worktree before the session, the diff
// against the base, merge, removal. The git work runs on the engine's helper thread (off_reactor), one
// operation at a time; the session is looked up again when it answers, since it may be gone by then.

#include <utility>

#include "engine/Engine.h"

namespace switchboard::engine {

using protocol::ErrorCode;

namespace {

EngineError unknown(const std::string& id) { return EngineError{ErrorCode::UnknownSession, "no session " + id}; }

EngineError no_worktree(const std::string& id) {
  return EngineError{ErrorCode::NoWorktree, "session " + id + " has no worktree"};
}

EngineError from_worktree(const worktree::WorktreeError& error) {
  using Code = worktree::WorktreeError::Code;
  const auto code = [&] {
    switch (error.code) {
      case Code::NotARepository: return ErrorCode::NotARepository;
      case Code::BranchExists: return ErrorCode::BranchExists;
      case Code::MergeConflict: return ErrorCode::MergeConflict;
      case Code::CheckoutNotClean: return ErrorCode::CheckoutNotClean;
      case Code::UncommittedWork: return ErrorCode::UncommittedWork;
      case Code::Failure: break;
    }
    return ErrorCode::WorktreeFailure;
  }();
  EngineError engine_error{code, error.message};
  engine_error.files = error.files;
  return engine_error;
}

worktree::WorktreePlace place_of(const protocol::Worktree& wire) {
  return worktree::WorktreePlace{wire.path, wire.branch, wire.base, wire.repository};
}

}  // namespace

void Engine::create_in_worktree(const protocol::SessionCreateParams& params, protocol::SessionInfo session,
                                SessionSettings settings, Then<protocol::SessionInfo> done) {
  if (m_worktrees == nullptr) return done(EngineError{ErrorCode::Unsupported, "this daemon makes no worktrees"});
  worktree::CreateRequest request{params.cwd, params.worktree->branch.value_or(""), params.worktree->base.value_or(""),
                                  params.title.value_or("")};
  off_reactor<worktree::Created>(
      "creating the worktree",
      [worktrees = m_worktrees, request = std::move(request)]() -> Outcome<worktree::Created> {
        auto created = worktrees->create(request);
        if (!created) return from_worktree(created.error());
        return std::move(*created);
      },
      [this, weak = std::weak_ptr<Engine*>(m_self), session = std::move(session), settings = std::move(settings),
       done = std::move(done)](Outcome<worktree::Created> outcome) mutable {
        if (const auto* error = std::get_if<EngineError>(&outcome)) return done(*error);
        auto& created = std::get<worktree::Created>(outcome);
        if (weak.expired()) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
        session.cwd = created.cwd.string();
        session.worktree = protocol::Worktree{created.place.path.string(), created.place.branch, created.place.base,
                                              created.place.repository.string()};
        // Set up before the first turn when the repository has a set-up command (Session::set_up_worktree).
        if (m_config.worktree_setup.for_repository(created.place.repository))
          session.worktree->setup = protocol::WorktreeSetup::Pending;
        // A session that could not be stored does not exist: its worktree goes too (it holds nothing yet).
        insert_new_session(StoredSession{std::move(session), std::move(settings)}, std::nullopt,
                           [this, weak, place = created.place, done = std::move(done)](Outcome<protocol::SessionInfo> inserted) {
                             // Stored: the session owns it now, and a restart keeps it (remove_leftovers).
                             if (!std::holds_alternative<EngineError>(inserted) && !weak.expired() && m_worktrees)
                               m_worktrees->settle(place);
                             if (std::holds_alternative<EngineError>(inserted) && !weak.expired() && m_worktrees) {
                               off_reactor<bool>(
                                   "removing the worktree of a session that could not be stored",
                                   [worktrees = m_worktrees, place]() -> Outcome<bool> {
                                     auto removed = worktrees->remove(place, true, true);
                                     if (!removed) return from_worktree(removed.error());
                                     return *removed;
                                   },
                                   [](const Outcome<bool>&) {});
                             }
                             done(std::move(inserted));
                           });
      });
}

void Engine::diff_against_base(const Session& session, const protocol::SessionDiffParams& params,
                               Then<protocol::SessionDiffResult> done) {
  const auto* info = &session.info();
  if (params.turn_id) {
    EngineError error{ErrorCode::InvalidParams, "session.diff: against base takes no turnId"};
    error.pointer = "/turnId";
    return done(error);
  }
  if (!info->worktree || m_worktrees == nullptr) return done(no_worktree(params.session_id));
  off_reactor<protocol::SessionDiffResult>(
      "comparing the worktree with its base",
      [worktrees = m_worktrees, place = place_of(*info->worktree)]() -> Outcome<protocol::SessionDiffResult> {
        auto files = worktrees->diff(place);
        if (!files) return from_worktree(files.error());
        protocol::SessionDiffResult result;
        result.files = std::move(*files);
        return result;
      },
      std::move(done));
}

void Engine::merge(const protocol::SessionMergeParams& params, Then<protocol::SessionMergeResult> done) {
  with_session(params.session_id, [this, params, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    merge_loaded(*std::get<Session*>(found), params, std::move(done));
  });
}

void Engine::merge_loaded(Session& target, const protocol::SessionMergeParams& params, Then<protocol::SessionMergeResult> done) {
  Session* session = &target;
  const auto& info = session->info();
  if (!info.worktree || m_worktrees == nullptr) return done(no_worktree(params.session_id));
  // The turn's agent may be writing files the merge would commit half-written.
  if (session->busy())
    return done(EngineError{ErrorCode::SessionBusy,
                            "session " + params.session_id + " has a turn running or prompts waiting; merge once it is idle"});
  std::string message = params.message.value_or(info.title.value_or(""));
  if (message.empty()) message = "Merge " + info.worktree->branch;
  off_reactor<protocol::SessionMergeResult>(
      "merging the worktree's branch",
      [worktrees = m_worktrees, place = place_of(*info.worktree), squash = params.squash.value_or(false),
       message = std::move(message)]() -> Outcome<protocol::SessionMergeResult> {
        auto merged = worktrees->merge(place, squash, message);
        if (!merged) return from_worktree(merged.error());
        return protocol::SessionMergeResult{merged->commit, std::move(merged->files)};
      },
      std::move(done));
}

void Engine::remove_worktree(const protocol::SessionRemoveWorktreeParams& params,
                             Then<protocol::SessionRemoveWorktreeResult> done) {
  with_session(params.session_id, [this, params, done = std::move(done)](Outcome<Session*> found) mutable {
    if (const auto* error = std::get_if<EngineError>(&found)) return done(*error);
    remove_worktree_loaded(*std::get<Session*>(found), params, std::move(done));
  });
}

void Engine::remove_worktree_loaded(Session& target, const protocol::SessionRemoveWorktreeParams& params,
                                    Then<protocol::SessionRemoveWorktreeResult> done) {
  Session* session = &target;
  if (!session->info().worktree || m_worktrees == nullptr) return done(no_worktree(params.session_id));
  if (session->busy())
    return done(EngineError{ErrorCode::SessionBusy, "session " + params.session_id +
                                                        " has a turn running or prompts waiting; remove its worktree once it is idle"});
  off_reactor<bool>(
      "removing the worktree",
      [worktrees = m_worktrees, place = place_of(*session->info().worktree), branch = params.delete_branch.value_or(false),
       force = params.force.value_or(false)]() -> Outcome<bool> {
        auto removed = worktrees->remove(place, branch, force);
        if (!removed) return from_worktree(removed.error());
        return *removed;
      },
      [this, weak = std::weak_ptr<Engine*>(m_self), id = params.session_id, done = std::move(done)](Outcome<bool> outcome) {
        if (const auto* error = std::get_if<EngineError>(&outcome)) return done(*error);
        if (weak.expired()) return done(EngineError{ErrorCode::ShuttingDown, "the daemon is shutting down"});
        auto* removed_from = loaded(id);
        if (removed_from == nullptr) return done(unknown(id));
        // Its agent worked in the directory just removed: the next prompt finds no working directory.
        removed_from->stop_agent();
        removed_from->mutable_info().worktree.reset();
        updated(id, [done, deleted = std::get<bool>(outcome)](Outcome<protocol::SessionInfo> info) {
          if (const auto* error = std::get_if<EngineError>(&info)) return done(*error);
          done(protocol::SessionRemoveWorktreeResult{std::get<protocol::SessionInfo>(info), deleted});
        });
      });
}

}  // namespace switchboard::engine
