#pragma once

#include <filesystem>
#include <memory>

#include <SQLiteCpp/Database.h>

#include "store/DatabaseOptions.h"
#include "store/StoreError.h"

namespace switchboard::store {

// The one SQLite connection of the daemon: opened, configured and migrated by open(), then used by the store's
// jobs on the StoreWorker thread only (the connection is opened NOMUTEX: it must never be shared).
class Database {
 public:
  // Opens or creates the file, sets WAL, synchronous, foreign_keys and busy_timeout, and applies migrations.
  // Every failure is a value with a message that names the file: cannot create (Io), not a database or
  // damaged (Corrupt), newer schema or another program's file (Conflict).
  static StoreResult<std::unique_ptr<Database>> open(const std::filesystem::path& path, const DatabaseOptions& options);

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  SQLite::Database& sql() { return m_sql; }
  const DatabaseInfo& info() const { return m_info; }

 private:
  Database(const std::filesystem::path& path, const DatabaseOptions& options);

  SQLite::Database m_sql;
  DatabaseInfo m_info;
};

}  // namespace switchboard::store
