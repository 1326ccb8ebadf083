#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <SQLiteCpp/Database.h>
#include <boost/asio/io_context.hpp>

#include "store/Database.h"
#include "store/Migrations.h"
#include "store/Store.h"
#include "support/StoreTestSupport.h"

namespace store_migration_tests {

using namespace switchboard::store;
using switchboard::testing::StoreTempDir;
namespace fs = std::filesystem;

// The version-1 schema exactly as release 1 created it, written by hand (not by our migration code), so the
// test notices if migration 1 is ever edited in place instead of a new migration being appended.
constexpr const char* kVersion1Schema = R"sql(
PRAGMA application_id = 1398227524;
CREATE TABLE sessions (id TEXT PRIMARY KEY NOT NULL, agent TEXT NOT NULL, cwd TEXT NOT NULL,
  title TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', mode TEXT NOT NULL DEFAULT '',
  archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)), state TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_seq INTEGER NOT NULL DEFAULT 0);
CREATE TABLE runs (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  provider_session_id TEXT NOT NULL, started_at INTEGER NOT NULL, ended_at INTEGER);
CREATE TABLE permission_rules (id TEXT PRIMARY KEY NOT NULL,
  scope TEXT NOT NULL CHECK (scope IN ('project', 'always')), cwd TEXT CHECK (scope = 'always' OR cwd IS NOT NULL),
  tool TEXT NOT NULL, pattern TEXT, decision TEXT NOT NULL CHECK (decision IN ('allow', 'deny')),
  created_at INTEGER NOT NULL);
CREATE TABLE interrupted_turns (session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn_id TEXT NOT NULL, prompt_json TEXT NOT NULL, interrupted_at INTEGER NOT NULL);
CREATE TABLE events (seq INTEGER PRIMARY KEY, session_id TEXT, type TEXT NOT NULL, json TEXT NOT NULL,
  turn_id TEXT, compacted INTEGER NOT NULL DEFAULT 0);
CREATE INDEX events_by_session ON events(session_id, seq);
PRAGMA user_version = 1;
)sql";

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

int pragma(const fs::path& path, const char* name) {
  SQLite::Database db(path.string(), SQLite::OPEN_READONLY);
  return db.execAndGet(std::string("PRAGMA ") + name).getInt();
}

bool has_index(SQLite::Database& db, const char* name) {
  SQLite::Statement query(db, "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?");
  query.bind(1, name);
  return query.executeStep();
}

TEST_CASE("store: a new file is created at the latest schema version, WAL, FULL, foreign keys on", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  auto info = worker.open(dir.db());
  REQUIRE(info);
  CHECK(info->schema_version == latest_schema_version());
  CHECK(info->migrated_from == 0);
  CHECK(info->path == dir.db());

  auto settings = worker.run_blocking("read pragmas", [](Database& db) -> StoreResult<std::string> {
    auto& sql = db.sql();
    return sql.execAndGet("PRAGMA journal_mode").getString() + " " + sql.execAndGet("PRAGMA synchronous").getString() +
           " " + sql.execAndGet("PRAGMA foreign_keys").getString() + " " +
           sql.execAndGet("PRAGMA busy_timeout").getString();
  });
  REQUIRE(settings);
  CHECK(*settings == "wal 2 1 5000");  // synchronous 2 = FULL
  worker.shutdown();

  CHECK(pragma(dir.db(), "user_version") == latest_schema_version());
  CHECK(pragma(dir.db(), "application_id") == kApplicationId);
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  for (const char* table : {"sessions", "runs", "permission_rules", "interrupted_turns", "events", "store_meta"}) {
    INFO(table);
    CHECK(db.tableExists(table));
  }
  CHECK(has_index(db, "events_by_session"));
  CHECK(has_index(db, "sessions_by_created"));
}

