#pragma once

#include <optional>
#include <string_view>

#include "switchboard/bus/BusEvent.h"

namespace switchboard::bus {

// An event on its way to clients: which kind, its wire type name, the session it is stamped with (empty for
// global events) and the payload it came with (borrowed from the bus event; valid during emission only).
struct WireEvent {
  protocol::EventKind kind;
  std::string_view type;
  std::string_view session_id;
  const protocol::EventPayload* payload;
};

// The bridge between the bus and the wire: a pure function. It drops events the schema declares internal
// (`"internal": true`), stamps session-scoped events with their session id and passes the rest unchanged.
std::optional<WireEvent> bridge(const BusEvent& event);

}  // namespace switchboard::bus
