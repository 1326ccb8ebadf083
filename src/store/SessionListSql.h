#pragma once

#include <string>

#include "store/StoreRecords.h"

namespace switchboard::store {

// How many rows a text page (three or more characters) reads in list order from its cursor, the filters other than
// text applied, before session_text's trigram index takes over: enough to fill a page of 50 for a text in one
// session of twenty or more, few enough to cost about a millisecond.
inline constexpr int kSessionListTextWalk = 1000;

// The statements SessionStore::list_sessions runs for `query`, with named parameters bound by the caller:
// :agent, :cwd, :archived, :text (ASCII-lowered), :created and :id (the cursor), :limit, and :walk and :match
// where said. Exposed so the store's tests can read SQLite's plan for the very statements a page runs.
//
// A text of fewer than three characters has no trigram: its page is the plain walk, every filter applied to the
// rows in list order. A longer text's page runs in steps:
//  1. session_list_sql: the walk capped at :walk rows (the filters other than text choose them), text applied to
//     those; a common text fills its page here.
//  2. session_list_walk_end_sql: the :walk-th row of that walk, if it has one (the walk stopped there, not at the
//     end of the list); nothing more to read otherwise.
//  3. session_list_text_match_sql: the sessions after that row whose title or directory holds every trigram of
//     :match (the text as one FTS5 phrase), the text's own rule applied to them, in list order.
bool session_list_uses_text_index(const SessionQuery& query);
std::string session_list_sql(const SessionQuery& query);
std::string session_list_walk_end_sql(const SessionQuery& query);
std::string session_list_text_match_sql(const SessionQuery& query);

// The text as an FTS5 phrase: in double quotes, its own double quotes doubled, so no character of it is syntax.
std::string fts_phrase(const std::string& text);

}  // namespace switchboard::store
