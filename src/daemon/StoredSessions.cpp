#include "daemon/StoredSessions.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "switchboard/json/DecodeContext.h"
#include "switchboard/json/JsonWriter.h"
#include "switchboard/support/Clock.h"

namespace switchboard::daemon {
namespace {

using protocol::ErrorCode;

// The caller learns that storage failed and in which operation; the details (paths, SQLite's words) stay in
// the log.
engine::EngineError store_failure(const char* what, const store::StoreError& error) {
  spdlog::error("store: {} failed: {}", what, error);
  return engine::EngineError{ErrorCode::StoreFailure, std::string(what) + " failed: the database reported " +
                                                          std::string(store::to_string(error.code))};
}

void log_only(const char* what, const store::StoreError& error) { spdlog::error("store: {} failed: {}", what, error); }

// The JSON columns are written with the schema's own encoders, so that what comes back decodes with its decoders.
template <class Write>
std::string json_text(Write write) {
  std::string out;
  json::JsonWriter writer(out);
  write(writer);
  writer.finish();
  return out;
}

template <class T>
std::string encode_one(const std::optional<T>& value) {
  if (!value) return {};
  return json_text([&](json::JsonWriter& writer) { protocol::encode(writer, *value); });
}

template <class T>
std::string encode_list(const std::optional<std::vector<T>>& values) {
  if (!values) return {};
  return json_text([&](json::JsonWriter& writer) {
    writer.begin_array();
    for (const auto& value : *values) protocol::encode(writer, value);
    writer.end_array();
  });
}

std::string encode_option_values(const std::map<std::string, std::string>& values) {
  if (values.empty()) return {};
  return json_text([&](json::JsonWriter& writer) {
    writer.begin_object();
    for (const auto& [id, value] : values) {
      writer.key(id);
      writer.string(value);
    }
    writer.end_object();
  });
}

// A column that cannot be read is left out (and logged): the session still loads.
template <class T>
std::optional<T> decode_one(const std::string& text, const std::string& session_id, const char* what) {
  if (text.empty()) return std::nullopt;
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  json::DecodeContext context;
  T value;
  if (!parsed.is_discarded() && protocol::decode(parsed, value, context)) return value;
  spdlog::error("store: the {} of session {} could not be read; left out: {}", what, session_id, text.substr(0, 200));
  return std::nullopt;
}

// Whether a column's text may appear in the log when it cannot be read: MCP servers carry their env and headers,
// which hold secrets (tokens, API keys), so only where and why the decoding failed is logged for them.
enum class ColumnText : std::uint8_t { Loggable, Secret };

template <class T>
std::optional<std::vector<T>> decode_list(const std::string& text, const std::string& session_id, const char* what,
                                          ColumnText column = ColumnText::Loggable) {
  if (text.empty()) return std::nullopt;
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  std::vector<T> values;
  bool readable = parsed.is_array();
  std::string why = parsed.is_discarded() ? "not JSON" : readable ? "" : "not an array";
  json::DecodeContext context;
  for (std::size_t i = 0; readable && i < parsed.size(); ++i) {
    T value;
    readable = protocol::decode(parsed[i], value, context);
    if (!readable) {
      why = "/" + std::to_string(i) + context.error().pointer + ": expected " + context.error().expected + ", found " + context.error().actual;
    }
    values.push_back(std::move(value));
  }
  if (readable) return values;
  if (column == ColumnText::Secret) {
    spdlog::error("store: the {} of session {} could not be read ({}); left out", what, session_id, why);
  } else {
    spdlog::error("store: the {} of session {} could not be read ({}); left out: {}", what, session_id, why, text.substr(0, 200));
  }
  return std::nullopt;
}

std::map<std::string, std::string> decode_option_values(const std::string& text, const std::string& session_id) {
  std::map<std::string, std::string> values;
  if (text.empty()) return values;
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_object()) {
    spdlog::error("store: the option values of session {} could not be read; left out: {}", session_id, text.substr(0, 200));
    return values;
  }
  for (const auto& [id, value] : parsed.items()) {
    if (value.is_string()) values[id] = value.get<std::string>();
  }
  return values;
}

store::SessionRecord to_record(const engine::StoredSession& stored) {
  const protocol::SessionInfo& info = stored.info;
  store::SessionRecord record;
  record.id = info.session_id;
  record.agent = info.agent;
  record.cwd = info.cwd;
  record.title = info.title.value_or("");
  record.model = info.model.value_or("");
  record.mode = info.mode.value_or("");
  record.archived = info.archived;
  record.state = std::string(protocol::to_string(info.state));
  record.created_at = info.created_at;
  record.updated_at = info.updated_at;
  if (!stored.settings.mcp_servers.empty()) record.mcp_servers = encode_list(std::optional(stored.settings.mcp_servers));
  record.option_values = encode_option_values(stored.settings.option_values);
  record.forked_from = encode_one(info.forked_from);
  record.plan = encode_list(info.plan);
  record.context_usage = encode_one(info.usage);
  record.worktree = encode_one(info.worktree);
  return record;
}

std::optional<std::string> non_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

engine::StoredSession to_stored(const store::SessionRecord& record) {
  engine::StoredSession stored;
  protocol::SessionInfo& info = stored.info;
  info.session_id = record.id;
  info.agent = record.agent;
  info.cwd = record.cwd;
  info.title = non_empty(record.title);
  info.model = non_empty(record.model);
  info.mode = non_empty(record.mode);
  info.archived = record.archived;
  info.state = protocol::SessionState::Idle;  // the engine decides what a restored session's state is
  info.live = false;
  info.created_at = record.created_at;
  info.updated_at = record.updated_at;
  info.forked_from = decode_one<protocol::ForkOrigin>(record.forked_from, record.id, "fork origin");
  info.plan = decode_list<protocol::PlanEntry>(record.plan, record.id, "plan");
  info.usage = decode_one<protocol::ContextUsage>(record.context_usage, record.id, "context usage");
  info.worktree = decode_one<protocol::Worktree>(record.worktree, record.id, "worktree");
  stored.settings.mcp_servers =
      decode_list<protocol::McpServer>(record.mcp_servers, record.id, "MCP servers", ColumnText::Secret).value_or(std::vector<protocol::McpServer>{});
  stored.settings.option_values = decode_option_values(record.option_values, record.id);
  return stored;
}

store::PermissionRule to_row(const protocol::RememberedRule& rule) {
  store::PermissionRule row;
  row.id = rule.rule_id;
  row.scope = rule.scope == protocol::RuleScope::Always ? store::RuleScope::Always : store::RuleScope::Project;
  row.cwd = rule.cwd;
  row.tool = rule.rule.tool;
  row.pattern = rule.rule.pattern;
  row.decision = rule.decision == protocol::RememberedRuleDecision::Deny ? store::RuleDecision::Deny : store::RuleDecision::Allow;
  row.created_at = rule.created_at;
  return row;
}

protocol::RememberedRule to_rule(const store::PermissionRule& row) {
  protocol::RememberedRule rule;
  rule.rule_id = row.id;
  rule.scope = row.scope == store::RuleScope::Always ? protocol::RuleScope::Always : protocol::RuleScope::Project;
  if (row.scope == store::RuleScope::Project) rule.cwd = row.cwd;
  rule.rule.tool = row.tool;
  rule.rule.pattern = row.pattern;
  rule.decision = row.decision == store::RuleDecision::Deny ? protocol::RememberedRuleDecision::Deny
                                                            : protocol::RememberedRuleDecision::Allow;
  rule.created_at = row.created_at;
  return rule;
}

// The interrupted-turn row's prompt_json: {"running": QueuedPrompt?, "queued": [QueuedPrompt...]}, written with
// the schema's own encoders so that what comes back decodes with the schema's decoders.
std::string encode_work(const engine::OutstandingWork& work) {
  std::string out;
  json::JsonWriter writer(out);
  writer.begin_object();
  if (work.running) {
    writer.key("running");
    protocol::encode(writer, *work.running);
  }
  writer.key("queued");
  writer.begin_array();
  for (const auto& prompt : work.queued) protocol::encode(writer, prompt);
  writer.end_array();
  writer.end_object();
  writer.finish();
  return out;
}

std::optional<engine::OutstandingWork> decode_work(const std::string& text) {
  const auto parsed = nlohmann::json::parse(text, nullptr, false);
  if (!parsed.is_object()) return std::nullopt;
  engine::OutstandingWork work;
  json::DecodeContext context;
  if (parsed.contains("running")) {
    protocol::QueuedPrompt prompt;
    if (!protocol::decode(parsed.at("running"), prompt, context)) return std::nullopt;
    work.running = std::move(prompt);
  }
  if (parsed.contains("queued") && parsed.at("queued").is_array()) {
    for (const auto& item : parsed.at("queued")) {
      protocol::QueuedPrompt prompt;
      if (!protocol::decode(item, prompt, context)) return std::nullopt;
      work.queued.push_back(std::move(prompt));
    }
  }
  return work;
}

// Startup only: starts one store call and runs the reactor until its result is back (the store posts results to
// the io_context).
template <typename T, typename Start>
store::StoreResult<T> wait_for(boost::asio::io_context& io, Start start) {
  std::optional<store::StoreResult<T>> result;
  start([&result](store::StoreResult<T> answer) { result.emplace(std::move(answer)); });
  io.restart();
  while (!result && io.run_one() > 0) {
  }
  if (!result) return store::StoreError{store::StoreError::Code::Io, "the store stopped before it answered"};
  return std::move(*result);
}

}  // namespace

