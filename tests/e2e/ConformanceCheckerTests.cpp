#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "e2e/Conformance.h"

// The lifecycle checker the end-to-end scenarios run on every client's events must itself catch what it claims
// to: here it is fed hand-made event streams, one good and one per broken rule.

namespace conformance_checker_tests {

using Json = nlohmann::json;
using switchboard::testing::e2e::lifecycle_violations;

Json event(int seq, const std::string& type, Json data, const std::string& session = "s1") {
  return Json{{"seq", seq}, {"type", type}, {"sessionId", session}, {"data", std::move(data)}};
}

Json state(int seq, const std::string& value) { return event(seq, "session.state", {{"state", value}}); }

// running → turn → permission (awaiting_input, responding, resolved, running) → stop → idle.
std::vector<Json> good_turn() {
  return {state(1, "running"),
          event(2, "turn.started", {{"turnId", "t1"}, {"text", "hi"}}),
          event(3, "message.delta", {{"turnId", "t1"}, {"messageId", "m"}, {"kind", "text"}, {"text", "a"}}),
          event(4, "permission.requested", {{"request", {{"requestId", "p1"}}}}),
          state(5, "awaiting_input"),
          event(6, "permission.responding", {{"requestId", "p1"}}),
          event(7, "permission.resolved", {{"requestId", "p1"}, {"outcome", "allowed"}}),
          state(8, "running"),
          event(9, "turn.stopped", {{"turnId", "t1"}, {"stopReason", "end_turn"}}),
          state(10, "idle")};
}

TEST_CASE("conformance checker: a well-formed turn has no violations", "[conformance]") {
  CHECK(lifecycle_violations(good_turn()).empty());
  // A dead agent ends the turn with stopped instead of idle.
  auto died = good_turn();
  died.back() = state(10, "stopped");
  CHECK(lifecycle_violations(died).empty());
}

TEST_CASE("conformance checker: a turn started while idle is reported", "[conformance]") {
  auto events = good_turn();
  events[0] = state(1, "idle");
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("started while the session was 'idle'") != std::string::npos);
}

TEST_CASE("conformance checker: a stop not followed by idle is reported", "[conformance]") {
  auto events = good_turn();
  events.back() = state(10, "running");
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("not idle or stopped") != std::string::npos);
}

TEST_CASE("conformance checker: an event of a turn after its stop is reported", "[conformance]") {
  auto events = good_turn();
  events.push_back(event(11, "message.delta", {{"turnId", "t1"}, {"messageId", "m"}, {"kind", "text"}, {"text", "late"}}));
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("after its turn.stopped") != std::string::npos);
}

TEST_CASE("conformance checker: an open permission without awaiting_input is reported", "[conformance]") {
  auto events = good_turn();
  events[4] = state(5, "running");
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("open permission request") != std::string::npos);
}

TEST_CASE("conformance checker: a request resolved twice is reported", "[conformance]") {
  auto events = good_turn();
  events.insert(events.begin() + 7, event(7, "permission.resolved", {{"requestId", "p1"}, {"outcome", "denied"}}));
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("resolved twice") != std::string::npos);
}

TEST_CASE("conformance checker: a stop without a start is reported", "[conformance]") {
  std::vector<Json> events{state(1, "running"), event(2, "turn.stopped", {{"turnId", "t9"}, {"stopReason", "error"}}),
                           state(3, "idle")};
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("never started") != std::string::npos);
}

TEST_CASE("conformance checker: a message or tool event outside a started turn is reported", "[conformance]") {
  // An empty turnId: what a session published for an agent that was answering another session of ours.
  auto events = good_turn();
  events.insert(events.begin() + 3, event(3, "message.completed",
                                          {{"turnId", ""}, {"messageId", "m-2"}, {"role", "assistant"}, {"kind", "text"}, {"text", "x"}}));
  auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("not a started turn of session s1") != std::string::npos);

  // Another session's turn, running at the same time.
  std::vector<Json> two{state(1, "running"), event(2, "turn.started", {{"turnId", "t1"}, {"text", "hi"}})};
  two.push_back(event(3, "tool.started", {{"turnId", "t1"}, {"toolCallId", "c"}, {"tool", "Bash"}, {"input", Json::object()}}, "s2"));
  violations = lifecycle_violations(two);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("not a started turn of session s2") != std::string::npos);

  // Between two turns of the session.
  auto between = good_turn();
  between.push_back(event(11, "tool.output", {{"turnId", "t2"}, {"toolCallId", "c"}, {"text", "late"}}));
  violations = lifecycle_violations(between);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("none is running") != std::string::npos);
}

