#include "store/SearchIndex.h"

#include <algorithm>
#include <limits>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

namespace switchboard::store {
namespace {

std::int64_t seq_as_sql(std::uint64_t value) {
  return static_cast<std::int64_t>(std::min<std::uint64_t>(value, std::numeric_limits<std::int64_t>::max()));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Tokens around a match in a snippet: enough to read the match in its sentence.
constexpr int kSnippetTokens = 16;

}  // namespace

void index_events(SQLite::Database& db, std::uint64_t first_seq, std::uint64_t last_seq) {
  SQLite::Statement insert(db,
                           "INSERT INTO event_search(rowid, text, session_id, turn_id, type, ts) "
                           "SELECT seq, text, session_id, turn_id, type, ts FROM event_search_source "
                           "WHERE seq BETWEEN ?1 AND ?2 AND text IS NOT NULL AND text != '' "
                           "AND seq NOT IN (SELECT rowid FROM event_search WHERE rowid BETWEEN ?1 AND ?2)");
  insert.bind(1, seq_as_sql(first_seq));
  insert.bind(2, seq_as_sql(last_seq));
  insert.exec();
}

void forget_session_text(SQLite::Database& db, const std::string& session_id) {
  SQLite::Statement remove(db, "DELETE FROM event_search WHERE rowid IN (SELECT seq FROM events WHERE session_id = ?)");
  remove.bind(1, session_id);
  remove.exec();
}

void forget_text_before(SQLite::Database& db, std::uint64_t seq) {
  SQLite::Statement remove(db, "DELETE FROM event_search WHERE rowid < ?");
  remove.bind(1, seq_as_sql(seq));
  remove.exec();
}

std::optional<std::string> fts_match_expression(std::string_view text) {
  std::string expression;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && is_space(text[at])) ++at;
    const std::size_t start = at;
    while (at < text.size() && !is_space(text[at])) ++at;
    std::string_view word = text.substr(start, at - start);
    if (word.empty()) continue;
    bool prefix = false;
    if (word.size() > 1 && word.back() == '*') {
      prefix = true;
      word.remove_suffix(1);
    }
    if (!expression.empty()) expression += ' ';
    // A quoted FTS5 string: its only special character is the quote, which is doubled.
    expression += '"';
    for (const char c : word) {
      if (c == '"') expression += '"';
      expression += c;
    }
    expression += '"';
    if (prefix) expression += '*';
  }
  if (expression.empty()) return std::nullopt;
  return expression;
}

SearchPage search_events(SQLite::Database& db, const SearchQuery& query) {
  SearchPage page;
  const auto match = fts_match_expression(query.text);
  if (!match) return page;
  // The FTS table drives the query (its match, ranked); sessions is probed by primary key per match, which
  // also leaves out the rows of a session deleted since they were indexed.
  SQLite::Statement select(db,
                           "SELECT f.rowid, f.session_id, f.turn_id, f.type, "
                           "snippet(event_search, 0, '«', '»', '…', ?7) "
                           "FROM event_search f JOIN sessions s ON s.id = f.session_id "
                           "WHERE event_search MATCH ?1 AND (?2 IS NULL OR s.agent = ?2) AND (?3 IS NULL OR s.cwd = ?3) "
                           "AND (?4 IS NULL OR f.ts >= ?4) "
                           "ORDER BY f.rank LIMIT ?5 OFFSET ?6");
  select.bind(1, *match);
  if (query.agent) select.bind(2, *query.agent);
  if (query.cwd) select.bind(3, *query.cwd);
  if (query.since) select.bind(4, *query.since);
  select.bind(5, seq_as_sql(query.limit + 1));  // one more: whether another page follows
  select.bind(6, seq_as_sql(query.offset));
  select.bind(7, kSnippetTokens);
  while (select.executeStep()) {
    if (page.hits.size() == query.limit) {
      page.more = true;
      break;
    }
    SearchHit hit;
    hit.seq = static_cast<std::uint64_t>(select.getColumn(0).getInt64());
    hit.session_id = select.getColumn(1).getString();
    hit.turn_id = select.getColumn(2).getString();
    hit.type = select.getColumn(3).getString();
    hit.snippet = select.getColumn(4).getString();
    page.hits.push_back(std::move(hit));
  }
  return page;
}

}  // namespace switchboard::store
