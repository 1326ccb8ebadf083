#include "switchboard/bus/Bridge.h"

namespace switchboard::bus {

std::optional<WireEvent> bridge(const BusEvent& event) {
  const protocol::EventKind kind = event.kind();
  const protocol::EventInfo& info = protocol::event_info(kind);
  if (info.internal) return std::nullopt;
  if (info.scope == protocol::EventScope::Global) return WireEvent{kind, info.type, {}, &event.payload};
  if (event.session_id.empty()) return std::nullopt;  // cannot be routed; the bus reports it at publish time
  return WireEvent{kind, info.type, event.session_id, &event.payload};
}

}  // namespace switchboard::bus