TEST_CASE("store: Durability::ProcessCrash selects synchronous=NORMAL", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  DatabaseOptions options;
  options.durability = Durability::ProcessCrash;
  options.busy_timeout = std::chrono::milliseconds(250);
  REQUIRE(worker.open(dir.db(), options));
  auto settings = worker.run_blocking("read pragmas", [](Database& db) -> StoreResult<std::string> {
    return db.sql().execAndGet("PRAGMA synchronous").getString() + " " +
           db.sql().execAndGet("PRAGMA busy_timeout").getString();
  });
  REQUIRE(settings);
  CHECK(*settings == "1 250");
}

TEST_CASE("store: an empty (zero-byte) file is migrated from version 0", "[store]") {
  StoreTempDir dir;
  write_file(dir.db(), "");
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE(store);
  CHECK((*store)->info().migrated_from == 0);
  CHECK((*store)->info().schema_version == latest_schema_version());
  CHECK((*store)->events().last_seq() == 0);
}

TEST_CASE("store: a hand-made version-1 file is migrated, keeping its rows and its last seq", "[store]") {
  StoreTempDir dir;
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(kVersion1Schema);
    db.exec("INSERT INTO sessions(id, agent, cwd, created_at, updated_at) VALUES ('s-1', 'claude', '/w', 1, 2)");
    db.exec("INSERT INTO runs(session_id, provider_session_id, started_at) VALUES ('s-1', 'p-1', 3)");
    db.exec(R"(INSERT INTO events(seq, session_id, type, json) VALUES (1, 's-1', 'message.delta', '{"seq":1}'),
               (2, NULL, 'daemon.shutdown', '{"seq":2}'), (7, 's-1', 'message.delta', '{"seq":7}'))");
  }
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE(store);
  CHECK((*store)->info().migrated_from == 1);
  CHECK((*store)->info().schema_version == latest_schema_version());
  CHECK((*store)->events().last_seq() == 7);  // seeded into store_meta by migration 2

  auto session = switchboard::testing::await_store<SessionRecord>(
      io, [&](auto done) { (*store)->sessions().get_session("s-1", done); });
  REQUIRE(session);
  CHECK(session->agent == "claude");
  // Migration 5: sessions from before have no MCP servers, options, fork origin, plan or usage.
  CHECK(session->mcp_servers.empty());
  CHECK(session->option_values.empty());
  CHECK(session->forked_from.empty());
  CHECK(session->plan.empty());
  CHECK(session->context_usage.empty());
  auto runs = switchboard::testing::await_store<std::vector<RunRecord>>(
      io, [&](auto done) { (*store)->sessions().list_runs("s-1", done); });
  REQUIRE(runs);
  REQUIRE(runs->size() == 1);
  CHECK((*runs)[0].provider_session_id == "p-1");
  CHECK_FALSE((*runs)[0].fork);  // migration 4: runs from before are plain
  CHECK_FALSE((*runs)[0].fork_through);
  auto turns = switchboard::testing::await_store<std::vector<TurnRow>>(
      io, [&](auto done) { (*store)->sessions().list_turns("s-1", done); });
  REQUIRE(turns);
  CHECK(turns->empty());
  (*store)->close();

  SQLite::Database db(dir.db().string(), SQLite::OPEN_READONLY);
  CHECK(db.execAndGet("SELECT value FROM store_meta WHERE key = 'events.high_water_seq'").getInt64() == 7);
  CHECK(has_index(db, "sessions_by_created"));
  CHECK(has_index(db, "runs_by_session"));
  CHECK(db.execAndGet("SELECT count(*) FROM events").getInt() == 3);
}

TEST_CASE("store: a migration that fails leaves the file at the previous version", "[store]") {
  StoreTempDir dir;
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(migrate(db));
  }
  const std::vector<Migration> broken_list = [] {
    std::vector<Migration> list(schema_migrations().begin(), schema_migrations().end());
    list.push_back({latest_schema_version() + 1, "half of it works",
                    "CREATE TABLE extra (x INTEGER); INSERT INTO no_such_table VALUES (1);"});
    return list;
  }();
  SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE);
  auto report = migrate(db, broken_list);
  REQUIRE_FALSE(report);
  CHECK(report.error().message.find("migration to schema version " + std::to_string(latest_schema_version() + 1)) !=
        std::string::npos);
  CHECK(db.execAndGet("PRAGMA user_version").getInt() == latest_schema_version());
  CHECK_FALSE(db.tableExists("extra"));  // the first statement of the failed step was rolled back too
}

