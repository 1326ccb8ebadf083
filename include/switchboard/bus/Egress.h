#pragma once

#include <cstdint>
#include <vector>

#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/EncodedEvent.h"
#include "switchboard/bus/EventBus.h"

namespace switchboard::bus {

// The single way out of the daemon for events. It is the only wildcard subscriber that reaches the wire: for
// each bus event it asks the bridge, assigns the next seq, serializes the event once and hands the same
// bytes to every sink in registration order. Owned by the daemon; one per bus (asserted).
class Egress {
 public:
  explicit Egress(EventBus& bus);
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;
  ~Egress();

  void add_sink(EventSink& sink);
  void remove_sink(EventSink& sink);

  std::uint64_t last_seq() const { return m_last_seq; }
  // Seqs continue after `seq` (the durable log restores this across restarts).
  void continue_after(std::uint64_t seq) { m_last_seq = seq; }

  // Serializes one wire event with the given seq and timestamp (exposed for tests and the fuzzer).
  static void encode(const WireEvent& event, std::uint64_t seq, std::int64_t ts_millis, std::string& out);

 private:
  void on_bus_event(const BusEvent& event);

  Subscription m_subscription;
  std::vector<EventSink*> m_sinks;
  std::uint64_t m_last_seq = 0;
};

}  // namespace switchboard::bus
