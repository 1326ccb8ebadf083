#include "store/Migrations.h"

#include <string>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Transaction.h>
#include <spdlog/spdlog.h>

#include "switchboard/support/Bug.h"

namespace switchboard::store {
namespace {

// Version 1: the tables of the issue, as specified.
//  - Text columns that always have a value are NOT NULL with '' as "unset" (title, model, mode, state), so
//    readers need no NULL handling; columns where absence means something (rules' cwd and pattern, a run's
//    ended_at, an event's session_id and turn_id) stay nullable.
//  - TEXT PRIMARY KEYs say NOT NULL explicitly: SQLite's legacy quirk lets NULL into a non-INTEGER key.
//  - events.seq is the egress's seq (the rowid, so range scans and "delete the oldest" are b-tree walks);
//    session_id is NULL for global events; turn_id is data.turnId; compacted marks the events of a turn whose
//    message.delta rows compact_turn removed.
constexpr std::string_view kVersion1 = R"sql(
PRAGMA application_id = 1398227524;

CREATE TABLE sessions (
  id          TEXT PRIMARY KEY NOT NULL,
  agent       TEXT NOT NULL,
  cwd         TEXT NOT NULL,
  title       TEXT NOT NULL DEFAULT '',
  model       TEXT NOT NULL DEFAULT '',
  mode        TEXT NOT NULL DEFAULT '',
  archived    INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  state       TEXT NOT NULL DEFAULT '',
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  last_seq    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE runs (
  id                   INTEGER PRIMARY KEY,
  session_id           TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  provider_session_id  TEXT NOT NULL,
  started_at           INTEGER NOT NULL,
  ended_at             INTEGER
);

CREATE TABLE permission_rules (
  id          TEXT PRIMARY KEY NOT NULL,
  scope       TEXT NOT NULL CHECK (scope IN ('project', 'always')),
  cwd         TEXT CHECK (scope = 'always' OR cwd IS NOT NULL),
  tool        TEXT NOT NULL,
  pattern     TEXT,
  decision    TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
  created_at  INTEGER NOT NULL
);

CREATE TABLE interrupted_turns (
  session_id      TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id         TEXT NOT NULL,
  prompt_json     TEXT NOT NULL,
  interrupted_at  INTEGER NOT NULL
);

CREATE TABLE events (
  seq         INTEGER PRIMARY KEY,
  session_id  TEXT,
  type        TEXT NOT NULL,
  json        TEXT NOT NULL,
  turn_id     TEXT,
  compacted   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX events_by_session ON events(session_id, seq);
)sql";

// Version 2: what the store's queries need beyond the issue's tables.
//  - store_meta keeps the event log's high-water seq: compact_turn may delete the newest row, and seqs must
//    never be reused after a restart (SSE clients resume by Last-Event-ID). Seeded from existing events.
//  - sessions_by_created serves the newest-first session list and its cursor; runs_by_session serves
//    list_runs and the ON DELETE CASCADE from sessions.
//  - Deliberately no index on events.turn_id: it cost ~1.5 us per appended event (a third of the append
//    budget) to serve compact_turn, which runs once per turn. compact_turn uses events_by_session from the
//    turn's first seq instead (EventTable remembers it for recent turns).
constexpr std::string_view kVersion2 = R"sql(
CREATE TABLE store_meta (
  key    TEXT PRIMARY KEY NOT NULL,
  value  INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta(key, value) SELECT 'events.high_water_seq', coalesce(max(seq), 0) FROM events;

CREATE INDEX sessions_by_created ON sessions(created_at, id);
CREATE INDEX runs_by_session ON runs(session_id, id);
)sql";

// Version 3: seq reservation (docs/persistence.md, "Seqs never repeat").
//  - store_meta 'events.reserved_seq' (written by the event log, absent until then) is the highest seq the
//    egress may hand out; it is durable before any seq below it reaches a client.
//  - lost_events holds the seqs an earlier run reserved but never stored (it was killed before its batch
//    committed): events clients may have received and that are gone. Replays announce them as gaps.
constexpr std::string_view kVersion3 = R"sql(
CREATE TABLE lost_events (
  first_seq  INTEGER PRIMARY KEY,
  last_seq   INTEGER NOT NULL CHECK (last_seq >= first_seq)
);
)sql";

// Version 4: a run may name a conversation its session is to continue a fork of (session.import of a
// conversation another session of ours continues; docs/persistence.md). Existing runs are plain.
constexpr std::string_view kVersion4 = R"sql(
ALTER TABLE runs ADD COLUMN fork INTEGER NOT NULL DEFAULT 0 CHECK (fork IN (0, 1));
)sql";

// Version 5: what a session keeps for its agent's controls (docs/persistence.md, docs/controls.md).
//  - sessions: the MCP servers given at session.create (JSON, env and headers included: the agent needs them
//    at every start), the option values chosen with session.setOption (a JSON object), the session it was
//    forked from, and the agent's latest plan and context usage (JSON). '' is "none", as for the other columns.
//  - runs.fork_through: with fork, the agent's own reference of the last turn the fork keeps.
//  - turns: each ended turn of a session, in order, with the agent's reference for it (TurnResult::
//    native_turn_ref, what fork and rewind hand back to the agent) and whether a rewind undid it.
constexpr std::string_view kVersion5 = R"sql(
ALTER TABLE sessions ADD COLUMN mcp_servers TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN option_values TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN plan TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN context_usage TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN fork_through TEXT;

CREATE TABLE turns (
  session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id     TEXT NOT NULL,
  position    INTEGER NOT NULL,
  native_ref  TEXT,
  rewound     INTEGER NOT NULL DEFAULT 0 CHECK (rewound IN (0, 1)),
  PRIMARY KEY (session_id, turn_id)
) WITHOUT ROWID;
)sql";

