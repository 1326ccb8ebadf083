#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/EncodedEvent.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/json/JsonWriter.h"

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

  // The highest seq delivered to the sinks.
  std::uint64_t last_seq() const { return m_last_seq; }
  // Seqs continue after `seq` (the durable log restores this across restarts).
  void continue_after(std::uint64_t seq) { m_last_seq = m_numbered_seq = seq; }

  // The seqs the egress may hand out. Without a grant (an ephemeral daemon, most tests) any seq goes. With one,
  // an event numbered past `through` is held, with every event after it, in order, until a larger grant
  // arrives; the bus never waits. `running_low` is called (once per grant) when the egress numbers the seq
  // `ask_at`, so the grantor (the event log, which makes the grant durable first) can extend it in time.
  void grant_seqs(std::uint64_t through, std::uint64_t ask_at);
  void on_seqs_running_low(std::function<void()> callback) { m_running_low = std::move(callback); }
  // The highest seq numbered: delivered, or held for want of a grant.
  std::uint64_t numbered_seq() const { return m_numbered_seq; }
  std::size_t held_count() const { return m_held.size(); }

  // Serializes one wire event with the given seq and timestamp (exposed for tests and the fuzzer).
  static void encode(const WireEvent& event, std::uint64_t seq, std::int64_t ts_millis, std::string& out);
  // The same through a writer the caller keeps (see on_bus_event, and bench_egress, which times it).
  static void encode(const WireEvent& event, std::uint64_t seq, std::int64_t ts_millis, json::JsonWriter& writer);

 private:
  void on_bus_event(const BusEvent& event);
  std::shared_ptr<EncodedEvent> recycled_or_new_event();
  void deliver(const EncodedEventPtr& event);
  // The numbered event reached m_ask_at: ask for more seqs, and hold it if it is past the grant.
  void on_grant_limit(EncodedEventPtr event);
  void release_held();
  void update_threshold();

  Subscription m_subscription;
  std::vector<EventSink*> m_sinks;
  std::uint64_t m_last_seq = 0;
  std::uint64_t m_numbered_seq = 0;
  // The hot path compares each new seq with m_ask_at only: everything about grants happens past it.
  static constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t m_granted_through = kUnlimited;
  std::uint64_t m_ask_seq = kUnlimited;  // when to call m_running_low
  bool m_asked = false;                  // called for the current grant
  std::uint64_t m_ask_at = kUnlimited;   // the first seq that needs on_grant_limit
  std::function<void()> m_running_low;
  std::deque<EncodedEventPtr> m_held;  // numbered past the grant, waiting for it
  // Each event is serialized here, then copied into its EncodedEvent at its exact size: the writer keeps its
  // room from one event to the next, so no event pays for growing and trimming a fresh string.
  std::string m_scratch;
  json::JsonWriter m_writer{m_scratch};
  // EncodedEvents the sinks have let go of, reused with their text's capacity: a streamed token then costs no
  // heap allocation at all (two per event before, a sixth of the whole stdio path's time). A slot whose event is
  // still held (an SSE replay, the event log's pending batch) is simply replaced by a new event.
  static constexpr std::size_t kRecycledEvents = 64;
  std::array<std::shared_ptr<EncodedEvent>, kRecycledEvents> m_recycled;
  std::size_t m_next_recycled = 0;
};

}  // namespace switchboard::bus
