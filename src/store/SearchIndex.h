#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace SQLite {
class Database;
}

namespace switchboard::store {

// The full-text index over the event log (docs/search.md): one FTS5 row per stored prompt (turn.started),
// answer (message.completed), tool input (tool.started) and tool output (tool.completed) of a stored session,
// keyed by the event's seq. What text an event contributes is defined once, by the view the migration creates
// (event_search_source), for the backfill of an older data directory and for every commit alike.
// Everything here runs on the store thread, inside the caller's transaction where it has one; it throws
// SQLite::Exception like the rest of the store's SQL.

// Indexes the searchable events stored with seqs in [first_seq, last_seq] that are not indexed yet (a batch
// repeated at shutdown is not indexed twice). Called by the event log's commit, in its transaction.
void index_events(SQLite::Database& db, std::uint64_t first_seq, std::uint64_t last_seq);
// Drops the index rows of one session's events (its events stay in the log until retention takes them).
void forget_session_text(SQLite::Database& db, const std::string& session_id);
// Drops the index rows of events below `seq` (retention deleted those events).
void forget_text_before(SQLite::Database& db, std::uint64_t seq);

struct SearchQuery {
  // The user's words; each must occur in the event (see fts_match_expression).
  std::string text;
  std::optional<std::string> agent;
  std::optional<std::string> cwd;
  std::optional<std::int64_t> since;  // event time, Unix epoch milliseconds
  std::size_t limit = 20;
  std::size_t offset = 0;  // hits of earlier pages
};

struct SearchHit {
  std::string session_id;
  std::string turn_id;
  std::uint64_t seq = 0;
  std::string type;
  std::string snippet;
};

struct SearchPage {
  std::vector<SearchHit> hits;
  bool more = false;  // hits follow this page
};

// The user's text as an FTS5 expression that cannot be a syntax error: each whitespace-separated word becomes
// a quoted string (all must match), a word ending in '*' a prefix query. nullopt when no word is left.
std::optional<std::string> fts_match_expression(std::string_view text);

// Hits best first (bm25), `query.limit` of them from `query.offset`, only of sessions that exist. The snippet
// marks matches with « and » and cut text with …
SearchPage search_events(SQLite::Database& db, const SearchQuery& query);

}  // namespace switchboard::store
