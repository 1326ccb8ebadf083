#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/bus/Egress.h"

using namespace switchboard::bus;
namespace protocol = switchboard::protocol;

namespace {

struct RecordingSink : EventSink {
  std::vector<EncodedEventPtr> events;
  void on_event(const EncodedEventPtr& event) override { events.push_back(event); }
};

protocol::MessageDeltaEvent delta(std::string text) {
  return protocol::MessageDeltaEvent{"turn-1", "msg-1", protocol::DeltaKind::Text, std::move(text)};
}

}  // namespace

TEST_CASE("one publish reaches every sink once; serialized once", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink stdio_like;
  RecordingSink sse_like;
  egress.add_sink(stdio_like);
  egress.add_sink(sse_like);

  bus.publish("s-1", delta("hello"));
  REQUIRE(stdio_like.events.size() == 1);
  REQUIRE(sse_like.events.size() == 1);
  CHECK(stdio_like.events[0] == sse_like.events[0]);  // the very same bytes, shared

  const auto& event = *stdio_like.events[0];
  CHECK(event.seq == 1);
  CHECK(event.session_id == "s-1");
  const auto parsed = nlohmann::json::parse(event.json);
  CHECK(parsed.at("seq") == 1);
  CHECK(parsed.at("type") == "message.delta");
  CHECK(parsed.at("sessionId") == "s-1");
  CHECK(parsed.at("ts").is_number_integer());
  CHECK(parsed.at("data") == nlohmann::json{{"turnId", "turn-1"}, {"messageId", "msg-1"}, {"kind", "text"}, {"text", "hello"}});
  CHECK(event.json.find('\n') == std::string::npos);
}

TEST_CASE("internal events never reach sinks and take no seq", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  bus.publish_global(protocol::ClientAttachedEvent{"c-1", protocol::Transport::Stdio, false});
  bus.publish("s", delta("a"));
  bus.publish_global(protocol::ClientDetachedEvent{"c-1"});
  bus.publish_global(protocol::DaemonShutdownEvent{protocol::DaemonShutdownEventReason::StdinClosed});
  REQUIRE(sink.events.size() == 2);
  CHECK(sink.events[0]->seq == 1);
  CHECK(sink.events[1]->seq == 2);
  CHECK(nlohmann::json::parse(sink.events[1]->json).contains("sessionId") == false);
}

TEST_CASE("order and seq survive 10^5 interleaved events", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  constexpr int kEvents = 100000;  // the brief asks for 10^5
  for (int i = 0; i < kEvents; ++i) bus.publish("s-" + std::to_string(i % 7), delta(std::to_string(i)));
  REQUIRE(sink.events.size() == kEvents);
  std::map<std::string, int> last_per_session;
  for (int i = 0; i < kEvents; ++i) {
    const auto& event = *sink.events[static_cast<std::size_t>(i)];
    REQUIRE(event.seq == static_cast<std::uint64_t>(i + 1));
    const auto parsed = nlohmann::json::parse(event.json);
    REQUIRE(parsed.at("data").at("text") == std::to_string(i));
    REQUIRE(parsed.at("sessionId") == "s-" + std::to_string(i % 7));
    auto [it, inserted] = last_per_session.try_emplace(event.session_id, i);
    if (!inserted) {
      REQUIRE(it->second < i);
      it->second = i;
    }
  }
}

TEST_CASE("seq continues after a restored value", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  egress.continue_after(41);
  bus.publish("s", delta("x"));
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0]->seq == 42);
  CHECK(egress.last_seq() == 42);
}

TEST_CASE("a removed sink hears nothing more", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink a;
  RecordingSink b;
  egress.add_sink(a);
  egress.add_sink(b);
  bus.publish("s", delta("1"));
  egress.remove_sink(a);
  bus.publish("s", delta("2"));
  CHECK(a.events.size() == 1);
  CHECK(b.events.size() == 2);
}
