#pragma once

#include <chrono>
#include <filesystem>

namespace switchboard::store {

// The settings and facts of the database file, apart from Database itself so that code which opens the store
// (the daemon, through Store.h) does not see SQLiteCpp.

// How far an acknowledged commit must survive.
//  - PowerLoss (the default): WAL + synchronous=FULL, one fsync of the WAL per commit. Survives kill -9, an OS
//    crash and power loss.
//  - ProcessCrash: WAL + synchronous=NORMAL, no fsync at commit (only at checkpoints). A commit is in the
//    kernel's page cache when it returns, so it survives kill -9 of the daemon, but an OS crash or power loss
//    can roll back the last transactions (never corrupt the file).
// The requirement is "kill -9 loses no acknowledged write", which both meet. We default to FULL
// anyway: the event log commits one transaction per batch with at most one batch in flight, so the fsync
// is paid per batch, not per event (bench_event_log shows the append rate stays well above target), and the
// session/rule writes are rare. ProcessCrash exists for a disk where fsync is very slow.
enum class Durability { PowerLoss, ProcessCrash };

struct DatabaseOptions {
  Durability durability = Durability::PowerLoss;
  // How long a statement waits for a lock held by another connection (e.g. someone inspecting the file with
  // the sqlite3 shell) before failing with Busy. Only the worker thread ever waits.
  std::chrono::milliseconds busy_timeout{5000};
};

struct DatabaseInfo {
  std::filesystem::path path;
  int schema_version = 0;
  int migrated_from = 0;  // == schema_version when nothing was migrated; 0 for a new file
};

}  // namespace switchboard::store
