#pragma once

#include <string>
#include <vector>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::daemon {

// session.export's Markdown: a session's stored events rendered to read like the conversation. Each turn
// is a section with its prompt, the agent's answers (thinking as a quote), each tool call with its input,
// the diffs it makes and a shortened output, permission and question requests with how they were answered,
// and how the turn ended with its usage. Streamed pieces (message.delta, tool.output) are skipped: the
// complete message and tool.completed carry the same text. Pure: no I/O, the same events give the same text.
std::string render_session_markdown(const protocol::SessionInfo& session, const std::vector<protocol::EventEnvelope>& events);

// What Markdown shows of a tool's output: at most kOutputLines lines and kOutputBytes bytes, the rest
// counted in a note.
inline constexpr std::size_t kOutputLines = 40;
inline constexpr std::size_t kOutputBytes = 4000;

}  // namespace switchboard::daemon