store::StoreResult<engine::PersistedState> StoredSessions::load(boost::asio::io_context& io, store::Store& store) {
  engine::PersistedState state;
  auto& sessions = store.sessions();

  const auto turns = wait_for<std::vector<store::InterruptedTurn>>(io, [&](auto done) { sessions.list_interrupted(done); });
  if (!turns) return turns.error();
  for (const auto& turn : *turns) {
    auto work = decode_work(turn.prompt_json);
    if (!work) {
      // Never fatal: the session still loads; what it owed is reported, not guessed.
      spdlog::error("store: the outstanding prompts of session {} could not be read; they are dropped: {}",
                    turn.session_id, turn.prompt_json.substr(0, 200));
      continue;
    }
    state.outstanding.emplace(turn.session_id, std::move(*work));
  }

  // The sessions that owe prompts, one row each: they are few (a turn cut off by a stop), however many are stored.
  for (const auto& owed : state.outstanding) {
    const auto& session_id = owed.first;  // clang 14 cannot capture a structured binding
    const auto record = wait_for<store::SessionRecord>(io, [&](auto done) { sessions.get_session(session_id, done); });
    if (record) {
      state.sessions.push_back(to_stored(*record));
    } else if (record.error().code != store::StoreError::Code::NotFound) {
      // NotFound: the row went with its session (ON DELETE CASCADE), so this cannot happen short of corruption.
      return record.error();
    }
  }

  const auto worktrees = wait_for<std::vector<std::string>>(io, [&](auto done) { sessions.list_worktrees(done); });
  if (!worktrees) return worktrees.error();
  for (const auto& text : *worktrees) {
    if (auto worktree = decode_one<protocol::Worktree>(text, "", "worktree")) state.worktrees.push_back(std::move(*worktree));
  }

  const auto rules = wait_for<std::vector<store::PermissionRule>>(
      io, [&](auto done) { store.rules().list_rules(std::nullopt, done); });
  if (!rules) return rules.error();
  for (const auto& row : *rules) state.rules.push_back(to_rule(row));
  return state;
}