// Version 6: full-text search over the event log (docs/search.md).
//  - event_search: an FTS5 table, one row per searchable event of a stored session, its rowid the event's seq;
//    the text column is indexed, the others are carried for filters and hits. unicode61 with diacritics
//    removed: "resume" finds "résumé".
//  - event_search_source: what each searchable event contributes (a prompt's or an answer's text, a tool's
//    name with the string values of its input, a tool's output). The one definition, used by the backfill
//    below and by every commit of the event log (SearchIndex.h).
//  - The backfill indexes every stored event of an existing data directory, in this migration's transaction:
//    nothing is lost, and a failure leaves the file at version 5.
constexpr std::string_view kVersion6 = R"sql(
CREATE VIRTUAL TABLE event_search USING fts5(
  text, session_id UNINDEXED, turn_id UNINDEXED, type UNINDEXED, ts UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE VIEW event_search_source(seq, text, session_id, turn_id, type, ts) AS
  SELECT seq,
         CASE type
           WHEN 'tool.started' THEN
             coalesce(json_extract(events.json, '$.data.tool'), '') || ' ' ||
             coalesce((SELECT group_concat(value, ' ') FROM json_tree(events.json, '$.data.input')
                       WHERE json_tree.type = 'text'), '')
           WHEN 'tool.completed' THEN json_extract(events.json, '$.data.output')
           ELSE json_extract(events.json, '$.data.text')
         END,
         session_id, turn_id, type, json_extract(events.json, '$.ts')
  FROM events
  WHERE type IN ('turn.started', 'message.completed', 'tool.started', 'tool.completed')
    AND session_id IN (SELECT id FROM sessions)
    AND json_valid(events.json);

INSERT INTO event_search(rowid, text, session_id, turn_id, type, ts)
  SELECT seq, text, session_id, turn_id, type, ts FROM event_search_source WHERE text IS NOT NULL AND text != '';
)sql";

// Version 7: a session's own git worktree (docs/worktrees.md): JSON with its path, branch, base and repository,
// '' for a session without one, as for the other JSON columns.
constexpr std::string_view kVersion7 = R"sql(
ALTER TABLE sessions ADD COLUMN worktree TEXT NOT NULL DEFAULT '';
)sql";

// Version 8: session.list served by the store a page at a time, without the daemon holding every session.
//  - sessions_by_agent and sessions_by_cwd: a page filtered by agent or directory reads its rows in list order
//    (newest first) from the start of the page, however few sessions match.
//  - sessions_with_worktree: the daemon's start finds the sessions that own a worktree without reading the others.
constexpr std::string_view kVersion8 = R"sql(
CREATE INDEX sessions_by_agent ON sessions(agent, created_at, id);
CREATE INDEX sessions_by_cwd ON sessions(cwd, created_at, id);
CREATE INDEX sessions_with_worktree ON sessions(id) WHERE worktree != '';
)sql";

// Version 9: the search index's source view reads a commit's events by seq. Without the unary plus, SQLite ran
// the view's "session_id IN (SELECT id FROM sessions)" as a loop over every stored session, one probe of
// events_by_session each: about 0.1 s per event-log commit at 100,000 sessions (index_events, on every commit).
// "+session_id" keeps that column's index out of the plan: the events come from the seq range of the primary key,
// each checked against the sessions' primary key. Same rows, same columns as version 6's view.
constexpr std::string_view kVersion9 = R"sql(
DROP VIEW event_search_source;
CREATE VIEW event_search_source(seq, text, session_id, turn_id, type, ts) AS
  SELECT seq,
         CASE type
           WHEN 'tool.started' THEN
             coalesce(json_extract(events.json, '$.data.tool'), '') || ' ' ||
             coalesce((SELECT group_concat(value, ' ') FROM json_tree(events.json, '$.data.input')
                       WHERE json_tree.type = 'text'), '')
           WHEN 'tool.completed' THEN json_extract(events.json, '$.data.output')
           ELSE json_extract(events.json, '$.data.text')
         END,
         session_id, turn_id, type, json_extract(events.json, '$.ts')
  FROM events
  WHERE type IN ('turn.started', 'message.completed', 'tool.started', 'tool.completed')
    AND +session_id IN (SELECT id FROM sessions)
    AND json_valid(events.json);
)sql";

