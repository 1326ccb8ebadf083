#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "switchboard/bus/EventBus.h"

namespace event_bus_tests {

using namespace switchboard::bus;
namespace protocol = switchboard::protocol;

protocol::MessageDeltaEvent delta(std::string text) {
  return protocol::MessageDeltaEvent{"turn", "msg", protocol::DeltaKind::Text, std::move(text)};
}

std::string text_of(const BusEvent& event) {
  if (const auto* d = std::get_if<protocol::MessageDeltaEvent>(&event.payload)) return d->text;
  return std::string(protocol::event_info(event.kind()).type);
}

TEST_CASE("the bus is reachable through the() only while installed", "[bus]") {
  CHECK_FALSE(EventBus::installed());
  EventBus bus;
  {
    EventBus::Installation installation(bus);
    CHECK(EventBus::installed());
    CHECK(&EventBus::the() == &bus);
  }
  CHECK_FALSE(EventBus::installed());
}

TEST_CASE("typed subscribers hear first, then wildcards, in subscription order", "[bus]") {
  EventBus bus;
  std::vector<std::string> heard;
  auto wildcard = bus.subscribe_all([&](const BusEvent& e) { heard.push_back("all:" + text_of(e)); });
  auto typed1 = bus.subscribe(protocol::EventKind::MessageDelta, [&](const BusEvent& e) { heard.push_back("t1:" + text_of(e)); });
  auto typed2 = bus.subscribe(protocol::EventKind::MessageDelta, [&](const BusEvent& e) { heard.push_back("t2:" + text_of(e)); });
  auto other = bus.subscribe(protocol::EventKind::DaemonShutdown, [&](const BusEvent&) { heard.push_back("other"); });

  bus.publish("s1", delta("a"));
  CHECK(heard == std::vector<std::string>{"t1:a", "t2:a", "all:a"});
}

TEST_CASE("events published during notification are delivered after, in publish order", "[bus]") {
  EventBus bus;
  std::vector<std::string> first_listener;
  std::vector<std::string> second_listener;
  auto a = bus.subscribe_all([&](const BusEvent& e) {
    first_listener.push_back(text_of(e));
    if (text_of(e) == "1") {
      bus.publish("s", delta("2"));
      bus.publish("s", delta("3"));
    }
    if (text_of(e) == "2") bus.publish("s", delta("4"));
  });
  auto b = bus.subscribe_all([&](const BusEvent& e) { second_listener.push_back(text_of(e)); });

  bus.publish("s", delta("1"));
  // Every subscriber sees 1 before 2, even though 2 was published while the first subscriber handled 1.
  CHECK(first_listener == std::vector<std::string>{"1", "2", "3", "4"});
  CHECK(second_listener == std::vector<std::string>{"1", "2", "3", "4"});
}

TEST_CASE("subscriptions are RAII and may change during notification", "[bus]") {
  EventBus bus;
  std::vector<std::string> heard;
  Subscription late;
  Subscription self;
  self = bus.subscribe_all([&](const BusEvent& e) {
    heard.push_back("self:" + text_of(e));
    self.reset();  // unsubscribe from inside the notification
    late = bus.subscribe_all([&](const BusEvent& e2) { heard.push_back("late:" + text_of(e2)); });
  });
  bus.publish("s", delta("x"));
  bus.publish("s", delta("y"));
  CHECK(heard == std::vector<std::string>{"self:x", "late:y"});

  late.reset();
  bus.publish("s", delta("z"));
  CHECK(heard.size() == 2);
  {
    auto scoped = bus.subscribe_all([&](const BusEvent&) { heard.push_back("scoped"); });
    bus.publish("s", delta("w"));
  }
  bus.publish("s", delta("v"));
  CHECK(heard == std::vector<std::string>{"self:x", "late:y", "scoped"});
}

TEST_CASE("kind_of maps payload types to their schema kind", "[bus]") {
  STATIC_REQUIRE(kind_of<protocol::MessageDeltaEvent>() == protocol::EventKind::MessageDelta);
  STATIC_REQUIRE(kind_of<protocol::ClientAttachedEvent>() == protocol::EventKind::ClientAttached);
  BusEvent event{"s", protocol::DaemonShutdownEvent{protocol::DaemonShutdownEventReason::Signal}};
  CHECK(event.kind() == protocol::EventKind::DaemonShutdown);
}

}  // namespace event_bus_tests