void StoredSessions::insert_session(const engine::StoredSession& session, const std::optional<engine::ConversationBinding>& binding,
                                    Done done) {
  auto& sessions = m_store.sessions();
  sessions.insert_session(to_record(session), [&sessions, id = session.info.session_id, binding, done = std::move(done)](
                                                  store::StoreResult<store::SessionRecord> inserted) mutable {
    if (!inserted) return done(store_failure("saving the new session", inserted.error()));
    if (!binding) return done(std::nullopt);
    sessions.add_run(id, binding->provider_session_id, binding->fork, binding->fork_through_turn_ref, unix_millis_now(),
                     [&sessions, id, done = std::move(done)](store::StoreResult<store::RunRecord> run) {
      if (run) return done(std::nullopt);
      // Without its run the session would start a fresh conversation after a restart: it is not kept.
      auto failure = store_failure("saving the new session's run", run.error());
      sessions.delete_session(id, [done, failure](store::StoreResult<void> deleted) {
        if (!deleted) log_only("removing a half-saved session", deleted.error());
        done(failure);
      });
    });
  });
}

void StoredSessions::update_session(const engine::StoredSession& session, Done done) {
  auto record = to_record(session);
  store::SessionUpdate update;
  update.title = record.title;
  update.model = record.model;
  update.mode = record.mode;
  update.state = record.state;
  update.archived = record.archived;
  update.updated_at = record.updated_at;
  update.option_values = std::move(record.option_values);
  update.plan = std::move(record.plan);
  update.context_usage = std::move(record.context_usage);
  update.worktree = std::move(record.worktree);
  m_store.sessions().update_session(session.info.session_id, std::move(update),
                                    [done = std::move(done), id = session.info.session_id](store::StoreResult<store::SessionRecord> result) {
                                      if (result) return done(std::nullopt);
                                      if (result.error().code == store::StoreError::Code::NotFound) {
                                        return done(engine::EngineError{ErrorCode::UnknownSession, "no session " + id});
                                      }
                                      done(store_failure("saving the session", result.error()));
                                    });
}

