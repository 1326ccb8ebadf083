#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "store/StoreError.h"

namespace SQLite {
class Database;
}

namespace switchboard::store {

// The database schema as an ordered list of migrations, kept in code so the binary and its schema cannot
// drift. The version lives in `PRAGMA user_version` (in the file header, so it changes in the same transaction
// as the migration that sets it); `PRAGMA application_id` marks the file as ours.
//
// Rules for adding one: append, never edit a released migration; one transaction each, so a failure leaves
// the previous version intact; `PRAGMA foreign_keys` cannot change inside a transaction, so a migration that
// rebuilds a referenced table must follow SQLite's "12 steps" (https://sqlite.org/lang_altertable.html).
struct Migration {
  int version;
  std::string_view description;
  std::string_view sql;
};

inline constexpr std::int32_t kApplicationId = 0x53574244;  // "SWBD"

std::span<const Migration> schema_migrations();
int latest_schema_version();

struct MigrationReport {
  int from_version = 0;
  int to_version = 0;
};

// Brings `db` to the last version of `migrations`. Refuses (Conflict) a file written by a newer switchboard, a
// file of another program (foreign application_id, or tables but no version) and never half-applies a step.
StoreResult<MigrationReport> migrate(SQLite::Database& db, std::span<const Migration> migrations = schema_migrations());

}  // namespace switchboard::store