// Version 10: session.list filters on archived always (archived = 0 unless asked otherwise), so its indexes lead
// with it after agent or directory: a page then reads its own rows in list order, where version 8's indexes read
// every archived session (of that agent, in that directory) ahead of them and filtered them out one by one.
constexpr std::string_view kVersion10 = R"sql(
DROP INDEX sessions_by_agent;
DROP INDEX sessions_by_cwd;
CREATE INDEX sessions_by_archived ON sessions(archived, created_at, id);
CREATE INDEX sessions_by_agent_archived ON sessions(agent, archived, created_at, id);
CREATE INDEX sessions_by_cwd_archived ON sessions(cwd, archived, created_at, id);
)sql";

// Version 11: session.list's text filter finds a rare text without reading every session.
//  - session_text: a trigram FTS5 index over each session's title and directory (external content: the text
//    stays in sessions, keyed by its rowid). A text of three or more characters matches the sessions holding all
//    its trigrams in sequence: a superset of the filter's own rule (ASCII case ignored; the tokenizer folds more,
//    so the list still applies the rule to every candidate).
//  - Triggers keep it with every insert, delete and change of title or directory, in the writer's transaction.
//  - 'rebuild' indexes the sessions of an existing data directory in this migration's transaction.
constexpr std::string_view kVersion11 = R"sql(
CREATE VIRTUAL TABLE session_text USING fts5(
  title, cwd, content = 'sessions', content_rowid = 'rowid', tokenize = 'trigram case_sensitive 0'
);
CREATE TRIGGER session_text_after_insert AFTER INSERT ON sessions BEGIN
  INSERT INTO session_text(rowid, title, cwd) VALUES (new.rowid, new.title, new.cwd);
END;
CREATE TRIGGER session_text_after_delete AFTER DELETE ON sessions BEGIN
  INSERT INTO session_text(session_text, rowid, title, cwd) VALUES ('delete', old.rowid, old.title, old.cwd);
END;
CREATE TRIGGER session_text_after_update AFTER UPDATE OF title, cwd ON sessions BEGIN
  INSERT INTO session_text(session_text, rowid, title, cwd) VALUES ('delete', old.rowid, old.title, old.cwd);
  INSERT INTO session_text(rowid, title, cwd) VALUES (new.rowid, new.title, new.cwd);
END;
INSERT INTO session_text(session_text) VALUES ('rebuild');
)sql";

// Version 12: session_text keyed in list order, so a text page reads the index's matches newest first and stops
// once its page is full, instead of reading every match of a text in one session of a hundred.
//  - sessions.list_key: (created_at << 20) + the session's place among those created in the same millisecond
//    (created_at clamped to [0, 2^43), so the key fits 63 bits). Keys of sessions created in different
//    milliseconds are in created_at order; ties are put in list order by the page itself (SessionListSql.h).
//    An ordinary column, unlike the rowid, which VACUUM may renumber. It holds while created_at never changes (no
//    statement of the store updates it) and while a millisecond has fewer than 2^20 sessions (the daemon makes
//    one at a time; every time before 1970 counts as 0).
//  - A trigger gives every new session the next key of its millisecond, whoever writes the row, before the
//    trigram index takes it; the backfill numbers the ties of an existing data directory by id.
//  - session_text is made again with list_key as its rowid, and rebuilt.
constexpr std::string_view kVersion12 = R"sql(
ALTER TABLE sessions ADD COLUMN list_key INTEGER;
UPDATE sessions SET list_key = keyed.list_key
FROM (SELECT rowid AS row_id,
             (min(max(created_at, 0), 8796093022207) << 20) - 1 +
                 row_number() OVER (PARTITION BY min(max(created_at, 0), 8796093022207) ORDER BY id) AS list_key
      FROM sessions) AS keyed
