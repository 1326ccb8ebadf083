#include "switchboard/bus/Egress.h"

#include <algorithm>

#include "switchboard/json/JsonWriter.h"
#include "switchboard/support/Bug.h"
#include "switchboard/support/Clock.h"

namespace switchboard::bus {
namespace {

int g_egress_count = 0;

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
  writer.begin_object();
  writer.key_raw(R"("seq":)");
  writer.unsigned_integer(seq);
  writer.key_raw(R"("type":)");
  writer.string(event.type);
  writer.key_raw(R"("ts":)");
  writer.integer(ts_millis);
  if (!event.session_id.empty()) {
    writer.key_raw(R"("sessionId":)");
    writer.string(event.session_id);
  }
  writer.key_raw(R"("data":)");
  std::visit([&writer](const auto& data) { protocol::encode(writer, data); }, *event.payload);
  writer.end_object();
}

void Egress::on_bus_event(const BusEvent& bus_event) {
  const auto wire = bridge(bus_event);
  if (!wire) return;
  auto encoded = std::make_shared<EncodedEvent>();
  encoded->seq = ++m_last_seq;
  encoded->kind = wire->kind;
  encoded->session_id.assign(wire->session_id);
  encoded->json.reserve(160);
  encode(*wire, encoded->seq, unix_millis_now(), encoded->json);
  const EncodedEventPtr shared = std::move(encoded);
  // Index loop: a sink may unregister itself (a transport closing) while being notified.
  for (std::size_t i = 0; i < m_sinks.size(); ++i) m_sinks[i]->on_event(shared);
}

}  // namespace switchboard::bus
