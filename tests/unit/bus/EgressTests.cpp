#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/bus/Egress.h"
#include "switchboard/json/DecodeContext.h"
#include "support/SourceTree.h"

namespace egress_tests {

using namespace switchboard::bus;
namespace protocol = switchboard::protocol;

struct RecordingSink : EventSink {
  std::vector<EncodedEventPtr> events;
  void on_event(const EncodedEventPtr& event) override { events.push_back(event); }
};

protocol::MessageDeltaEvent delta(std::string text) {
  return protocol::MessageDeltaEvent{"turn-1", "msg-1", protocol::DeltaKind::Text, std::move(text)};
}

// One recorded wire event (tests/fixtures/egress/events.ndjson): its exact bytes and the bus event it came from.
struct RecordedEvent {
  std::string line;
  std::uint64_t seq = 0;
  std::int64_t ts = 0;
  BusEvent event;
};

std::vector<RecordedEvent> recorded_events() {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/egress/events.ndjson"));
  std::vector<RecordedEvent> events;
  std::string line;
  while (std::getline(in, line)) {
    const auto parsed = nlohmann::json::parse(line);
    RecordedEvent recorded{line, parsed.at("seq").get<std::uint64_t>(), parsed.at("ts").get<std::int64_t>(), {}};
    recorded.event.session_id = parsed.value("sessionId", "");
    const auto type = parsed.at("type").get<std::string>();
    bool decoded = false;
    // Decode `data` into the payload alternative whose generated event-table entry has this type.
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((protocol::kEvents[I].type == type
            ? (void)(decoded = [&] {
                switchboard::json::DecodeContext context;
                return protocol::decode(parsed.at("data"), recorded.event.payload.emplace<I>(), context);
              }())
            : void()),
       ...);
    }(std::make_index_sequence<std::variant_size_v<protocol::EventPayload>>{});
    INFO(line);
    REQUIRE(decoded);
    events.push_back(std::move(recorded));
  }
  return events;
}

// `{"seq":N,"type":…,"ts":T,` with the digits of N and T blanked, for events whose seq and time egress chose.
std::string without_seq_and_ts(std::string line) {
  for (const std::string_view key : {R"("seq":)", R"("ts":)"}) {
    const auto at = line.find(key) + key.size();
    line.erase(at, line.find(',', at) - at);
  }
  return line;
}

