#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::claude {

// Claude Code's own session history: <config>/projects/<project directory>/<session id>.jsonl, one JSON object a
// line (docs/agents/claude-code.md describes the format). Everything here is blocking file reading meant for a
// helper thread; none of it throws, and a bad line or file is counted and skipped.

// Where the CLI keeps its configuration: $CLAUDE_CONFIG_DIR, else $HOME/.claude; none without either.
std::optional<std::filesystem::path> claude_config_dir(const std::optional<std::string>& claude_config_dir_env,
                                                       const std::optional<std::string>& home_env);

// The directory name the CLI files a working directory's sessions under: every character but an ASCII letter or
// digit becomes '-', one per UTF-16 code unit as the CLI's JavaScript counts them ("/tmp/x_y" → "-tmp-x-y").
// Past 200 characters the CLI cuts the name and appends a hash of its own; this returns the cut name without it.
std::string project_directory_name(std::string_view cwd);

// The project directory for `cwd`, if the CLI has one. A cut name is resolved by looking for directories named
// "<cut name>-<hash>" whose sessions record `cwd` as their working directory.
std::optional<std::filesystem::path> find_project_directory(const std::filesystem::path& config_dir, std::string_view cwd);

struct HistorySession {
  std::string provider_session_id;  // the file's name: what `--resume` takes
  std::filesystem::path path;
  std::string title;  // the session's custom title, else its summary, else its first prompt (shortened)
  std::string cwd;
  std::optional<std::string> started_at;  // ISO 8601 timestamps of the first and last timestamped lines
  std::optional<std::string> updated_at;
  std::int64_t modified_at_ms = 0;  // the file's modification time, Unix milliseconds
  std::size_t prompts = 0;
};

struct HistoryListing {
  std::vector<HistorySession> sessions;  // most recently modified first
  std::size_t skipped_files = 0;         // unreadable, or holding no conversation
  std::size_t malformed_lines = 0;
};

// The CLI's sessions for `cwd`. Sub-agent transcripts (agent-*.jsonl) are not sessions and are left out.
HistoryListing list_history(const std::filesystem::path& config_dir, std::string_view cwd);

// What a history sink hears besides the live events (the agent-agnostic interface of AgentAdapter.h): the user's
// prompts, each opening a turn; the turn's activity follows through the AdapterListener callbacks and
// on_turn_end() closes it (at the next prompt, or at the end).
using HistorySink = adapters::HistorySink;

struct HistoryFileStats {
  bool opened = false;
  std::size_t lines = 0;
  std::size_t malformed = 0;
  std::size_t ignored = 0;  // bookkeeping lines (queue operations, attachments, titles, modes, snapshots, …)
};

// Replays one session file as normalized events: on_provider_session once, then per turn on_user_prompt, the
// assistant's messages and tool calls, tool results, and on_turn_end (stop reason from the last assistant
// message, cancelled if the user interrupted it, error for an API error; usage summed; no cost, which the files
// do not record).
HistoryFileStats read_history(const std::filesystem::path& file, HistorySink& sink);

}  // namespace switchboard::adapters::claude
