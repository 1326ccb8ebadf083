#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::acp {

// Our events as ACP `session/update` payloads (the `update` object of a SessionNotification), for
// `switchboard acp`. Pure: the server decides which sessions and which moment; this only says what an event
// looks like to an editor. The mapping is documented in docs/acp.md.
//
// Two readings of the same event log: live (deltas stream as chunks, the completed message is not repeated)
// and replay (session/load: deltas may have been compacted away, so the completed messages are the text, and
// each turn's prompt is the user's chunk).
enum class UpdateReading { Live, Replay };

// The diff content each running tool call of a session showed in its tool_call, by toolCallId. ACP's
// tool_call_update replaces the call's whole content, so the completion sends the diffs again with the output;
// otherwise the editor would lose them the moment the edit finished. One per session and reading.
using ShownDiffs = std::map<std::string, nlohmann::json>;

// The updates one event envelope stands for: none for events an editor has no use for (session.state,
// permission.*, which are requests of their own, turn.stopped, which answers session/prompt). `shown` is the
// session's (updated by tool.started, read and cleared by tool.completed).
std::vector<nlohmann::json> updates_for_event(const nlohmann::json& envelope, UpdateReading reading, ShownDiffs& shown);

// Unix epoch milliseconds as ISO 8601 UTC with milliseconds (ACP's timestamps: SessionInfo.updatedAt, ...).
std::string iso_time(std::int64_t epoch_ms);

// The ACP tool kind (read, edit, execute, search, fetch, think, other, ...) for one of our tool names.
std::string tool_kind_of(const std::string& tool);

// A one-line title for a tool call: the tool and what it acts on (a command, a path, a pattern).
std::string tool_title_of(const std::string& tool, const nlohmann::json& input);

// The session's ACP config options (session/new, load and resume answers, session/set_config_option's answer,
// config_option_update): `mode` (category mode) from the agent's modes, `model` (category model) from the models
// the agent offers the session (SessionInfo.models). Each is left out when there is nothing to choose from; the
// current value is the session's own choice, else the agent's default, else the first. A session's model that
// the list lacks (set by name) is offered too, so the current value is always one of the choices. Then the
// session's own options (SessionInfo.options) under their ids: `effort` with category thought_level, boolean
// ones as ACP booleans.
nlohmann::json config_options(const protocol::SessionInfo& session, const std::vector<std::string>& agent_modes);

}  // namespace switchboard::acp