TEST_CASE("one publish reaches every sink once, serialized once", "[egress]") {
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

TEST_CASE("egress writes the recorded bytes for every event type", "[egress]") {
  const auto recorded = recorded_events();
  std::size_t wire_types = 0;
  for (const auto& info : protocol::kEvents) wire_types += info.internal ? 0 : 1;
  std::map<std::string, std::size_t> lines_of_type;
  for (const auto& r : recorded) ++lines_of_type[std::string(protocol::event_info(r.event.kind()).type)];
  CHECK(lines_of_type.size() == wire_types);  // a new event type needs lines in the fixture
  for (const auto& [type, lines] : lines_of_type) {
    INFO(type);
    CHECK(lines >= 3);  // three of every wire event type
  }
  std::string out;
  for (const auto& r : recorded) {
    const auto wire = bridge(r.event);
    REQUIRE(wire);
    out.clear();
    Egress::encode(*wire, r.seq, r.ts, out);
    CHECK(out == r.line);
    // Appending to a buffer of earlier lines writes the same bytes after them.
    std::string appended = "earlier line\n";
    Egress::encode(*wire, r.seq, r.ts, appended);
    CHECK(appended == "earlier line\n" + r.line);
  }
}

TEST_CASE("bus.publish through egress writes the recorded bytes", "[egress]") {
  const auto recorded = recorded_events();
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  for (const auto& r : recorded) bus.publish(r.event);
  REQUIRE(sink.events.size() == recorded.size());
  for (std::size_t i = 0; i < recorded.size(); ++i) {
    CHECK(without_seq_and_ts(sink.events[i]->json) == without_seq_and_ts(recorded[i].line));
    CHECK(sink.events[i]->seq == i + 1);
    CHECK(sink.events[i]->session_id == recorded[i].event.session_id);
  }
}

// A sink that lets go of every event at once, as the stdio transport does (it copies the bytes).
struct ForgettingSink : EventSink {
  std::vector<const EncodedEvent*> seen;
  void on_event(const EncodedEventPtr& event) override { seen.push_back(event.get()); }
};

TEST_CASE("egress: events a sink still holds are never rewritten by later ones", "[egress]") {
  EventBus bus;
  EventBus::Installation installation(bus);
  Egress egress(bus);
  RecordingSink keeper;
  egress.add_sink(keeper);
  // Several times the recycling ring: every event stays held, so none may be reused.
  for (int i = 0; i < 500; ++i) bus.publish("s-1", delta("token " + std::to_string(i)));
  REQUIRE(keeper.events.size() == 500);
  std::set<const EncodedEvent*> distinct;
  for (std::size_t i = 0; i < keeper.events.size(); ++i) {
    const auto parsed = nlohmann::json::parse(keeper.events[i]->json);
    CHECK(parsed["seq"] == i + 1);
    CHECK(keeper.events[i]->seq == i + 1);
    CHECK(parsed["data"]["text"] == "token " + std::to_string(i));
    distinct.insert(keeper.events[i].get());
  }
  CHECK(distinct.size() == 500);
  egress.remove_sink(keeper);
}

TEST_CASE("egress: events no sink holds any more are reused for later events", "[egress]") {
  EventBus bus;
  EventBus::Installation installation(bus);
  Egress egress(bus);
  ForgettingSink forgetting;
  RecordingSink keeper;  // holds only the events published while it is attached
  egress.add_sink(forgetting);
  for (int i = 0; i < 300; ++i) bus.publish("s-1", delta("a"));
  const std::set<const EncodedEvent*> first_round(forgetting.seen.begin(), forgetting.seen.end());
  // A bounded set of objects served 300 events: they were recycled, not allocated per event.
  CHECK(first_round.size() < 300);
  egress.add_sink(keeper);
  bus.publish("s-2", delta("kept"));
  egress.remove_sink(keeper);
  for (int i = 0; i < 300; ++i) bus.publish("s-1", delta("b"));
  // The kept event kept its text and its session while the ring went round many times.
  REQUIRE(keeper.events.size() == 1);
  CHECK(keeper.events[0]->session_id == "s-2");
  CHECK(nlohmann::json::parse(keeper.events[0]->json)["data"]["text"] == "kept");
  CHECK(keeper.events[0]->seq == 301);
  egress.remove_sink(forgetting);
}

// A seq supply that grants what the test says, when it says, and counts the egress's requests.
struct ScriptedSupply : SeqSupply {
  std::uint64_t continue_after = 0;
  SeqGrant first;
  SeqConsumer* consumer = nullptr;
  int asked = 0;
  std::uint64_t last_seq() const override { return continue_after; }
  void start_supplying(SeqConsumer& egress) override {
    consumer = &egress;
    egress.grant_seqs(first);
  }
  void on_running_low() override { ++asked; }
};

TEST_CASE("egress: seqs past the grant are numbered and held in order until a larger grant which is asked for once",
          "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  ScriptedSupply supply;
  supply.first = SeqGrant{10, 6};
  egress.take_seqs_from(supply);
  REQUIRE(supply.consumer == &egress);
  for (int i = 0; i < 5; ++i) bus.publish("s-1", delta("a"));
  CHECK(supply.asked == 0);
  CHECK(sink.events.size() == 5);
  bus.publish("s-1", delta("b"));  // seq 6 reaches the ask mark
  CHECK(supply.asked == 1);
  for (int i = 0; i < 7; ++i) bus.publish("s-1", delta("c"));  // seqs 7..13: 11..13 are past the grant
  CHECK(supply.asked == 1);
  CHECK(sink.events.size() == 10);
  CHECK(egress.last_seq() == 10);
  CHECK(egress.numbered_seq() == 13);
  CHECK(egress.held_count() == 3);

  egress.grant_seqs({12, 100});  // releases 11 and 12; 13 still waits, and so does every event after it
  CHECK(sink.events.size() == 12);
  bus.publish("s-1", delta("d"));  // seq 14
  CHECK(egress.held_count() == 2);
  egress.grant_seqs({1000, 500});
  REQUIRE(sink.events.size() == 14);
  for (std::size_t i = 0; i < sink.events.size(); ++i) CHECK(sink.events[i]->seq == i + 1);
  CHECK(egress.held_count() == 0);
  CHECK(supply.asked == 1);

  SECTION("a grant already used up asks again at once") {
    egress.grant_seqs({1000, 10});
    CHECK(supply.asked == 2);
    bus.publish("s-1", delta("e"));
    CHECK(supply.asked == 2);
    CHECK(sink.events.back()->seq == 15);
  }
  SECTION("a supply that ended is asked nothing more, and its last grant stays in force") {
    egress.end_supply();
    egress.grant_seqs({15, 15});  // what the supply granted last
    bus.publish("s-1", delta("e"));  // seq 15 reaches the ask mark: nobody to ask
    bus.publish("s-1", delta("f"));  // seq 16 is past the grant: held
    CHECK(supply.asked == 1);
    CHECK(egress.last_seq() == 15);
    CHECK(egress.held_count() == 1);
  }
}

TEST_CASE("egress: seqs continue after the supply's last seq", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  ScriptedSupply supply;
  supply.continue_after = 1040;
  supply.first = SeqGrant{2040, 1540};
  egress.take_seqs_from(supply);
  bus.publish("s-1", delta("a"));
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0]->seq == 1041);
}

TEST_CASE("egress: without a grant every seq goes out at once", "[egress]") {
  EventBus bus;
  Egress egress(bus);
  RecordingSink sink;
  egress.add_sink(sink);
  egress.continue_after(41);
  for (int i = 0; i < 100; ++i) bus.publish("s-1", delta("a"));
  CHECK(sink.events.size() == 100);
  CHECK(sink.events.back()->seq == 141);
  CHECK(egress.held_count() == 0);
}

}  // namespace egress_tests
