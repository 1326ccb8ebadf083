#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/HistoryFile.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::pi {

// Pi's own history: one JSON-lines file per session, <agent dir>/sessions/--<cwd, '/' and ':' as '-'>--/
// <timestamp>_<session id>.jsonl. Line 1 is the header ({"type":"session","id","timestamp","cwd"}); every other
// line is an entry with an id and a parentId (a tree: forks and rewinds branch inside one file). Blocking file
// reading for the engine's helper thread; nothing here throws.

// The directory Pi keeps `cwd`'s sessions in by default.
std::filesystem::path sessions_dir(const std::filesystem::path& root, std::string_view cwd);

// What decides where Pi keeps a directory's sessions, from the daemon's environment.
struct SessionPlaces {
  std::optional<std::filesystem::path> agent_dir;   // $PI_CODING_AGENT_DIR, else $HOME/.pi/agent
  std::optional<std::string> session_dir_variable;  // $PI_CODING_AGENT_SESSION_DIR
  std::optional<std::string> home;                  // $HOME, for "~"
};
SessionPlaces session_places(const std::optional<std::string>& agent_dir_variable,
                             const std::optional<std::string>& session_dir_variable, const std::optional<std::string>& home);

// The folder holding `cwd`'s sessions, chosen as Pi chooses it: $PI_CODING_AGENT_SESSION_DIR, else the
// `sessionDir` setting (the project's `<cwd>/.pi/settings.json` over the agent directory's `settings.json`; a
// relative path is relative to `cwd`, "~" is the home) — both one flat folder for every directory — else the
// agent directory's `sessions/--<cwd>--/`. None when nothing names a place.
std::optional<std::filesystem::path> session_folder(const SessionPlaces& places, std::string_view cwd);

// The sessions in `folder` recorded for `cwd` (their header says so), newest first: id, title (the first
// prompt), cwd, created (header) and modified times, the number of prompts, the file. Skipped files: no header,
// or no prompt. Skipped lines: lines of the listed files that are not JSON objects.
HistoryList list_history(const std::filesystem::path& folder, std::string_view cwd);

// The file of session `id` for `cwd` in `folder`, if there is one (its header names the id).
std::optional<std::filesystem::path> find_session_file(const std::filesystem::path& folder, std::string_view cwd, std::string_view id);

// Replays the session's current branch (from the last entry back to the root through parentId, then forward):
// on_provider_session, then per prompt on_user_prompt (the entry id as prompt id), the assistant's thinking and
// text (on_message), its tool calls (on_tool_started) and their results (on_tool_completed), and on_turn_end
// (end_turn with the last text, error for a failed model request, cancelled for an aborted one) before the next
// prompt and at the end. Messages a later context_edit removed (failed attempts before a retry) are left out.
// Ignored lines: the header, model and thinking-level changes, labels, session info, the system prompt.
HistoryFileStats read_history(const std::filesystem::path& file, HistorySink& sink);

}  // namespace switchboard::adapters::pi