TEST_CASE("store: a file from a newer switchboard is refused, not opened", "[store]") {
  StoreTempDir dir;
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(migrate(db));
    db.exec("PRAGMA user_version = " + std::to_string(latest_schema_version() + 5));
    db.exec("CREATE TABLE from_the_future (x)");
  }
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE_FALSE(store);
  CHECK(store.error().code == StoreError::Code::Conflict);
  CHECK_THAT(store.error().message,
             Catch::Contains("newer than this switchboard") && Catch::Contains(dir.db().string()));
  // Untouched: still the newer version, nothing migrated or dropped.
  CHECK(pragma(dir.db(), "user_version") == latest_schema_version() + 5);
}

TEST_CASE("store: another program's database is refused", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  SECTION("foreign application_id") {
    {
      SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec("PRAGMA application_id = 42; CREATE TABLE t (x)");
    }
    auto store = Store::open(io, dir.db());
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Conflict);
    CHECK_THAT(store.error().message, Catch::Contains("another program"));
  }
  SECTION("tables but no version") {
    {
      SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
      db.exec("CREATE TABLE sessions (x)");
    }
    auto store = Store::open(io, dir.db());
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Conflict);
    CHECK_THAT(store.error().message, Catch::Contains("no switchboard schema version"));
  }
}

TEST_CASE("store: a file that is not SQLite is refused with a clear error", "[store]") {
  StoreTempDir dir;
  std::string garbage = "this is not a database, just text that happens to be here\n";
  while (garbage.size() < 8192) garbage += garbage;
  write_file(dir.db(), garbage);
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());
  REQUIRE_FALSE(store);
  CHECK(store.error().code == StoreError::Code::Corrupt);
  CHECK_THAT(store.error().message, Catch::Contains(dir.db().string()) && Catch::Contains("not a database"));
  CHECK(fs::file_size(dir.db()) == garbage.size());  // not truncated or rewritten
}

