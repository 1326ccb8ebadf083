#include "daemon/EngineMethods.h"

#include "switchboard/protocol/generated/Methods.h"

namespace switchboard::daemon {
namespace {

namespace p = protocol;
using engine::EngineError;
using engine::Outcome;
using rpc::CallContext;
using rpc::Reply;

rpc::RpcError to_rpc(const EngineError& error) {
  if (error.pointer) return rpc::RpcError{error.code, error.message, nlohmann::json{{"pointer", *error.pointer}}};
  if (!error.files.empty()) return rpc::RpcError{error.code, error.message, nlohmann::json{{"files", error.files}}};
  return rpc::RpcError{error.code, error.message, nullptr};
}

// Replies with `make(value)` on success, or the engine's error.
template <class Result, class Value, class Make>
void answer(Reply<Result>& reply, const Outcome<Value>& outcome, Make make) {
  if (const auto* error = std::get_if<EngineError>(&outcome)) return reply(to_rpc(*error));
  reply(make(std::get<Value>(outcome)));
}

// Replies later, when the engine's callback runs: the reply moves into it.
template <class Result, class Value, class Make>
std::function<void(Outcome<Value>)> answer_later(Reply<Result> reply, Make make) {
  auto shared = std::make_shared<Reply<Result>>(std::move(reply));
  return [shared, make](const Outcome<Value>& outcome) { answer(*shared, outcome, make); };
}

template <class Result>
std::function<void(std::optional<EngineError>)> answer_empty_later(Reply<Result> reply) {
  auto shared = std::make_shared<Reply<Result>>(std::move(reply));
  return [shared](const std::optional<EngineError>& error) {
    if (error) return (*shared)(to_rpc(*error));
    (*shared)(Result{});
  };
}

}  // namespace

void bind_engine_methods(rpc::Dispatcher& dispatcher, engine::Engine& engine) {
  // clang-format off
  dispatcher.bind<p::AgentsListMethod>([&engine](const p::AgentsListParams&, Reply<p::AgentsListResult> reply, const CallContext&) {
    reply(p::AgentsListResult{engine.list_agents()});
  });
  dispatcher.bind<p::SessionCreateMethod>([&engine](const p::SessionCreateParams& params, Reply<p::SessionCreateResult> reply, const CallContext&) {
    engine.create_session(params, answer_later<p::SessionCreateResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionCreateResult{s}; }));
  });
  dispatcher.bind<p::SessionGetMethod>([&engine](const p::SessionGetParams& params, Reply<p::SessionGetResult> reply, const CallContext&) {
    engine.get_session(params.session_id, answer_later<p::SessionGetResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionGetResult{s}; }));
  });
  dispatcher.bind<p::SessionListMethod>([&engine](const p::SessionListParams& params, Reply<p::SessionListResult> reply, const CallContext&) {
    engine.list_sessions(params, answer_later<p::SessionListResult, p::SessionListResult>(std::move(reply), [](const p::SessionListResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionRenameMethod>([&engine](const p::SessionRenameParams& params, Reply<p::SessionRenameResult> reply, const CallContext&) {
    engine.rename(params.session_id, params.title, answer_later<p::SessionRenameResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionRenameResult{s}; }));
  });
  dispatcher.bind<p::SessionArchiveMethod>([&engine](const p::SessionArchiveParams& params, Reply<p::SessionArchiveResult> reply, const CallContext&) {
    engine.archive(params.session_id, params.archived, answer_later<p::SessionArchiveResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionArchiveResult{s}; }));
  });
  dispatcher.bind<p::SessionDeleteMethod>([&engine](const p::SessionDeleteParams& params, Reply<p::SessionDeleteResult> reply, const CallContext&) {
    engine.delete_session(params.session_id, answer_empty_later(std::move(reply)), params.worktree);
  });
  dispatcher.bind<p::SessionAttachMethod>([&engine](const p::SessionAttachParams& params, Reply<p::SessionAttachResult> reply, const CallContext&) {
    engine.attach(params.session_id, answer_later<p::SessionAttachResult, p::SessionAttachResult>(std::move(reply), [](const p::SessionAttachResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionSetModelMethod>([&engine](const p::SessionSetModelParams& params, Reply<p::SessionSetModelResult> reply, const CallContext&) {
    engine.set_model(params.session_id, params.model, answer_later<p::SessionSetModelResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionSetModelResult{s}; }));
  });
  dispatcher.bind<p::SessionSetModeMethod>([&engine](const p::SessionSetModeParams& params, Reply<p::SessionSetModeResult> reply, const CallContext&) {
    engine.set_mode(params.session_id, params.mode, answer_later<p::SessionSetModeResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionSetModeResult{s}; }));
  });
  dispatcher.bind<p::SessionSetOptionMethod>([&engine](const p::SessionSetOptionParams& params, Reply<p::SessionSetOptionResult> reply, const CallContext&) {
    engine.set_option(params, answer_later<p::SessionSetOptionResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionSetOptionResult{s}; }));
  });
  dispatcher.bind<p::SessionForkMethod>([&engine](const p::SessionForkParams& params, Reply<p::SessionForkResult> reply, const CallContext&) {
    engine.fork(params, answer_later<p::SessionForkResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionForkResult{s}; }));
  });
  dispatcher.bind<p::SessionRewindMethod>([&engine](const p::SessionRewindParams& params, Reply<p::SessionRewindResult> reply, const CallContext&) {
    engine.rewind(params, answer_later<p::SessionRewindResult, p::SessionRewindResult>(std::move(reply), [](const p::SessionRewindResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionCompactMethod>([&engine](const p::SessionCompactParams& params, Reply<p::SessionCompactResult> reply, const CallContext&) {
    engine.compact(params.session_id, answer_later<p::SessionCompactResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionCompactResult{s}; }));
  });
  dispatcher.bind<p::SessionDiffMethod>([&engine](const p::SessionDiffParams& params, Reply<p::SessionDiffResult> reply, const CallContext&) {
    engine.diff(params, answer_later<p::SessionDiffResult, p::SessionDiffResult>(std::move(reply), [](const p::SessionDiffResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionMergeMethod>([&engine](const p::SessionMergeParams& params, Reply<p::SessionMergeResult> reply, const CallContext&) {
    engine.merge(params, answer_later<p::SessionMergeResult, p::SessionMergeResult>(std::move(reply), [](const p::SessionMergeResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionRemoveWorktreeMethod>([&engine](const p::SessionRemoveWorktreeParams& params, Reply<p::SessionRemoveWorktreeResult> reply, const CallContext&) {
    engine.remove_worktree(params, answer_later<p::SessionRemoveWorktreeResult, p::SessionRemoveWorktreeResult>(std::move(reply), [](const p::SessionRemoveWorktreeResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionSendMethod>([&engine](const p::SessionSendParams& params, Reply<p::SessionSendResult> reply, const CallContext&) {
    // The reply may come at the end of the turn.
    engine.send(params, answer_later<p::SessionSendResult, p::SessionSendResult>(std::move(reply), [](const p::SessionSendResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionResumeMethod>([&engine](const p::SessionResumeParams& params, Reply<p::SessionSendResult> reply, const CallContext&) {
    engine.resume(params, answer_later<p::SessionSendResult, p::SessionSendResult>(std::move(reply), [](const p::SessionSendResult& r) { return r; }));
  });
  dispatcher.bind<p::SessionCancelMethod>([&engine](const p::SessionCancelParams& params, Reply<p::SessionCancelResult> reply, const CallContext&) {
    engine.cancel(params.session_id, answer_later<p::SessionCancelResult, bool>(std::move(reply), [](bool cancelled) { return p::SessionCancelResult{cancelled}; }));
  });
  dispatcher.bind<p::SessionImportMethod>([&engine](const p::SessionImportParams& params, Reply<p::SessionImportResult> reply, const CallContext&) {
    engine.import_session(params, answer_later<p::SessionImportResult, p::SessionInfo>(std::move(reply), [](const p::SessionInfo& s) { return p::SessionImportResult{s}; }));
  });
  dispatcher.bind<p::HistoryListMethod>([&engine](const p::HistoryListParams& params, Reply<p::HistoryListResult> reply, const CallContext&) {
    engine.list_history(params, answer_later<p::HistoryListResult, p::HistoryListResult>(std::move(reply), [](const p::HistoryListResult& r) { return r; }));
  });
  dispatcher.bind<p::HistoryReadMethod>([&engine](const p::HistoryReadParams& params, Reply<p::HistoryReadResult> reply, const CallContext&) {
    engine.read_history(params, answer_later<p::HistoryReadResult, p::HistoryReadResult>(std::move(reply), [](const p::HistoryReadResult& r) { return r; }));
  });
  dispatcher.bind<p::PermissionRespondMethod>([&engine](const p::PermissionRespondParams& params, Reply<p::PermissionRespondResult> reply, const CallContext& context) {
    engine.respond_permission(params, context.peer->client_id(), answer_empty_later(std::move(reply)));
  });
  dispatcher.bind<p::QuestionRespondMethod>([&engine](const p::QuestionRespondParams& params, Reply<p::QuestionRespondResult> reply, const CallContext& context) {
    engine.respond_question(params, context.peer->client_id(), answer_empty_later(std::move(reply)));
  });
  dispatcher.bind<p::RulesListMethod>([&engine](const p::RulesListParams& params, Reply<p::RulesListResult> reply, const CallContext&) {
    reply(p::RulesListResult{engine.list_rules(params.session_id, params.cwd)});
  });
  dispatcher.bind<p::RulesRemoveMethod>([&engine](const p::RulesRemoveParams& params, Reply<p::RulesRemoveResult> reply, const CallContext&) {
    engine.remove_rule(params.rule_id, answer_empty_later(std::move(reply)));
  });
  dispatcher.bind<p::RulesAddMethod>([&engine](const p::RulesAddParams& params, Reply<p::RulesAddResult> reply, const CallContext&) {
    engine.add_session_rule(params.session_id, params.rule, params.decision == p::RulesAddParamsDecision::Allow,
                            answer_later<p::RulesAddResult, p::RememberedRule>(std::move(reply), [](const p::RememberedRule& r) { return p::RulesAddResult{r}; }));
  });
  // clang-format on
}

}  // namespace switchboard::daemon
