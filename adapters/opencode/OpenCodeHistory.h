#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::opencode {

// OpenCode's own history: every session of every directory in one SQLite database, opencode.db, with tables
// `session` (one row a session: directory, title, times), `message` (a row per user or assistant message, its
// info as JSON) and `part` (a row per piece of a message: text, reasoning, tool call, step boundaries, as
// JSON). docs/agents/opencode.md describes what is read. Everything here is blocking reading meant for a helper
// thread; the database is opened read-only (OpenCode may be writing it: WAL lets both), and nothing throws.

// Where OpenCode keeps it: $XDG_DATA_HOME/opencode/opencode.db, else $HOME/.local/share/opencode/opencode.db;
// none without either.
std::optional<std::filesystem::path> opencode_database(const std::optional<std::string>& xdg_data_home,
                                                       const std::optional<std::string>& home);

// The top-level sessions recorded for `cwd` (sub-agent sessions belong to their parent's tool call), newest
// first: id, title, directory, created and updated times, the number of prompts. No database: no sessions; a
// database that cannot be read counts as one skipped file.
HistoryOutcome<HistoryList> list_history(const std::filesystem::path& database, const std::string& cwd);

// Replays one session through the translator the live sessions use, as if its recorded messages were streamed:
// on_provider_session, then per user message on_user_prompt and the answer's parts (completed text and
// reasoning, tool calls with their outcome, the usage of each step), closed by on_turn_end (cancelled for an
// aborted answer, error for a failed one). Rows that are not JSON objects are skipped and counted. A session
// that is not there, or not of `cwd`, is UnknownHistorySession.
HistoryOutcome<HistoryReadStats> read_history(const std::filesystem::path& database, const std::string& cwd,
                                              const std::string& opencode_session_id, HistorySink& sink);

}  // namespace switchboard::adapters::opencode