TEST_CASE("conformance checker: a message id used again in a later turn of the session is reported", "[conformance]") {
  auto events = good_turn();
  events.push_back(state(11, "running"));
  events.push_back(event(12, "turn.started", {{"turnId", "t2"}, {"text", "again"}}));
  events.push_back(event(13, "message.delta", {{"turnId", "t2"}, {"messageId", "m"}, {"kind", "text"}, {"text", "b"}}));
  events.push_back(event(14, "turn.stopped", {{"turnId", "t2"}, {"stopReason", "end_turn"}}));
  events.push_back(state(15, "idle"));
  const auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("message id m of turn t1 reused in turn t2") != std::string::npos);
  // The same id in another session is another message.
  auto other = good_turn();
  other.push_back(event(11, "session.state", {{"state", "running"}}, "s2"));
  other.push_back(event(12, "turn.started", {{"turnId", "t2"}, {"text", "hi"}}, "s2"));
  other.push_back(event(13, "message.completed", {{"turnId", "t2"}, {"messageId", "m"}, {"role", "assistant"}, {"kind", "text"}, {"text", "b"}}, "s2"));
  other.push_back(event(14, "turn.stopped", {{"turnId", "t2"}, {"stopReason", "end_turn"}}, "s2"));
  other.push_back(event(15, "session.state", {{"state", "idle"}}, "s2"));
  CHECK(lifecycle_violations(other).empty());
}

// The session-wide reports (plan, usage, commands, MCP status) and a rewind, as a session with two turns sees them.
std::vector<Json> two_turns_with_reports() {
  auto events = good_turn();
  events.insert(events.begin() + 3, event(3, "plan.updated", {{"turnId", "t1"}, {"entries", Json::array()}}));
  events.insert(events.begin() + 4, event(3, "usage.updated", {{"turnId", "t1"}, {"usage", {{"usedTokens", 10}}}}));
  events.push_back(event(11, "commands.updated", {{"commands", Json::array()}}));
  events.push_back(event(12, "mcp.status", {{"servers", Json::array()}}));
  events.push_back(event(13, "usage.updated", {{"usage", {{"usedTokens", 12}}}}));  // between turns: no turnId
  events.push_back(state(14, "running"));
  events.push_back(event(15, "turn.started", {{"turnId", "t2"}, {"text", "again"}}));
  events.push_back(event(16, "turn.stopped", {{"turnId", "t2"}, {"stopReason", "end_turn"}}));
  events.push_back(state(17, "idle"));
  events.push_back(event(18, "session.rewound",
                         {{"turnId", "t1"}, {"rewoundTurnIds", {"t1", "t2"}}, {"conversation", true}, {"files", false}}));
  return events;
}

TEST_CASE("conformance checker: plans, usage, commands, MCP status and a rewind between turns pass", "[conformance]") {
  CHECK(lifecycle_violations(two_turns_with_reports()).empty());
}

TEST_CASE("conformance checker: a plan or usage update naming a turn that is not running is reported", "[conformance]") {
  auto events = two_turns_with_reports();
  events[14] = event(13, "usage.updated", {{"turnId", "t9"}, {"usage", {{"usedTokens", 12}}}});
  auto violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("turn 't9' is not the running turn") != std::string::npos);
  // Another session's running turn is not this session's.
  events = two_turns_with_reports();
  events.insert(events.begin() + 17, event(15, "plan.updated", {{"turnId", "t2"}, {"entries", Json::array()}}, "s2"));
  violations = lifecycle_violations(events);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("not the running turn of session s2") != std::string::npos);
}

TEST_CASE("conformance checker: a rewind while a turn runs, of unknown turns, or twice is reported", "[conformance]") {
  auto running = two_turns_with_reports();
  running.erase(running.begin() + 17, running.begin() + 19);  // t2 has not stopped when the rewind comes
  auto violations = lifecycle_violations(running);
  CHECK(std::any_of(violations.begin(), violations.end(), [](const auto& v) { return v.find("a rewind while turn t2 runs") != std::string::npos; }));

  auto unknown = two_turns_with_reports();
  unknown.back()["data"]["rewoundTurnIds"] = {"t1", "t7"};
  violations = lifecycle_violations(unknown);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("rewound turn 't7' is not an ended turn of session s1") != std::string::npos);

  auto misnamed = two_turns_with_reports();
  misnamed.back()["data"]["rewoundTurnIds"] = {"t2"};
  violations = lifecycle_violations(misnamed);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("do not start with its turn t1") != std::string::npos);

  auto twice = two_turns_with_reports();
  twice.push_back(event(19, "session.rewound", {{"turnId", "t2"}, {"rewoundTurnIds", {"t2"}}, {"conversation", true}, {"files", false}}));
  violations = lifecycle_violations(twice);
  REQUIRE(violations.size() == 1);
  CHECK(violations[0].find("turn t2 rewound twice") != std::string::npos);
}

}  // namespace conformance_checker_tests