void StoredSessions::delete_session(const std::string& session_id, Done done) {
  m_store.sessions().delete_session(session_id, [done = std::move(done), session_id](store::StoreResult<void> result) {
    // A session created before it could be stored does not exist in the store: deleting it is still fine.
    if (result || result.error().code == store::StoreError::Code::NotFound) return done(std::nullopt);
    done(store_failure("deleting the session", result.error()));
  });
}

void StoredSessions::load_session(const std::string& session_id,
                                  std::function<void(engine::Outcome<std::optional<engine::StoredSession>>)> done) {
  m_store.sessions().get_session(session_id, [done = std::move(done)](store::StoreResult<store::SessionRecord> record) {
    if (record) return done(std::optional<engine::StoredSession>(to_stored(*record)));
    if (record.error().code == store::StoreError::Code::NotFound) return done(std::optional<engine::StoredSession>());
    done(store_failure("reading the session", record.error()));
  });
}

void StoredSessions::list_sessions(const engine::StoredSessionQuery& query,
                                   std::function<void(engine::Outcome<engine::StoredSessionPage>)> done) {
  store::SessionQuery rows;
  rows.agent = query.agent;
  rows.cwd = query.cwd;
  rows.text = query.text;
  rows.archived = query.archived;
  rows.limit = query.limit;
  if (query.after) rows.after = store::SessionCursor{query.after->first, query.after->second};
  m_store.sessions().list_sessions(std::move(rows), [done = std::move(done)](store::StoreResult<store::SessionPage> page) {
    if (!page) return done(store_failure("listing the sessions", page.error()));
    engine::StoredSessionPage stored;
    stored.sessions.reserve(page->sessions.size());
    for (const auto& record : page->sessions) stored.sessions.push_back(to_stored(record));
    stored.more = page->next.has_value();
    done(std::move(stored));
  });
}

void StoredSessions::record_run(const std::string& session_id, const std::string& provider_session_id) {
  m_store.sessions().add_run(session_id, provider_session_id, /*fork=*/false, unix_millis_now(), [](store::StoreResult<store::RunRecord> result) {
    if (!result) log_only("recording the agent's session id", result.error());
  });
}

void StoredSessions::latest_run(const std::string& session_id, std::function<void(std::optional<engine::ConversationBinding>)> done) {
  m_store.sessions().list_runs(session_id, [done = std::move(done)](store::StoreResult<std::vector<store::RunRecord>> runs) {
    if (!runs) {
      log_only("reading the session's runs", runs.error());
      return done(std::nullopt);  // the agent starts a fresh conversation rather than not at all
    }
    if (runs->empty() || runs->back().provider_session_id.empty()) return done(std::nullopt);
    done(engine::ConversationBinding{runs->back().provider_session_id, runs->back().fork, runs->back().fork_through});
  });
}

void StoredSessions::session_continuing(const std::string& agent, const std::string& provider_session_id,
                                        std::function<void(engine::Outcome<std::optional<std::string>>)> done) {
  m_store.sessions().find_continuing_session(agent, provider_session_id,
                                             [done = std::move(done)](store::StoreResult<std::optional<std::string>> found) {
                                               if (!found) return done(store_failure("finding who continues the conversation", found.error()));
                                               done(std::move(*found));
                                             });
}

void StoredSessions::record_turn(const std::string& session_id, const engine::TurnRecord& turn) {
  m_store.sessions().add_turn(session_id, store::TurnRow{turn.turn_id, turn.native_ref, turn.rewound}, [](store::StoreResult<void> result) {
    // NotFound: the session was deleted meanwhile (or never stored), nothing to keep.
    if (!result && result.error().code != store::StoreError::Code::NotFound) log_only("recording a turn", result.error());
  });
}

