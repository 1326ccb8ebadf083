#pragma once

#include <string>

#include "store/StoreRecords.h"

namespace switchboard::store {

// How many rows a text page (three or more characters) reads in list order from its cursor, the filters other than
// text applied, before session_text's trigram index takes over: a common text fills its page from them, the
// agent's or directory's index choosing the rows, at a fraction of a millisecond.
inline constexpr int kSessionListTextWalk = 250;

// A session's list_key (schema version 12) is (created_at << kListKeyTieBits) + its place among the sessions
// created in the same millisecond: the keys' order is list order but for those ties. Stated here for the page's
// SQL; the migration's trigger, which assigns the keys, spells the same numbers out.
inline constexpr int kListKeyTieBits = 20;

// The statements SessionStore::list_sessions runs for `query`, with named parameters bound by the caller:
// :agent, :cwd, :archived, :text (ASCII-lowered), :created and :id (the cursor), and :limit, :walk, :match and
// :end_key where said. Exposed so the store's tests can read SQLite's plan for the very statements a page runs.
//
// A text of fewer than three characters has no trigram: its page is the plain walk, every filter applied to the
// rows in list order. A longer text's page runs in steps:
//  1. session_list_sql: the walk capped at :walk rows (the filters other than text choose them), text applied to
//     those, at most :limit kept; a common text fills its page here.
//  2. session_list_walk_end_sql: the :walk-th row of that walk (its created_at, id and list_key), if it has one
//     (the walk stopped there, not at the end of the list); nothing more to read otherwise.
//  3. session_list_text_match_sql: the sessions after that row whose title or directory holds every trigram of
//     :match (the text as one FTS5 phrase), newest list_key first from the end row's millisecond (:end_key), every
//     filter and the text's own rule applied, each with its millisecond (list_key >> kListKeyTieBits). The page
//     reads them until it is full and the millisecond of its last row is over, then puts those in list order. The
//     bound is the end row's whole millisecond: sessions of it after the end row in list order may hold higher
//     keys (keys follow the order a millisecond's sessions were written in, list order their ids).
bool session_list_uses_text_index(const SessionQuery& query);
std::string session_list_sql(const SessionQuery& query);
std::string session_list_walk_end_sql(const SessionQuery& query);
std::string session_list_text_match_sql(const SessionQuery& query);

// The text as an FTS5 phrase: in double quotes, its own double quotes doubled, so no character of it is syntax.
std::string fts_phrase(const std::string& text);

}  // namespace switchboard::store
