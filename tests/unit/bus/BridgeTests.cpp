#include <catch2/catch.hpp>

#include "switchboard/bus/Bridge.h"

namespace bridge_tests {

using namespace switchboard::bus;
namespace protocol = switchboard::protocol;

TEST_CASE("the bridge drops events the schema declares internal", "[bridge]") {
  // Driven by the generated table, not a hand-kept list: every internal kind is dropped, every other kept.
  for (std::size_t i = 0; i < protocol::kEvents.size(); ++i) {
    CAPTURE(protocol::kEvents[i].type);
    BusEvent event;
    event.session_id = "s-1";
    // Build a default payload of kind i.
    event.payload = [&] {
      protocol::EventPayload payload;
      const auto emplace = [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((I == i ? (payload.emplace<I>(), 0) : 0), ...);
      };
      emplace(std::make_index_sequence<std::variant_size_v<protocol::EventPayload>>{});
      return payload;
    }();
    REQUIRE(static_cast<std::size_t>(event.kind()) == i);
    const auto wire = bridge(event);
    CHECK(wire.has_value() == !protocol::kEvents[i].internal);
  }
  BusEvent attached{"", protocol::ClientAttachedEvent{"c1", protocol::Transport::Stdio, true}};
  CHECK_FALSE(bridge(attached).has_value());
}

TEST_CASE("the bridge stamps session-scoped events with their session", "[bridge]") {
  BusEvent event{"session-42", protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, "hi"}};
  const auto wire = bridge(event);
  REQUIRE(wire);
  CHECK(wire->session_id == "session-42");
  CHECK(wire->type == "message.delta");
  CHECK(wire->payload == &event.payload);  // forwarded unchanged, not copied
}

TEST_CASE("global events carry no session id", "[bridge]") {
  BusEvent event{"stray", protocol::DaemonShutdownEvent{protocol::DaemonShutdownEventReason::Request}};
  const auto wire = bridge(event);
  REQUIRE(wire);
  CHECK(wire->session_id.empty());
}

TEST_CASE("a session-scoped event without a session cannot be routed", "[bridge]") {
  BusEvent event{"", protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, "hi"}};
  CHECK_FALSE(bridge(event).has_value());
}

}  // namespace bridge_tests
