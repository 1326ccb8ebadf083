#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/LoggedMethods.h"
#include "support/SchemaValidator.h"
#include "support/ScriptedAdapter.h"

// session.events over the daemon's real wiring: bus → egress → durable event log, read back through the one
// dispatcher, paged, with the schema's own envelope.

namespace history_methods_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
using Json = nlohmann::json;

TEST_CASE("session.events pages a session's stored transcript in seq order", "[store][history]") {
  testing::LoggedMethods f;
  const auto created = f.call("session.create", {{"agent", "scripted"}, {"cwd", f.dir.string()}});
  const std::string id = created.at("result").at("session").at("sessionId");
  const auto other = f.call("session.create", {{"agent", "scripted"}, {"cwd", f.dir.string()}});
  const std::string other_id = other.at("result").at("session").at("sessionId");
  f.control->turns.push_back({ScriptedAdapter::Delta{"Hel"}, ScriptedAdapter::Delta{"lo"}, ScriptedAdapter::Message{"Hello"},
                              ScriptedAdapter::End{}});
  REQUIRE(f.call("session.send", {{"sessionId", id}, {"text", "hi"}}).at("result").at("stopReason") == "end_turn");
  REQUIRE(f.call("session.send", {{"sessionId", other_id}, {"text", "elsewhere"}}).contains("result"));

  const auto all = f.call("session.events", {{"sessionId", id}, {"limit", 1000}});
  REQUIRE(all.contains("result"));
  const auto& events = all.at("result").at("events");
  testing::SchemaValidator validator;
  CHECK(validator.validate_result("session.events", all.at("result")).empty());
  CHECK_FALSE(all.at("result").contains("nextAfterSeq"));  // not a full page
  std::vector<std::string> types;
  std::int64_t previous = 0;
  for (const auto& event : events) {
    CHECK(event.at("sessionId") == id);  // only this session's events
    CHECK(event.at("seq").get<std::int64_t>() > previous);
    previous = event.at("seq");
    types.push_back(event.at("type"));
    CHECK(validator.validate_event(event).empty());
  }
  CHECK(types.front() == "session.created");
  CHECK(std::find(types.begin(), types.end(), "message.delta") != types.end());
  CHECK(types.back() == "session.state");

  // Pages of two: following nextAfterSeq yields the same events, none twice, none missed.
  std::vector<Json> paged;
  std::int64_t after = 0;
  for (int guard = 0; guard < 100; ++guard) {
    const auto page = f.call("session.events", {{"sessionId", id}, {"afterSeq", after}, {"limit", 2}});
    for (const auto& event : page.at("result").at("events")) paged.push_back(event);
    if (!page.at("result").contains("nextAfterSeq")) break;
    after = page.at("result").at("nextAfterSeq");
  }
  CHECK(Json(paged) == events);
}

TEST_CASE("session.events refuses unknown sessions and bad params with the field's path", "[store][history]") {
  testing::LoggedMethods f;
  CHECK(f.call("session.events", {{"sessionId", "s-nope"}}).at("error").at("code") == -32010);
  const auto bad = f.call("session.events", {{"sessionId", "s-nope"}, {"limit", 0}});
  CHECK(bad.at("error").at("code") == -32602);
  CHECK(bad.at("error").dump().find("/limit") != std::string::npos);
}

}  // namespace history_methods_tests
