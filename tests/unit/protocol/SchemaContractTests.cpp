#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include <boost/asio/io_context.hpp>

#include "daemon/Methods.h"
#include "support/RecordingPeer.h"
#include "support/SchemaValidator.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/protocol/generated/ErrorCodes.h"
#include "switchboard/protocol/generated/Events.h"
#include "switchboard/protocol/generated/Methods.h"
#include "switchboard/protocol/generated/OpenRpcDocument.h"
#include "switchboard/rpc/Dispatcher.h"

namespace schema_contract_tests {

namespace fs = std::filesystem;
using nlohmann::json;
namespace protocol = switchboard::protocol;

json load(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::set<std::string> schema_names(const std::string& folder, const std::string& key) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(SWITCHBOARD_SOURCE_DIR) / "schema" / folder)) {
    if (entry.path().extension() == ".json") names.insert(load(entry.path()).at(key).get<std::string>());
  }
  return names;
}

TEST_CASE("the daemon binds exactly the methods of schema/methods, both ways", "[schema]") {
  boost::asio::io_context io;
  switchboard::bus::EventBus bus;
  switchboard::engine::Engine engine(io, bus, {});
  switchboard::rpc::Dispatcher dispatcher;
  switchboard::daemon::EventLogAccess history;
  switchboard::daemon::bind_methods(dispatcher, engine, history, {1024});
  const auto bound = dispatcher.bound_methods();
  const std::set<std::string> registry(bound.begin(), bound.end());
  const std::set<std::string> generated(protocol::kMethodNames.begin(), protocol::kMethodNames.end());
  const auto declared = schema_names("methods", "name");
  CHECK(registry == declared);   // nothing bound that the schema lacks, nothing declared left unbound
  CHECK(generated == declared);  // and the generated code is in step with schema/
}

TEST_CASE("the generated event table matches schema/events", "[schema]") {
  std::set<std::string> generated;
  for (const auto& info : protocol::kEvents) generated.insert(std::string(info.type));
  CHECK(generated == schema_names("events", "type"));
  for (const auto& entry : fs::directory_iterator(fs::path(SWITCHBOARD_SOURCE_DIR) / "schema" / "events")) {
    const auto declared = load(entry.path());
    for (const auto& info : protocol::kEvents) {
      if (info.type == declared.at("type").get<std::string>()) {
        CHECK(info.internal == declared.at("internal").get<bool>());
      }
    }
  }
}

TEST_CASE("the generated error codes match schema/errors.json", "[schema]") {
  const auto errors = load(fs::path(SWITCHBOARD_SOURCE_DIR) / "schema" / "errors.json").at("errors");
  REQUIRE(errors.size() == protocol::kErrorCodes.size());
  for (std::size_t i = 0; i < errors.size(); ++i) {
    CHECK(static_cast<int>(protocol::kErrorCodes[i].code) == errors[i].at("code").get<int>());
    CHECK(protocol::kErrorCodes[i].name == errors[i].at("name").get<std::string>());
  }
  // The codes the brief fixes.
  CHECK(static_cast<int>(protocol::ErrorCode::AlreadyAnswered) == -32002);
  CHECK(static_cast<int>(protocol::ErrorCode::InvalidParams) == -32602);
}

TEST_CASE("rpc.discover serves an OpenRPC document of the whole schema", "[schema]") {
  const auto doc = json::parse(protocol::openrpc_document_text());
  CHECK(doc.at("openrpc").get<std::string>().rfind("1.", 0) == 0);
  std::set<std::string> methods;
  for (const auto& m : doc.at("methods")) methods.insert(m.at("name"));
  CHECK(methods == schema_names("methods", "name"));
  std::set<std::string> events;
  for (const auto& e : doc.at("x-events")) events.insert(e.at("type"));
  CHECK(events.count("message.delta") == 1);
  CHECK(events.count("client.attached") == 0);  // internal events are not advertised
  CHECK(doc.at("x-errors").size() == protocol::kErrorCodes.size());
  CHECK(doc.at("x-protocol-version") == protocol::kProtocolVersion);
}

TEST_CASE("every wire event and core result validates against the schema", "[schema]") {
  switchboard::testing::SchemaValidator validator;
  switchboard::bus::EventBus bus;
  switchboard::bus::EventBus::Installation installation(bus);
  switchboard::bus::Egress egress(bus);
  struct Sink : switchboard::bus::EventSink {
    std::vector<json> events;
    void on_event(const switchboard::bus::EncodedEventPtr& e) override { events.push_back(json::parse(e->json)); }
  } sink;
  egress.add_sink(sink);

  bus.publish("s-1", protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Thinking, "x\ny"});
  bus.publish_global(protocol::DaemonShutdownEvent{protocol::DaemonShutdownEventReason::Signal});
  REQUIRE(sink.events.size() == 2);
  for (const auto& event : sink.events) {
    CAPTURE(event.dump());
    CHECK(validator.validate_event(event).empty());
  }
  // The validator really checks: a malformed event is refused.
  auto broken = sink.events[0];
  broken["data"]["kind"] = "shouting";
  CHECK_FALSE(validator.validate_event(broken).empty());
  auto no_session = sink.events[0];
  no_session.erase("sessionId");
  CHECK_FALSE(validator.validate_event(no_session).empty());

  switchboard::rpc::Dispatcher dispatcher;
  switchboard::daemon::bind_core_methods(dispatcher, {1024});
  auto peer = std::make_shared<switchboard::testing::RecordingPeer>();
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})", peer);
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":2,"method":"ping"})", peer);
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":3,"method":"rpc.discover"})", peer);
  REQUIRE(peer->responses.size() == 3);
  CHECK(validator.validate_result("initialize", peer->responses[0].at("result")).empty());
  CHECK(validator.validate_result("ping", peer->responses[1].at("result")).empty());
  CHECK(validator.validate_result("rpc.discover", peer->responses[2].at("result")).empty());
  CHECK_FALSE(validator.validate_result("ping", json{{"ts", "soon"}}).empty());
}

}  // namespace schema_contract_tests
