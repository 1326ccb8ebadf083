#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/HistoryFile.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::codex {

// Codex's own session history: one rollout file per thread,
// <CODEX_HOME>/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl, one JSON object a line
// ({timestamp, type, payload}; docs/agents/codex.md describes the format and how it maps). Everything here is
// blocking file reading meant for a helper thread; none of it throws, and a bad line or file is counted and
// skipped.

// The CODEX_HOME the CLIs this daemon starts write to: the private home when the daemon configures a provider
// (the adapter sets CODEX_HOME to it), else the daemon's own $CODEX_HOME, which the child inherits, else
// $HOME/.codex; none without any of them.
std::optional<std::filesystem::path> history_codex_home(const std::optional<std::filesystem::path>& private_home,
                                                        const std::optional<std::string>& codex_home_env,
                                                        const std::optional<std::string>& home_env);

// Whether `id` has the shape of a Codex thread id: a UUID, 8-4-4-4-12 hexadecimal digits. Ids from clients are
// checked with this before they are compared with anything on disk.
bool is_thread_id(std::string_view id);

// The threads whose rollouts record `cwd` as their working directory (compared lexically, trailing slashes
// ignored), newest first (file modification time). Per thread: the id, the first prompt as title (first line,
// at most 80 bytes), the recorded cwd, created (session_meta's timestamp) and modified times, the number of
// prompts, the file. Rollouts of other directories are only read up to their session_meta line, and the listed
// ones are parsed only where a line can be a prompt (after the first); a fork counts its parent's prompts
// before the fork, as its history does. Skipped files: unreadable, without a
// session_meta, named for another thread than the one inside, or holding no conversation. Skipped lines: the
// listed rollouts' lines that are not JSON objects.
HistoryList list_history(const std::filesystem::path& codex_home, std::string_view cwd);

// The rollout of thread `id` recorded for `cwd` (any directory without it), if there is one: the first, in path
// order, named for the thread whose session_meta says so. The id is checked with is_thread_id() and only
// compared with file names found under <codex_home>/sessions; no path is built from it.
std::optional<std::filesystem::path> find_rollout(const std::filesystem::path& codex_home, std::string_view id,
                                                  const std::optional<std::string_view>& cwd);

// Replays one rollout as normalized events: on_provider_session once (session_meta), then per Codex turn the
// user's prompt (on_user_prompt, the turn id as prompt id), the assistant's messages and reasoning, tool calls
// with their outputs, and on_turn_end (end_turn with the last agent message, cancelled for an aborted turn,
// error for a failed one; usage summed over the turn's model requests). A turn still open at the end of the
// file (running, or its process died) gets no on_turn_end. With `codex_home`, a fork's conversation before the
// fork is replayed first from its parent's rollout found there (Codex writes only what follows into the fork's
// file); without it, the file alone. Ignored lines: bookkeeping (turn context, world state, token records,
// settings, duplicates).
HistoryFileStats read_history(const std::filesystem::path& file, HistorySink& sink,
                              const std::optional<std::filesystem::path>& codex_home = std::nullopt);

}  // namespace switchboard::adapters::codex
