#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "switchboard/bus/Bridge.h"
#include "switchboard/bus/EncodedEvent.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/bus/SeqSupply.h"
#include "switchboard/json/JsonWriter.h"

namespace switchboard::bus {

// The single way out of the daemon for events. It is the only wildcard subscriber that reaches the wire: for
// each bus event it asks the bridge, assigns the next seq, serializes the event once and hands the same
// bytes to every sink in registration order. Owned by the daemon; one per bus (asserted).
class Egress final : public SeqConsumer {
 public:
  explicit Egress(EventBus& bus);
  Egress(const Egress&) = delete;
  Egress& operator=(const Egress&) = delete;
  ~Egress() override;

  void add_sink(EventSink& sink);
  void remove_sink(EventSink& sink);

  // The highest seq delivered to the sinks.
  std::uint64_t last_seq() const override { return m_last_seq; }
  // Seqs continue after `seq`.
  void continue_after(std::uint64_t seq) { m_last_seq = m_numbered_seq = seq; }

  // Seqs continue after the supply's last_seq(), and only the seqs it grants go out (SeqSupply.h): an event
  // numbered past the grant is held, with every event after it, in order, until a larger grant arrives; the bus
  // never waits. The supply is asked for more (once per grant) when the egress numbers the grant's ask_at.
  // Without a supply any seq goes.
  void take_seqs_from(SeqSupply& supply);
  void grant_seqs(SeqGrant grant) override;
  void end_supply() override { m_supply = nullptr; }
  std::uint64_t numbered_seq() const override { return m_numbered_seq; }
  std::size_t held_count() const override { return m_held.size(); }

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
  bool m_asked = false;                  // asked for more during the current grant
  std::uint64_t m_ask_at = kUnlimited;   // the first seq that needs on_grant_limit
  SeqSupply* m_supply = nullptr;
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
