#include "store/SessionStore.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>

#include "store/Database.h"
#include "store/SearchIndex.h"
#include "store/SessionListSql.h"
#include "store/StoreWorker.h"
#include "switchboard/support/Clock.h"

namespace switchboard::store {

std::string SessionCursor::encode() const { return std::to_string(created_at) + ":" + id; }

std::optional<SessionCursor> SessionCursor::decode(std::string_view token) {
  const auto colon = token.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  SessionCursor cursor;
  const auto [end, error] = std::from_chars(token.data(), token.data() + colon, cursor.created_at);
  if (error != std::errc() || end != token.data() + colon) return std::nullopt;
  cursor.id = std::string(token.substr(colon + 1));
  return cursor;
}

namespace {

constexpr std::size_t kMaxPage = 1000;
constexpr const char* kSessionColumns =
    "id, agent, cwd, title, model, mode, archived, state, created_at, updated_at, last_seq, mcp_servers, option_values, "
    "forked_from, plan, context_usage, worktree";
constexpr const char* kRunColumns = "id, session_id, provider_session_id, started_at, ended_at, fork, fork_through";

StoreError not_found(std::string what) { return StoreError{StoreError::Code::NotFound, std::move(what)}; }

std::string ascii_lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

bool is_constraint(const SQLite::Exception& e, int extended_code) { return e.getExtendedErrorCode() == extended_code; }

SessionRecord read_session(const SQLite::Statement& row) {
  SessionRecord session;
  session.id = row.getColumn(0).getString();
  session.agent = row.getColumn(1).getString();
  session.cwd = row.getColumn(2).getString();
  session.title = row.getColumn(3).getString();
  session.model = row.getColumn(4).getString();
  session.mode = row.getColumn(5).getString();
  session.archived = row.getColumn(6).getInt() != 0;
  session.state = row.getColumn(7).getString();
  session.created_at = row.getColumn(8).getInt64();
  session.updated_at = row.getColumn(9).getInt64();
  session.last_seq = static_cast<std::uint64_t>(row.getColumn(10).getInt64());
  session.mcp_servers = row.getColumn(11).getString();
  session.option_values = row.getColumn(12).getString();
  session.forked_from = row.getColumn(13).getString();
  session.plan = row.getColumn(14).getString();
  session.context_usage = row.getColumn(15).getString();
  session.worktree = row.getColumn(16).getString();
  return session;
}

std::optional<SessionRecord> find_session(SQLite::Database& db, const std::string& id) {
  SQLite::Statement query(db, std::string("SELECT ") + kSessionColumns + " FROM sessions WHERE id = ?");
  query.bind(1, id);
  if (!query.executeStep()) return std::nullopt;
  return read_session(query);
}

RunRecord read_run(const SQLite::Statement& row) {
  RunRecord run;
  run.id = row.getColumn(0).getInt64();
  run.session_id = row.getColumn(1).getString();
  run.provider_session_id = row.getColumn(2).getString();
  run.started_at = row.getColumn(3).getInt64();
  if (!row.getColumn(4).isNull()) run.ended_at = row.getColumn(4).getInt64();
  run.fork = row.getColumn(5).getInt() != 0;
  if (!row.getColumn(6).isNull()) run.fork_through = row.getColumn(6).getString();
  return run;
}

std::optional<RunRecord> find_run(SQLite::Database& db, std::int64_t id) {
  SQLite::Statement query(db, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?");
  query.bind(1, id);
  if (!query.executeStep()) return std::nullopt;
  return read_run(query);
}

}  // namespace

void SessionStore::insert_session(SessionRecord session, StoreCallback<SessionRecord> done) {
  m_worker.submit(
      "insert session",
      [session = std::move(session)](Database& db) -> StoreResult<SessionRecord> {
        SQLite::Statement insert(db.sql(), std::string("INSERT INTO sessions(") + kSessionColumns +
                                               ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        insert.bind(1, session.id);
        insert.bind(2, session.agent);
        insert.bind(3, session.cwd);
        insert.bind(4, session.title);
        insert.bind(5, session.model);
        insert.bind(6, session.mode);
        insert.bind(7, session.archived ? 1 : 0);
        insert.bind(8, session.state);
        insert.bind(9, session.created_at);
        insert.bind(10, session.updated_at);
        insert.bind(11, static_cast<std::int64_t>(session.last_seq));
        insert.bind(12, session.mcp_servers);
        insert.bind(13, session.option_values);
        insert.bind(14, session.forked_from);
        insert.bind(15, session.plan);
        insert.bind(16, session.context_usage);
        insert.bind(17, session.worktree);
        try {
          insert.exec();
        } catch (const SQLite::Exception& e) {
          if (!is_constraint(e, SQLITE_CONSTRAINT_PRIMARYKEY)) throw;
          return StoreError{StoreError::Code::Conflict, "insert session: session " + session.id + " exists already"};
        }
        return session;
      },
      std::move(done));
}

void SessionStore::update_session(std::string id, SessionUpdate update, StoreCallback<SessionRecord> done) {
  m_worker.submit(
      "update session",
      [id = std::move(id), update = std::move(update)](Database& db) -> StoreResult<SessionRecord> {
        // Never created_at: a session's list_key (schema version 12) is made from it once, when it is inserted.
        // Only the columns given; COALESCE-style SQL would need every optional bound as NULL-or-value and could
        // not set a column to an explicit empty string differently from "unchanged".
        std::string sql = "UPDATE sessions SET updated_at = ?";
        if (update.title) sql += ", title = ?";
        if (update.model) sql += ", model = ?";
        if (update.mode) sql += ", mode = ?";
        if (update.state) sql += ", state = ?";
        if (update.archived) sql += ", archived = ?";
        if (update.option_values) sql += ", option_values = ?";
        if (update.plan) sql += ", plan = ?";
        if (update.context_usage) sql += ", context_usage = ?";
        if (update.worktree) sql += ", worktree = ?";
        sql += " WHERE id = ?";
        SQLite::Statement statement(db.sql(), sql);
        int index = 1;
        statement.bind(index++, update.updated_at.value_or(unix_millis_now()));
        for (const auto* field : {&update.title, &update.model, &update.mode, &update.state}) {
          if (*field) statement.bind(index++, **field);
        }
        if (update.archived) statement.bind(index++, *update.archived ? 1 : 0);
        for (const auto* field : {&update.option_values, &update.plan, &update.context_usage, &update.worktree}) {
          if (*field) statement.bind(index++, **field);
        }
        statement.bind(index, id);
        if (statement.exec() == 0) return not_found("update session: no session " + id);
        auto session = find_session(db.sql(), id);
        if (!session) return not_found("update session: no session " + id);
        return std::move(*session);
      },
      std::move(done));
}

void SessionStore::get_session(std::string id, StoreCallback<SessionRecord> done) {
  m_worker.submit(
      "get session",
      [id = std::move(id)](Database& db) -> StoreResult<SessionRecord> {
        auto session = find_session(db.sql(), id);
        if (!session) return not_found("no session " + id);
        return std::move(*session);
      },
      std::move(done));
}

namespace {

// The index a page walks: the filters' columns lead it, then list order. session.list always filters on archived:
// its indexes carry that column after agent or directory. Named, so the planner cannot trade them for one that
// needs a sort; a store caller that leaves archived out walks the whole list in order instead.
const char* list_index(const SessionQuery& query) {
  if (!query.archived) return "sessions_by_created";
  return query.cwd ? "sessions_by_cwd_archived" : query.agent ? "sessions_by_agent_archived" : "sessions_by_archived";
}

// The filters other than text, and the cursor (if `after`) as a row value (so an index's range starts at it; an
// OR of two comparisons would only filter).
std::string list_filters(const SessionQuery& query, bool after) {
  std::string sql;
  if (query.agent) sql += " AND agent = :agent";
  if (query.cwd) sql += " AND cwd = :cwd";
  if (query.archived) sql += " AND archived = :archived";
  if (after) sql += " AND (created_at, id) < (:created, :id)";
  return sql;
}

// SQLite's lower() folds ASCII letters only, as session.list's text filter has always matched; instr takes the
// text as text, never as a pattern.
constexpr const char* kTextFilter = " AND (instr(lower(title), :text) > 0 OR instr(lower(cwd), :text) > 0)";
constexpr const char* kListOrder = " ORDER BY created_at DESC, id DESC";

}  // namespace

bool session_list_uses_text_index(const SessionQuery& query) {
  if (!query.text) return false;
  // Characters, not bytes: a trigram is three code points (UTF-8 continuation bytes are 10xxxxxx).
  std::size_t characters = 0;
  for (const char c : *query.text) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++characters;
  }
  return characters >= 3;
}

std::string session_list_sql(const SessionQuery& query) {
  // Each page reads an index in list order from the cursor on, the filter's columns leading it, so a page costs
  // its own rows however many sessions the filters leave out. One row more than asked tells whether another page
  // follows.
  const std::string walk = std::string("SELECT ") + kSessionColumns + " FROM sessions INDEXED BY " + list_index(query) +
                           " WHERE 1" + list_filters(query, query.after.has_value());
  if (!session_list_uses_text_index(query)) {
    return walk + (query.text ? kTextFilter : "") + kListOrder + " LIMIT :limit";
  }
  // The capped walk as a co-routine: its rows come out in list order, and the text filter reads them as they come.
  return std::string("SELECT ") + kSessionColumns + " FROM (" + walk + kListOrder + " LIMIT :walk) WHERE 1" +
         kTextFilter + " LIMIT :limit";
}

std::string session_list_walk_end_sql(const SessionQuery& query) {
  // The same walk read from the index alone where its columns are there (created_at, id and the filters'); the
  // end row's list_key is read from its table row, once.
  return std::string("SELECT created_at, id, list_key FROM sessions INDEXED BY ") + list_index(query) + " WHERE 1" +
         list_filters(query, query.after.has_value()) + kListOrder + " LIMIT 1 OFFSET :walk - 1";
}

std::string session_list_text_match_sql(const SessionQuery& query) {
  // The trigram index's matches newest list_key first, read as they come (the index keeps its rowids in order;
  // no sort, no count), each joined to its session through its key. The bound starts them at the end row's
  // millisecond; the cursor's row value then drops those before the end row in list order.
  const std::string tie_bits = std::to_string(kListKeyTieBits);
  return std::string("SELECT ") + kSessionColumns + ", text_key >> " + tie_bits +
         " FROM (SELECT rowid AS text_key FROM session_text WHERE session_text MATCH :match AND rowid <= (:end_key | " +
         std::to_string((std::int64_t{1} << kListKeyTieBits) - 1) + ") ORDER BY rowid DESC)" +
         " CROSS JOIN sessions INDEXED BY sessions_by_list_key ON list_key = text_key WHERE 1" +
         list_filters(query, true) + kTextFilter + " ORDER BY text_key DESC";
}

std::string fts_phrase(const std::string& text) {
  std::string phrase = "\"";
  for (const char c : text) {
    if (c == '"') phrase += '"';
    phrase += c;
  }
  phrase += '"';
  return phrase;
}

namespace {

// Reads a text match's rows (session columns, then the row's millisecond) until `wanted` are read and the
// millisecond of the last of those is over: every session of that millisecond after them in list order is among
// the rows read, as the keys order sessions by millisecond alone. Appends the first `wanted` in list order.
void append_in_list_order(SQLite::Statement& match, std::size_t wanted, std::vector<SessionRecord>& page) {
  const int millisecond_column = match.getColumnCount() - 1;
  std::vector<SessionRecord> rows;
  std::optional<std::int64_t> last_millisecond;
  while (match.executeStep()) {
    const std::int64_t millisecond = match.getColumn(millisecond_column).getInt64();
    if (last_millisecond && millisecond != *last_millisecond) break;
    rows.push_back(read_session(match));
    if (rows.size() == wanted) last_millisecond = millisecond;
  }
  std::sort(rows.begin(), rows.end(), [](const SessionRecord& a, const SessionRecord& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  if (rows.size() > wanted) rows.resize(wanted);
  std::move(rows.begin(), rows.end(), std::back_inserter(page));
}

}  // namespace

void SessionStore::list_sessions(SessionQuery query, StoreCallback<SessionPage> done) {
  m_worker.submit(
      "list sessions",
      [query = std::move(query)](Database& db) -> StoreResult<SessionPage> {
        const std::size_t limit = std::clamp<std::size_t>(query.limit, 1, kMaxPage);
        const auto bind_filters = [&](SQLite::Statement& statement, const std::optional<SessionCursor>& after) {
          if (query.agent) statement.bind(":agent", *query.agent);
          if (query.cwd) statement.bind(":cwd", *query.cwd);
          if (query.archived) statement.bind(":archived", *query.archived ? 1 : 0);
          if (after) {
            statement.bind(":created", after->created_at);
            statement.bind(":id", after->id);
          }
        };
        const bool text_index = session_list_uses_text_index(query);
        SessionPage page;
        {
          SQLite::Statement statement(db.sql(), session_list_sql(query));
          bind_filters(statement, query.after);
          if (query.text) statement.bind(":text", ascii_lower(*query.text));
          if (text_index) statement.bind(":walk", kSessionListTextWalk);
          // One row more than asked tells whether another page follows.
          statement.bind(":limit", static_cast<std::int64_t>(limit + 1));
          while (statement.executeStep()) page.sessions.push_back(read_session(statement));
        }
        if (text_index && page.sessions.size() <= limit) {
          // The capped walk did not fill the page: if it stopped short of the list's end, the rest of the page is
          // among the sessions after its last row that the trigram index names.
          SQLite::Statement walk_end(db.sql(), session_list_walk_end_sql(query));
          bind_filters(walk_end, query.after);
          walk_end.bind(":walk", kSessionListTextWalk);
          if (walk_end.executeStep()) {
            const SessionCursor end{walk_end.getColumn(0).getInt64(), walk_end.getColumn(1).getString()};
            SQLite::Statement match(db.sql(), session_list_text_match_sql(query));
            bind_filters(match, end);
            match.bind(":text", ascii_lower(*query.text));
            match.bind(":match", fts_phrase(*query.text));
            match.bind(":end_key", walk_end.getColumn(2).getInt64());
            append_in_list_order(match, limit + 1 - page.sessions.size(), page.sessions);
          }
        }
        if (page.sessions.size() > limit) {
          page.sessions.pop_back();
          page.next = SessionCursor{page.sessions.back().created_at, page.sessions.back().id};
        }
        return page;
      },
      std::move(done));
}

void SessionStore::list_worktrees(StoreCallback<std::vector<std::string>> done) {
  m_worker.submit(
      "list worktrees",
      [](Database& db) -> StoreResult<std::vector<std::string>> {
        SQLite::Statement query(db.sql(), "SELECT worktree FROM sessions INDEXED BY sessions_with_worktree WHERE worktree != ''");
        std::vector<std::string> worktrees;
        while (query.executeStep()) worktrees.push_back(query.getColumn(0).getString());
        return worktrees;
      },
      std::move(done));
}

void SessionStore::delete_session(std::string id, StoreCallback<void> done) {
  m_worker.submit(
      "delete session",
      [id = std::move(id)](Database& db) -> StoreResult<void> {
        SQLite::Transaction transaction(db.sql(), SQLite::TransactionBehavior::IMMEDIATE);
        SQLite::Statement statement(db.sql(), "DELETE FROM sessions WHERE id = ?");
        statement.bind(1, id);
        if (statement.exec() == 0) return not_found("delete session: no session " + id);
        forget_session_text(db.sql(), id);  // a deleted session is never found again
        transaction.commit();
        return {};
      },
      std::move(done));
}

void SessionStore::add_run(std::string session_id, std::string provider_session_id, bool fork, std::int64_t started_at,
                           StoreCallback<RunRecord> done) {
  add_run(std::move(session_id), std::move(provider_session_id), fork, std::nullopt, started_at, std::move(done));
}

void SessionStore::add_run(std::string session_id, std::string provider_session_id, bool fork,
                           std::optional<std::string> fork_through, std::int64_t started_at, StoreCallback<RunRecord> done) {
  RunRecord record;
  record.session_id = std::move(session_id);
  record.provider_session_id = std::move(provider_session_id);
  record.started_at = started_at;
  record.fork = fork;
  record.fork_through = std::move(fork_through);
  m_worker.submit(
      "add run",
      [run = std::move(record)](Database& db) mutable -> StoreResult<RunRecord> {
        SQLite::Statement insert(
            db.sql(), "INSERT INTO runs(session_id, provider_session_id, started_at, fork, fork_through) VALUES (?, ?, ?, ?, ?)");
        insert.bind(1, run.session_id);
        insert.bind(2, run.provider_session_id);
        insert.bind(3, run.started_at);
        insert.bind(4, run.fork ? 1 : 0);
        if (run.fork_through) insert.bind(5, *run.fork_through);
        else insert.bind(5);
        try {
          insert.exec();
        } catch (const SQLite::Exception& e) {
          if (!is_constraint(e, SQLITE_CONSTRAINT_FOREIGNKEY)) throw;
          return not_found("add run: no session " + run.session_id);
        }
        run.id = db.sql().getLastInsertRowid();
        return run;
      },
      std::move(done));
}

void SessionStore::end_run(std::int64_t run_id, std::int64_t ended_at, StoreCallback<RunRecord> done) {
  m_worker.submit(
      "end run",
      [run_id, ended_at](Database& db) -> StoreResult<RunRecord> {
        SQLite::Statement statement(db.sql(), "UPDATE runs SET ended_at = ? WHERE id = ?");
        statement.bind(1, ended_at);
        statement.bind(2, run_id);
        if (statement.exec() == 0) return not_found("end run: no run " + std::to_string(run_id));
        auto run = find_run(db.sql(), run_id);
        if (!run) return not_found("end run: no run " + std::to_string(run_id));
        return std::move(*run);
      },
      std::move(done));
}

void SessionStore::list_runs(std::string session_id, StoreCallback<std::vector<RunRecord>> done) {
  m_worker.submit(
      "list runs",
      [session_id = std::move(session_id)](Database& db) -> StoreResult<std::vector<RunRecord>> {
        SQLite::Statement query(db.sql(),
                                std::string("SELECT ") + kRunColumns + " FROM runs WHERE session_id = ? ORDER BY id");
        query.bind(1, session_id);
        std::vector<RunRecord> runs;
        while (query.executeStep()) runs.push_back(read_run(query));
        return runs;
      },
      std::move(done));
}

void SessionStore::find_continuing_session(std::string agent, std::string provider_session_id,
                                           StoreCallback<std::optional<std::string>> done) {
  m_worker.submit(
      "find the session continuing a conversation",
      [agent = std::move(agent), provider_session_id = std::move(provider_session_id)](
          Database& db) -> StoreResult<std::optional<std::string>> {
        SQLite::Statement query(db.sql(),
                                "SELECT r.session_id FROM runs r JOIN sessions s ON s.id = r.session_id "
                                "WHERE s.agent = ? AND r.provider_session_id = ? AND r.fork = 0 "
                                "AND r.id = (SELECT max(id) FROM runs WHERE session_id = r.session_id) LIMIT 1");
        query.bind(1, agent);
        query.bind(2, provider_session_id);
        if (!query.executeStep()) return std::optional<std::string>();
        return std::optional<std::string>(query.getColumn(0).getString());
      },
      std::move(done));
}

void SessionStore::add_turn(std::string session_id, TurnRow turn, StoreCallback<void> done) {
  m_worker.submit(
      "add turn",
      [session_id = std::move(session_id), turn = std::move(turn)](Database& db) -> StoreResult<void> {
        SQLite::Statement insert(db.sql(),
                                 "INSERT INTO turns(session_id, turn_id, position, native_ref, rewound) "
                                 "SELECT ?1, ?2, coalesce(max(position), 0) + 1, ?3, ?4 FROM turns WHERE session_id = ?1 "
                                 "ON CONFLICT(session_id, turn_id) DO UPDATE SET native_ref = excluded.native_ref");
        insert.bind(1, session_id);
        insert.bind(2, turn.turn_id);
        if (turn.native_ref) insert.bind(3, *turn.native_ref);
        else insert.bind(3);
        insert.bind(4, turn.rewound ? 1 : 0);
        try {
          insert.exec();
        } catch (const SQLite::Exception& e) {
          if (!is_constraint(e, SQLITE_CONSTRAINT_FOREIGNKEY)) throw;
          return not_found("add turn: no session " + session_id);
        }
        return {};
      },
      std::move(done));
}

void SessionStore::list_turns(std::string session_id, StoreCallback<std::vector<TurnRow>> done) {
  m_worker.submit(
      "list turns",
      [session_id = std::move(session_id)](Database& db) -> StoreResult<std::vector<TurnRow>> {
        SQLite::Statement query(db.sql(),
                                "SELECT turn_id, native_ref, rewound FROM turns WHERE session_id = ? ORDER BY position");
        query.bind(1, session_id);
        std::vector<TurnRow> turns;
        while (query.executeStep()) {
          TurnRow turn;
          turn.turn_id = query.getColumn(0).getString();
          if (!query.getColumn(1).isNull()) turn.native_ref = query.getColumn(1).getString();
          turn.rewound = query.getColumn(2).getInt() != 0;
          turns.push_back(std::move(turn));
        }
        return turns;
      },
      std::move(done));
}

void SessionStore::mark_turns_rewound(std::string session_id, std::vector<std::string> turn_ids, StoreCallback<void> done) {
  m_worker.submit(
      "mark turns rewound",
      [session_id = std::move(session_id), turn_ids = std::move(turn_ids)](Database& db) -> StoreResult<void> {
        SQLite::Transaction transaction(db.sql());
        SQLite::Statement update(db.sql(), "UPDATE turns SET rewound = 1 WHERE session_id = ? AND turn_id = ?");
        for (const auto& turn_id : turn_ids) {
          update.bind(1, session_id);
          update.bind(2, turn_id);
          update.exec();
          update.reset();
        }
        transaction.commit();
        return {};
      },
      std::move(done));
}

void SessionStore::mark_interrupted(InterruptedTurn turn, StoreCallback<void> done) {
  m_worker.submit(
      "mark turn interrupted",
      [turn = std::move(turn)](Database& db) -> StoreResult<void> {
        SQLite::Statement upsert(
            db.sql(),
            "INSERT INTO interrupted_turns(session_id, turn_id, prompt_json, interrupted_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET turn_id = excluded.turn_id, "
            "prompt_json = excluded.prompt_json, interrupted_at = excluded.interrupted_at");
        upsert.bind(1, turn.session_id);
        upsert.bind(2, turn.turn_id);
        upsert.bind(3, turn.prompt_json);
        upsert.bind(4, turn.interrupted_at);
        try {
          upsert.exec();
        } catch (const SQLite::Exception& e) {
          if (!is_constraint(e, SQLITE_CONSTRAINT_FOREIGNKEY)) throw;
          return not_found("mark turn interrupted: no session " + turn.session_id);
        }
        return {};
      },
      std::move(done));
}

void SessionStore::list_interrupted(StoreCallback<std::vector<InterruptedTurn>> done) {
  m_worker.submit(
      "list interrupted turns",
      [](Database& db) -> StoreResult<std::vector<InterruptedTurn>> {
        SQLite::Statement query(db.sql(),
                                "SELECT session_id, turn_id, prompt_json, interrupted_at FROM interrupted_turns "
                                "ORDER BY interrupted_at, session_id");
        std::vector<InterruptedTurn> turns;
        while (query.executeStep()) {
          turns.push_back(InterruptedTurn{query.getColumn(0).getString(), query.getColumn(1).getString(),
                                          query.getColumn(2).getString(), query.getColumn(3).getInt64()});
        }
        return turns;
      },
      std::move(done));
}

void SessionStore::clear_interrupted(std::string session_id, StoreCallback<void> done) {
  m_worker.submit(
      "clear interrupted turn",
      [session_id = std::move(session_id)](Database& db) -> StoreResult<void> {
        SQLite::Statement statement(db.sql(), "DELETE FROM interrupted_turns WHERE session_id = ?");
        statement.bind(1, session_id);
        statement.exec();
        return {};
      },
      std::move(done));
}

}  // namespace switchboard::store