void StoredSessions::turns(const std::string& session_id, std::function<void(std::vector<engine::TurnRecord>)> done) {
  m_store.sessions().list_turns(session_id, [done = std::move(done)](store::StoreResult<std::vector<store::TurnRow>> rows) {
    std::vector<engine::TurnRecord> turns;
    if (!rows) {
      log_only("reading the session's turns", rows.error());
      return done(std::move(turns));
    }
    for (auto& row : *rows) turns.push_back(engine::TurnRecord{std::move(row.turn_id), std::move(row.native_ref), row.rewound});
    done(std::move(turns));
  });
}

void StoredSessions::mark_rewound(const std::string& session_id, const std::vector<std::string>& turn_ids, Done done) {
  m_store.sessions().mark_turns_rewound(session_id, turn_ids, [done = std::move(done)](store::StoreResult<void> result) {
    if (!result) return done(store_failure("marking the rewound turns", result.error()));
    done(std::nullopt);
  });
}

void StoredSessions::save_outstanding(const std::string& session_id, const engine::OutstandingWork& work) {
  if (work.empty()) {
    m_store.sessions().clear_interrupted(session_id, [](store::StoreResult<void> result) {
      if (!result) log_only("clearing the session's outstanding prompts", result.error());
    });
    return;
  }
  store::InterruptedTurn turn;
  turn.session_id = session_id;
  turn.turn_id = work.running ? work.running->queue_id : std::string();
  turn.prompt_json = encode_work(work);
  turn.interrupted_at = unix_millis_now();
  m_store.sessions().mark_interrupted(std::move(turn), [](store::StoreResult<void> result) {
    // NotFound: the session was deleted meanwhile, nothing is owed any more.
    if (!result && result.error().code != store::StoreError::Code::NotFound) {
      log_only("saving the session's outstanding prompts", result.error());
    }
  });
}

void StoredSessions::add_rule(const protocol::RememberedRule& rule, Done done) {
  m_store.rules().add_rule(to_row(rule), [done = std::move(done)](store::StoreResult<store::PermissionRule> result) {
    if (!result) return done(store_failure("saving the rule", result.error()));
    done(std::nullopt);
  });
}

void StoredSessions::remove_rule(const std::string& rule_id, Done done) {
  m_store.rules().remove_rule(rule_id, [done = std::move(done)](store::StoreResult<void> result) {
    if (result || result.error().code == store::StoreError::Code::NotFound) return done(std::nullopt);
    done(store_failure("removing the rule", result.error()));
  });
}

namespace {

// How much of the event log one exchanges() call reads: a page at a time, at most this many events in all.
constexpr std::size_t kExchangePage = 2000;
constexpr std::size_t kExchangeEventLimit = 100000;
// How many forks back a conversation's exchanges are followed (a fork of a fork of ...).
constexpr int kForkDepth = 8;

// Gathers a session's exchanges from its events, page by page (each page is one store job, so the reactor
// only parses a page at a time).
struct ExchangeReader : std::enable_shared_from_this<ExchangeReader> {
  using ExchangeEnd = StoredSessions::ExchangeEnd;
  store::EventLog& log;
  std::string session_id;
  ExchangeEnd end;
  std::function<void(std::vector<engine::Exchange>)> done;
  std::map<std::string, std::string> prompts;  // turn id → prompt, for turns not ended yet
  std::vector<engine::Exchange> exchanges;
  std::size_t read = 0;

  ExchangeReader(store::EventLog& event_log, std::string id, ExchangeEnd stop, std::function<void(std::vector<engine::Exchange>)> then)
      : log(event_log), session_id(std::move(id)), end(std::move(stop)), done(std::move(then)) {}

  void next(std::uint64_t after_seq) {
    log.session_events(session_id, after_seq, kExchangePage,
                       [self = shared_from_this()](store::StoreResult<store::EventLog::Events> events) { self->on_page(std::move(events)); });
  }

