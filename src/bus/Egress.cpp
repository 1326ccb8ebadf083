#include "switchboard/bus/Egress.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <string_view>

#include "switchboard/json/JsonWriter.h"
#include "switchboard/support/Bug.h"
#include "switchboard/support/Clock.h"

namespace switchboard::bus {
namespace {

int g_egress_count = 0;

// A recycled event keeps its text's capacity; one that once carried a large tool output is not kept, so the
// ring never pins more than kRecycledEvents small buffers.
constexpr std::size_t kMaxRecycledCapacity = 16 * 1024;

// The digits of the last timestamp written. Formatting a 13-digit millisecond time cost about a sixth of an
// event's serialization; it changes at most once a millisecond, while a streaming agent emits many events per
// millisecond. Per thread, because encode() is static and may be called from anywhere.
struct TimestampText {
  std::int64_t millis = -1;
  std::size_t size = 0;
  char digits[24] = {};
};
thread_local TimestampText t_timestamp;

std::string_view timestamp_text(std::int64_t millis) {
  TimestampText& cached = t_timestamp;
  if (millis != cached.millis) {
    cached.millis = millis;
    cached.size = static_cast<std::size_t>(
        std::to_chars(cached.digits, cached.digits + sizeof cached.digits, millis).ptr - cached.digits);
  }
  return {cached.digits, cached.size};
}

}  // namespace

Egress::Egress(EventBus& bus)
    : m_subscription(bus.subscribe_all([this](const BusEvent& event) { on_bus_event(event); })) {
  SWITCHBOARD_ASSERT(g_egress_count == 0, "a second egress");
  ++g_egress_count;
}

Egress::~Egress() { --g_egress_count; }

void Egress::add_sink(EventSink& sink) { m_sinks.push_back(&sink); }

void Egress::remove_sink(EventSink& sink) { std::erase(m_sinks, &sink); }

void Egress::encode(const WireEvent& event, std::uint64_t seq, std::int64_t ts_millis, std::string& out) {
  json::JsonWriter writer(out);
  encode(event, seq, ts_millis, writer);
}

void Egress::encode(const WireEvent& event, std::uint64_t seq, std::int64_t ts_millis, json::JsonWriter& writer) {
  writer.begin_object();
  writer.member_unsigned(R"("seq":)", seq);
  const protocol::EventInfo& info = protocol::event_info(event.kind);
  if (event.type.data() == info.type.data() && event.type.size() == info.type.size()) {
    writer.member_json(R"(,"type":)", info.quoted_type);  // as the bridge sets it: the generated, quoted name
  } else {
    writer.member_string(R"(,"type":)", event.type);
  }
  writer.member_json(R"(,"ts":)", timestamp_text(ts_millis));
  if (!event.session_id.empty()) writer.member_string(R"(,"sessionId":)", event.session_id);
  writer.member_raw(R"(,"data":)");
  std::visit([&writer](const auto& data) { protocol::encode(writer, data); }, *event.payload);
  writer.end_object();
}

std::shared_ptr<EncodedEvent> Egress::recycled_or_new_event() {
  std::shared_ptr<EncodedEvent>& slot = m_recycled[m_next_recycled];
  m_next_recycled = (m_next_recycled + 1) % kRecycledEvents;
  // Held only by this ring: nobody else can take a new reference to it, so it is ours to rewrite. The count may
  // have dropped to one on another thread (the store's), whose reads of the event happened before its release
  // decrement: the fence after our load makes them happen before our writes.
  if (slot && slot.use_count() == 1 && slot->json.capacity() <= kMaxRecycledCapacity) {
    std::atomic_thread_fence(std::memory_order_acquire);
    return slot;
  }
  slot = std::make_shared<EncodedEvent>();
  return slot;
}

void Egress::on_bus_event(const BusEvent& bus_event) {
  const auto wire = bridge(bus_event);
  if (!wire) return;
  std::shared_ptr<EncodedEvent> encoded = recycled_or_new_event();
  encoded->seq = ++m_numbered_seq;
  encoded->kind = wire->kind;
  encoded->session_id.assign(wire->session_id);
  m_writer.clear();
  encode(*wire, encoded->seq, unix_millis_now(), m_writer);
  encoded->json.assign(m_writer.text());
  EncodedEventPtr shared = std::move(encoded);  // the ring keeps its own reference
  if (shared->seq >= m_ask_at) return on_grant_limit(std::move(shared));
  deliver(shared);
}

void Egress::deliver(const EncodedEventPtr& event) {
  m_last_seq = event->seq;
  // Index loop: a sink may unregister itself (a transport closing) while being notified.
  for (std::size_t i = 0; i < m_sinks.size(); ++i) m_sinks[i]->on_event(event);
}

void Egress::take_seqs_from(SeqSupply& supply) {
  continue_after(supply.last_seq());
  m_supply = &supply;
  supply.start_supplying(*this);
}

void Egress::on_grant_limit(EncodedEventPtr event) {
  if (!m_asked && event->seq >= m_ask_seq) {
    m_asked = true;  // one request per grant
    if (m_supply) m_supply->on_running_low();
  }
  if (m_held.empty() && event->seq <= m_granted_through) {
    deliver(event);
  } else {
    m_held.push_back(std::move(event));
  }
  update_threshold();
}

void Egress::grant_seqs(SeqGrant grant) {
  m_granted_through = grant.through;
  m_ask_seq = grant.ask_at;
  m_asked = false;
  release_held();
  if (m_numbered_seq >= m_ask_seq) {
    // Used up already (a burst while the grant was on its way): ask again at once.
    m_asked = true;
    if (m_supply) m_supply->on_running_low();
  }
  update_threshold();
}

void Egress::update_threshold() {
  if (!m_held.empty()) {
    m_ask_at = 0;  // every new event queues behind the held ones
  } else if (!m_asked) {
    m_ask_at = std::min(m_ask_seq, m_granted_through == kUnlimited ? kUnlimited : m_granted_through + 1);
  } else {
    m_ask_at = m_granted_through == kUnlimited ? kUnlimited : m_granted_through + 1;
  }
}

void Egress::release_held() {
  while (!m_held.empty() && m_held.front()->seq <= m_granted_through) {
    const EncodedEventPtr event = std::move(m_held.front());
    m_held.pop_front();
    deliver(event);
  }
}

}  // namespace switchboard::bus
