#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/HistoryFile.h"
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

// The CLI's sessions for `cwd`, newest first. Per session: the file's name as id (what `--resume` takes), the
// session's custom title, else its summary, else its first prompt (shortened); the recorded cwd (else `cwd`);
// created (the first timestamped line) and modified (the file) times; the number of prompts; the file. Sub-agent
// transcripts (agent-*.jsonl) are not sessions and are left out; files holding no conversation are skipped.
HistoryList list_history(const std::filesystem::path& config_dir, std::string_view cwd);

// Replays one session file as normalized events: on_provider_session once, then per turn on_user_prompt, the
// assistant's messages and tool calls, tool results, the task tools' plan (on_plan, whole, when a result changes
// it, as live), and on_turn_end (stop reason from the last assistant message, cancelled if the user interrupted it,
// error for an API error; usage summed; no cost, which the files do not record). Ignored lines: bookkeeping (queue operations, attachments, titles, modes, snapshots, …).
HistoryFileStats read_history(const std::filesystem::path& file, HistorySink& sink);

}  // namespace switchboard::adapters::claude
