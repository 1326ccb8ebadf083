#pragma once

#include <filesystem>
#include <string>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::grok {

// Grok Build's own history: every session it ran (TUI, `-p`, ACP) is a directory
// `<GROK_HOME>/sessions/<url-encoded cwd>/<session id>/` holding `summary.json` (title, times) and `updates.jsonl`,
// the session's ACP `session/update` stream (`{"timestamp", "method": "session/update", "params"}` per line).
// Blocking file reads, for the engine's helper thread; nothing here throws.

// The directory name Grok gives a working directory: every byte but A-Z a-z 0-9 - _ . ~ as %XX.
std::string encoded_cwd(const std::string& cwd);

// The sessions of `cwd`, newest first.
HistoryOutcome<HistoryList> list_history(const std::filesystem::path& grok_home, const std::string& cwd);

// One session replayed into `sink`: each `user_message_chunk` opens a prompt (a turn), the updates after it are
// that turn's activity (through the ACP translator, as live), and the next prompt or the end closes it.
HistoryOutcome<HistoryReadStats> read_history(const std::filesystem::path& grok_home, const std::string& cwd,
                                              const std::string& session_id, HistorySink& sink);

}  // namespace switchboard::adapters::grok