TEST_CASE("store: a damaged database is reported as Corrupt, not a crash", "[store]") {
  StoreTempDir dir;
  {
    SQLite::Database db(dir.db().string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    REQUIRE(migrate(db));
    db.exec("PRAGMA journal_mode = DELETE");
    db.exec("BEGIN");
    SQLite::Statement insert(db, "INSERT INTO events(seq, type, json) VALUES (?, 'daemon.shutdown', ?)");
    for (int seq = 1; seq <= 2000; ++seq) {
      insert.bind(1, seq);
      insert.bind(2, std::string(200, 'x'));
      insert.exec();
      insert.reset();
    }
    db.exec("COMMIT");
  }
  {
    // Scribble over the middle of the file, past the schema page: the header stays valid, the b-trees do not.
    std::fstream file(dir.db(), std::ios::binary | std::ios::in | std::ios::out);
    const auto size = static_cast<std::streamoff>(fs::file_size(dir.db()));
    file.seekp(size / 3);
    const std::string noise(static_cast<std::size_t>(size / 3), '\xA5');
    file.write(noise.data(), static_cast<std::streamsize>(noise.size()));
  }
  boost::asio::io_context io{1};
  auto store = Store::open(io, dir.db());  // the event log's load reads every page of events
  REQUIRE_FALSE(store);
  CHECK(store.error().code == StoreError::Code::Corrupt);
  CHECK_THAT(store.error().message, Catch::Contains("malformed"));
}

TEST_CASE("store failure gives a clear error", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  SECTION("the directory does not exist") {
    auto store = Store::open(io, dir.path() / "missing" / "switchboard.db");
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Io);
    CHECK_THAT(store.error().message,
               Catch::Contains("cannot open database") && Catch::Contains("missing does not exist"));
  }
  SECTION("the parent is a regular file") {
    write_file(dir.path() / "file", "x");
    auto store = Store::open(io, dir.path() / "file" / "switchboard.db");
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Io);
    CHECK_THAT(store.error().message, Catch::Contains("is not a directory"));
  }
  SECTION("the path is a directory") {
    fs::create_directory(dir.db());
    auto store = Store::open(io, dir.db());
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Io);
    CHECK_THAT(store.error().message, Catch::Contains("it is a directory"));
  }
  SECTION("the directory is read-only") {
    if (::geteuid() == 0) {
      WARN("running as root, which ignores directory permissions: see the other sections and the commit tests");
      return;
    }
    fs::create_directory(dir.path() / "ro");
    fs::permissions(dir.path() / "ro", fs::perms::owner_read | fs::perms::owner_exec);
    auto store = Store::open(io, dir.path() / "ro" / "switchboard.db");
    REQUIRE_FALSE(store);
    CHECK(store.error().code == StoreError::Code::Io);
    CHECK_THAT(store.error().message, Catch::Contains("is not writable"));
  }
  SECTION("jobs after a failed open get an error, posted") {
    StoreWorker worker(io);
    REQUIRE_FALSE(worker.open(dir.path() / "missing" / "x.db"));
    bool called_inline = true;
    std::optional<StoreResult<int>> result;
    worker.submit(
        "noop", [](Database&) -> StoreResult<int> { return 1; },
        [&](StoreResult<int> r) { result.emplace(std::move(r)); });
    called_inline = result.has_value();
    io.restart();
    io.run();
    CHECK_FALSE(called_inline);
    REQUIRE(result);
    REQUIRE_FALSE(*result);
    CHECK_THAT(result->error().message, Catch::Contains("noop: the store is not open"));
  }
}

TEST_CASE("store: exceptions thrown by jobs become StoreError values", "[store]") {
  StoreTempDir dir;
  boost::asio::io_context io{1};
  StoreWorker worker(io);
  REQUIRE(worker.open(dir.db()));

  auto syntax = worker.run_blocking("bad sql", [](Database& db) -> StoreResult<int> {
    db.sql().exec("SELEC nothing");
    return 0;
  });
  REQUIRE_FALSE(syntax);
  CHECK(syntax.error().code == StoreError::Code::Io);
  CHECK_THAT(syntax.error().message, Catch::StartsWith("bad sql: ") && Catch::Contains("syntax error"));

  auto constraint = worker.run_blocking("duplicate", [](Database& db) -> StoreResult<int> {
    db.sql().exec(
        "INSERT INTO permission_rules(id, scope, tool, decision, created_at) VALUES ('r', 'always', 't', 'allow', 1)");
    db.sql().exec(
        "INSERT INTO permission_rules(id, scope, tool, decision, created_at) VALUES ('r', 'always', 't', 'allow', 1)");
    return 0;
  });
  REQUIRE_FALSE(constraint);
  CHECK(constraint.error().code == StoreError::Code::Conflict);

  auto other = worker.run_blocking("plain", [](Database&) -> StoreResult<int> { throw std::runtime_error("boom"); });
  REQUIRE_FALSE(other);
  CHECK(other.error().message == "plain: boom");

  // A caller that passes no callback is fine too; the job still runs, in order.
  worker.submit(
      "fire and forget",
      [](Database& db) -> StoreResult<int> {
        db.sql().exec(
            "INSERT INTO permission_rules(id, scope, tool, decision, created_at) VALUES ('q', 'always', 't', 'deny', "
            "2)");
        return 0;
      },
      nullptr);
  auto count = worker.run_blocking("count", [](Database& db) -> StoreResult<int> {
    return db.sql().execAndGet("SELECT count(*) FROM permission_rules").getInt();
  });
  REQUIRE(count);
  CHECK(*count == 2);
  worker.shutdown();
  io.restart();
  io.run();  // the posted no-op result of the fire-and-forget job
}

}  // namespace store_migration_tests
