#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "switchboard/protocol/generated/Events.h"

namespace switchboard::bus {

// One wire event, serialized exactly once by the egress and shared read-only by every sink: the stdio
// transport, SSE clients and the durable log all send or store these same bytes.
struct EncodedEvent {
  std::uint64_t seq = 0;
  protocol::EventKind kind{};
  std::string session_id;
  // `{"seq":…,"type":…,"ts":…,"sessionId":…,"data":{…}}`, compact, no newline.
  std::string json;
};

using EncodedEventPtr = std::shared_ptr<const EncodedEvent>;

// A consumer of the egress. on_event must not block and must not publish on the bus synchronously.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const EncodedEventPtr& event) = 0;
};

}  // namespace switchboard::bus