WHERE sessions.rowid = keyed.row_id;
CREATE UNIQUE INDEX sessions_by_list_key ON sessions(list_key);
DROP TRIGGER session_text_after_insert;
DROP TRIGGER session_text_after_delete;
DROP TRIGGER session_text_after_update;
DROP TABLE session_text;
CREATE VIRTUAL TABLE session_text USING fts5(
  title, cwd, content = 'sessions', content_rowid = 'list_key', tokenize = 'trigram case_sensitive 0'
);
CREATE TRIGGER session_text_after_insert AFTER INSERT ON sessions BEGIN
  UPDATE sessions SET list_key = (
    SELECT coalesce(max(list_key) + 1, min(max(new.created_at, 0), 8796093022207) << 20)
    FROM sessions
    WHERE list_key BETWEEN min(max(new.created_at, 0), 8796093022207) << 20
                       AND (min(max(new.created_at, 0), 8796093022207) << 20) + 1048575
  ) WHERE rowid = new.rowid;
  INSERT INTO session_text(rowid, title, cwd) SELECT list_key, title, cwd FROM sessions WHERE rowid = new.rowid;
END;
CREATE TRIGGER session_text_after_delete AFTER DELETE ON sessions BEGIN
  INSERT INTO session_text(session_text, rowid, title, cwd) VALUES ('delete', old.list_key, old.title, old.cwd);
END;
CREATE TRIGGER session_text_after_update AFTER UPDATE OF title, cwd ON sessions BEGIN
  INSERT INTO session_text(session_text, rowid, title, cwd) VALUES ('delete', old.list_key, old.title, old.cwd);
  INSERT INTO session_text(rowid, title, cwd) VALUES (new.list_key, new.title, new.cwd);
END;
INSERT INTO session_text(session_text) VALUES ('rebuild');
)sql";

constexpr Migration kMigrations[] = {
    {1, "sessions, runs, permission rules, interrupted turns, events", kVersion1},
    {2, "event high-water mark; indexes for the session list and runs", kVersion2},
    {3, "seq reservation; lost event ranges", kVersion3},
    {4, "runs that are forks still to make", kVersion4},
    {5, "MCP servers, option values, fork origin, plan and usage of sessions; turns with the agent's references", kVersion5},
    {6, "full-text search index over the event log", kVersion6},
    {7, "sessions' own git worktrees", kVersion7},
    {8, "indexes for session.list's filters and for the sessions that own a worktree", kVersion8},
    {9, "the search index's source view reads a commit's events by seq, not through every session", kVersion9},
    {10, "session.list's indexes lead with archived after agent or directory", kVersion10},
    {11, "a trigram index of sessions' titles and directories for session.list's text filter", kVersion11},
    {12, "sessions keyed in list order; the trigram index keyed by it", kVersion12},
};

int read_int_pragma(SQLite::Database& db, const char* pragma) {
  return db.execAndGet(std::string("PRAGMA ") + pragma).getInt();
}

bool has_user_tables(SQLite::Database& db) {
  return db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
             .getInt() > 0;
}

}  // namespace

std::span<const Migration> schema_migrations() { return kMigrations; }

int latest_schema_version() { return kMigrations[std::size(kMigrations) - 1].version; }

StoreResult<MigrationReport> migrate(SQLite::Database& db, std::span<const Migration> migrations) {
  SWITCHBOARD_ASSERT(!migrations.empty(), "an empty migration list");
  const std::string file = db.getFilename();
  int version = 0;
  try {
    // The first read of the file: a file that is not SQLite fails here (SQLITE_NOTADB → Corrupt).
    const int application_id = read_int_pragma(db, "application_id");
    version = read_int_pragma(db, "user_version");
    if (application_id != 0 && application_id != kApplicationId) {
      return StoreError{StoreError::Code::Conflict, "database " + file +
                                                        " belongs to another program (application_id " +
                                                        std::to_string(application_id) + "); refusing to open it"};
    }
    const int latest = migrations.back().version;
    if (version > latest) {
      return StoreError{StoreError::Code::Conflict,
                        "database " + file + " has schema version " + std::to_string(version) +
                            ", newer than this switchboard understands (" + std::to_string(latest) +
                            "); refusing to open it: run a newer switchboard or move the file away"};
    }
    if (version == 0 && has_user_tables(db)) {
      return StoreError{StoreError::Code::Conflict,
                        "database " + file + " has tables but no switchboard schema version; refusing to open it"};
    }
  } catch (...) {
    return error_from_current_exception("cannot read database " + file);
  }

  MigrationReport report{version, version};
  for (const Migration& migration : migrations) {
    if (migration.version <= report.to_version) continue;
    try {
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      db.exec(std::string(migration.sql));
      db.exec("PRAGMA user_version = " + std::to_string(migration.version));
      transaction.commit();
    } catch (...) {
      auto error = error_from_current_exception("database " + file + ": migration to schema version " +
                                                std::to_string(migration.version) + " failed");
      return error;
    }
    spdlog::info("store: migrated {} to schema version {} ({})", file, migration.version, migration.description);
    report.to_version = migration.version;
  }
  return report;
}

}  // namespace switchboard::store