  void on_page(store::StoreResult<store::EventLog::Events> events) {
    if (!events) {
      log_only("reading a session's exchanges", events.error());
      return finish();
    }
    std::uint64_t last = 0;
    for (const auto& event : *events) {
      last = event->seq;
      if (event->kind != protocol::EventKind::TurnStarted && event->kind != protocol::EventKind::TurnStopped &&
          event->kind != protocol::EventKind::SessionRewound) {
        continue;
      }
      const auto parsed = nlohmann::json::parse(event->json, nullptr, false);
      if (!parsed.is_object()) continue;
      if (end.until_ms && parsed.value("ts", std::int64_t{0}) > *end.until_ms) return finish();
      const auto data = parsed.find("data");
      if (data == parsed.end() || !data->is_object()) continue;
      const auto text = [&](const char* key) {
        const auto it = data->find(key);
        return it != data->end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      if (event->kind == protocol::EventKind::SessionRewound) {
        forget_rewound(*data);
        continue;
      }
      const std::string turn_id = text("turnId");
      if (event->kind == protocol::EventKind::TurnStarted) {
        prompts[turn_id] = text("text");
        continue;
      }
      const auto prompt = prompts.find(turn_id);
      if (prompt == prompts.end()) continue;
      exchanges.push_back(engine::Exchange{std::move(prompt->second), text("text"), turn_id});
      prompts.erase(prompt);
      // The fork's turn: what came later in the source (its turns, its rewinds) the fork never held.
      if (end.through_turn && turn_id == *end.through_turn) return done(std::move(exchanges));
    }
    read += events->size();
    if (events->size() < kExchangePage || read >= kExchangeEventLimit) return finish();
    next(last);
  }

  // The log ended (or the time passed) before the fork's turn: that turn is not there any more (its events were
  // dropped), so nothing read can be told to be what the fork held.
  void finish() {
    if (end.through_turn) exchanges.clear();
    done(std::move(exchanges));
  }

  // A rewind of the conversation: the agent no longer holds its turn and every later one, so neither does a seed
  // (a rewind of the files alone leaves them). From the rewind's turn on, not only the turns the event lists: a
  // turn whose files were rewound before is not listed again.
  void forget_rewound(const nlohmann::json& data) {
    const auto conversation = data.find("conversation");
    if (conversation == data.end() || *conversation != true) return;
    const auto turn = data.find("turnId");
    const auto listed = data.find("rewoundTurnIds");
    const auto undone = [&](const engine::Exchange& exchange) {
      if (turn != data.end() && *turn == exchange.turn_id) return true;
      return listed != data.end() && listed->is_array() &&
             std::find(listed->begin(), listed->end(), exchange.turn_id) != listed->end();
    };
    exchanges.erase(std::find_if(exchanges.begin(), exchanges.end(), undone), exchanges.end());
  }
};

}  // namespace

void StoredSessions::exchanges(const std::string& session_id, std::function<void(std::vector<engine::Exchange>)> done) {
  conversation_exchanges(session_id, ExchangeEnd{}, kForkDepth, std::move(done));
}

void StoredSessions::conversation_exchanges(const std::string& session_id, const ExchangeEnd& end, int forks_left,
                                            std::function<void(std::vector<engine::Exchange>)> done) {
  // A fork's conversation began as a copy of its source's through the fork's turn: those exchanges come first.
  m_store.sessions().get_session(session_id, [this, session_id, end, forks_left, done = std::move(done)](
                                                 store::StoreResult<store::SessionRecord> record) mutable {
    std::optional<protocol::ForkOrigin> origin;
    std::int64_t created_at = 0;
    if (record) {
      origin = decode_one<protocol::ForkOrigin>(record->forked_from, record->id, "fork origin");
      created_at = record->created_at;
    }
    auto own = [this, session_id, end, done = std::move(done)](std::vector<engine::Exchange> earlier) mutable {
      std::make_shared<ExchangeReader>(m_store.events(), session_id, end,
                                       [earlier = std::move(earlier), done = std::move(done)](std::vector<engine::Exchange> mine) mutable {
                                         earlier.insert(earlier.end(), std::make_move_iterator(mine.begin()),
                                                        std::make_move_iterator(mine.end()));
                                         done(std::move(earlier));
                                       })
          ->next(0);
    };
    if (!origin || forks_left == 0) return own({});
    const ExchangeEnd fork_point = origin->turn_id ? ExchangeEnd{origin->turn_id, std::nullopt} : ExchangeEnd{std::nullopt, created_at};
    conversation_exchanges(origin->session_id, fork_point, forks_left - 1, std::move(own));
  });
}

}  // namespace switchboard::daemon
