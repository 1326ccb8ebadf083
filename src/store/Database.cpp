#include "store/Database.h"

#include <unistd.h>

#include <mutex>
#include <string>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include "store/Migrations.h"

namespace switchboard::store {
namespace fs = std::filesystem;
namespace {

// SQLite says only "unable to open database file"; say why, as far as we can tell from outside.
std::string open_failure_hint(const fs::path& path) {
  std::error_code error;
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  if (fs::is_directory(path, error)) return " (it is a directory)";
  if (!fs::exists(parent, error)) return " (directory " + parent.string() + " does not exist)";
  if (!fs::is_directory(parent, error)) return " (" + parent.string() + " is not a directory)";
  if (::access(parent.c_str(), W_OK) != 0) return " (directory " + parent.string() + " is not writable)";
  if (fs::exists(path, error) && ::access(path.c_str(), R_OK | W_OK) != 0)
    return " (file is not readable and writable)";
  return {};
}

}  // namespace

Database::Database(const fs::path& path, const DatabaseOptions& options)
    : m_sql(path.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX,
            static_cast<int>(options.busy_timeout.count())) {
  m_info.path = path;
}

Database::~Database() {
  // Lets SQLite refresh the statistics its planner uses, cheaply (it only analyzes what changed a lot). The
  // connection's close then checkpoints the WAL into the main file and removes it.
  try {
    m_sql.exec("PRAGMA optimize");
  } catch (const SQLite::Exception& e) {
    spdlog::debug("store: PRAGMA optimize at close: {}", e.what());
  }
}

StoreResult<std::unique_ptr<Database>> Database::open(const fs::path& path, const DatabaseOptions& options) {
  // SQLite's allocation statistics take a global mutex on every malloc and free (~5% of an append, measured);
  // nothing here reads them. Must precede SQLite's initialization, hence once, before the first open.
  static std::once_flag configured;
  std::call_once(configured, [] { sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
  std::unique_ptr<Database> db;
  try {
    db.reset(new Database(path, options));
  } catch (...) {
    auto error = error_from_current_exception("cannot open database " + path.string());
    error.message += open_failure_hint(path);
    return error;
  }
  SQLite::Database& sql = db->m_sql;
  try {
    // Specific error codes (SQLITE_CONSTRAINT_FOREIGNKEY, SQLITE_IOERR_…) rather than the primary ones.
    sqlite3_extended_result_codes(sql.getHandle(), 1);
    // The first statement reads the header: a file that is not SQLite fails here with SQLITE_NOTADB.
    const std::string mode = sql.execAndGet("PRAGMA journal_mode = WAL").getString();
    if (mode != "wal") {
      // Still durable (a rollback journal with synchronous=FULL), only slower and blocking readers.
      spdlog::warn("store: {} cannot use WAL (journal_mode is {}), continuing", path.string(), mode);
    }
    sql.exec(options.durability == Durability::PowerLoss ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
    sql.exec("PRAGMA foreign_keys = ON");
  } catch (...) {
    auto error = error_from_current_exception("cannot use database " + path.string());
    if (error.code == StoreError::Code::Corrupt) error.message += " (not a switchboard database, or damaged)";
    return error;
  }
  auto report = migrate(sql);
  if (!report) return report.error();
  db->m_info.schema_version = report->to_version;
  db->m_info.migrated_from = report->from_version;
  return db;
}

}  // namespace switchboard::store
