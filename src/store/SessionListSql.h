#pragma once

#include <string>

#include "store/StoreRecords.h"

namespace switchboard::store {

// The statement SessionStore::list_sessions runs for `query`: its filters, its cursor and its order as SQL with
// named parameters (:agent, :cwd, :archived, :text, :created, :id, :limit), bound by the caller. Exposed so the
// store's tests can read SQLite's plan for the very statement a page runs.
std::string session_list_sql(const SessionQuery& query);

}  // namespace switchboard::store
