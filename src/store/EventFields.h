#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "switchboard/protocol/generated/Events.h"

namespace switchboard::store {

// What the event log reads out of an EncodedEvent to fill its columns, without parsing the whole event.

// data.turnId of an egress event (`{"seq":…,"type":…,"ts":…,"sessionId":…,"data":{…,"turnId":"…",…}}`), or
// nullopt when the event has none. A single forward scan that skips every other value without building
// anything, so it costs about as much as reading the bytes once; only a turnId containing escapes is
// decoded with nlohmann. Keys are matched at their exact depth: a "turnId" nested deeper in data (a tool
// input, say) is not the event's turn. Malformed input gives nullopt.
std::optional<std::string> extract_turn_id(std::string_view json);

// The wire type of `kind` as a stable string (what the events.type column holds).
const std::string& event_type_name(protocol::EventKind kind);

// The kind of a stored type, or nullopt when this build does not know it (a row written by a build whose
// schema had an event this one lacks).
std::optional<protocol::EventKind> event_kind_from_type(std::string_view type);

}  // namespace switchboard::store
