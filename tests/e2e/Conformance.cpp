#include "e2e/Conformance.h"

#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "support/RawHttpClient.h"
#include "support/SchemaValidator.h"

namespace switchboard::testing::e2e {

namespace conformance_detail {

std::string data_string(const Json& event, const char* key) {
  const auto data = event.find("data");
  if (data == event.end() || !data->is_object()) return "";
  const auto value = data->find(key);
  return value != data->end() && value->is_string() ? value->get<std::string>() : "";
}

// The HTTP side of a daemon started with_http: a client authorised with the runtime file's token.
struct HttpSide {
  std::uint16_t port;
  std::string token;
  explicit HttpSide(const AgentWorld& world) {
    const auto runtime = world.runtime();
    REQUIRE(runtime.is_object());
    port = runtime.at("port").get<std::uint16_t>();
    token = runtime.at("token").get<std::string>();
  }
  std::string authorization() const { return "Authorization: Bearer " + token; }
};

}  // namespace conformance_detail

std::vector<std::string> lifecycle_violations(const std::vector<Json>& events) {
  std::vector<std::string> violations;
  struct SessionView {
    std::string state;                     // the last session.state seen
    bool expect_rest_after_stop = false;   // a turn.stopped waits for its idle/stopped
    std::set<std::string> open_requests;   // permission.requested not yet resolved
    bool expect_awaiting = false;          // a permission.requested waits for awaiting_input
    std::string running_turn;              // the turn started and not yet stopped, if any
    std::map<std::string, std::string> message_turns;  // message id -> the turn it belongs to
    std::set<std::string> turns;                       // the turns started in this session
    std::set<std::string> rewound_turns;               // undone by a session.rewound
  };
  std::map<std::string, SessionView> sessions;
  std::set<std::string> started_turns;
  std::set<std::string> stopped_turns;
  std::set<std::string> resolved_requests;
  for (const auto& event : events) {
    const std::string type = event.value("type", "");
    const std::string session_id = event.value("sessionId", "");
    const std::string where = " (seq " + std::to_string(event.value("seq", 0)) + ", " + type + ")";
    auto& view = sessions[session_id];
    const std::string turn_id = conformance_detail::data_string(event, "turnId");
    // session.rewound names a past turn of its session, by design; every other event names its own turn.
    if (!turn_id.empty() && stopped_turns.count(turn_id) != 0 && type != "turn.stopped" && type != "session.rewound") {
      violations.push_back("an event of turn " + turn_id + " after its turn.stopped" + where);
    }
    const bool activity = type == "message.delta" || type == "message.completed" || type == "tool.started" ||
                          type == "tool.output" || type == "tool.completed";
    // (A stopped turn's late event is reported above, once.)
    if (activity && stopped_turns.count(turn_id) == 0 && (turn_id.empty() || turn_id != view.running_turn)) {
      violations.push_back("turn '" + turn_id + "' is not a started turn of session " + session_id +
                           (view.running_turn.empty() ? " (none is running)" : " (turn " + view.running_turn + " is)") + where);
    }
    // What the agent reports about the session as a whole may come between turns (no turnId); with one, it is the
    // turn running in that session.
    const bool session_report = type == "plan.updated" || type == "usage.updated";
    if (session_report && !turn_id.empty() && stopped_turns.count(turn_id) == 0 && turn_id != view.running_turn) {
      violations.push_back("turn '" + turn_id + "' is not the running turn of session " + session_id +
                           (view.running_turn.empty() ? " (none is running)" : " (turn " + view.running_turn + " is)") + where);
    }
    if (type == "session.rewound") {
      // A rewind happens between turns, to turns of its own session that ended and were not rewound already.
      if (!view.running_turn.empty()) violations.push_back("a rewind while turn " + view.running_turn + " runs" + where);
      const auto rewound = event.contains("data") ? event["data"].value("rewoundTurnIds", Json::array()) : Json::array();
      if (!rewound.is_array() || rewound.empty() || rewound[0] != turn_id) {
        violations.push_back("session.rewound's rewoundTurnIds do not start with its turn " + turn_id + where);
      }
      for (const auto& rewound_turn : rewound) {
        const std::string id = rewound_turn.is_string() ? rewound_turn.get<std::string>() : "";
        if (view.turns.count(id) == 0 || stopped_turns.count(id) == 0) {
          violations.push_back("rewound turn '" + id + "' is not an ended turn of session " + session_id + where);
        } else if (!view.rewound_turns.insert(id).second) {
          violations.push_back("turn " + id + " rewound twice" + where);
        }
      }
    }
    if (type == "message.delta" || type == "message.completed") {
      const std::string message_id = conformance_detail::data_string(event, "messageId");
      const auto [first, inserted] = view.message_turns.emplace(message_id, turn_id);
      if (!inserted && first->second != turn_id) {
        violations.push_back("message id " + message_id + " of turn " + first->second + " reused in turn " + turn_id + where);
      }
    }
    if (type == "session.state") {
      const std::string state = conformance_detail::data_string(event, "state");
      if (view.expect_rest_after_stop && state != "idle" && state != "stopped") {
        violations.push_back("turn.stopped was followed by state " + state + ", not idle or stopped" + where);
      }
      if (view.expect_awaiting && state != "awaiting_input" && state != "idle" && state != "stopped") {
        violations.push_back("an open permission request was followed by state " + state + where);
      }
      view.expect_rest_after_stop = false;
      view.expect_awaiting = false;
      view.state = state;
    } else if (type == "turn.started") {
      if (view.state != "running") {
        violations.push_back("turn " + turn_id + " started while the session was '" + view.state + "'" + where);
      }
      started_turns.insert(turn_id);
      view.turns.insert(turn_id);
      view.running_turn = turn_id;
    } else if (type == "turn.stopped") {
      if (started_turns.count(turn_id) == 0) violations.push_back("turn " + turn_id + " stopped but never started" + where);
      if (!stopped_turns.insert(turn_id).second) violations.push_back("turn " + turn_id + " stopped twice" + where);
      view.expect_rest_after_stop = true;
      if (view.running_turn == turn_id) view.running_turn.clear();
      view.open_requests.clear();  // the engine tears down what the turn left open
      view.expect_awaiting = false;
    } else if (type == "permission.requested") {
      const auto& request = event["data"]["request"];
      const std::string request_id = request.value("requestId", "");
      view.open_requests.insert(request_id);
      view.expect_awaiting = true;
    } else if (type == "permission.responding") {
      const std::string request_id = conformance_detail::data_string(event, "requestId");
      if (resolved_requests.count(request_id) != 0) {
        violations.push_back("request " + request_id + " is responding after it was resolved" + where);
      }
    } else if (type == "permission.resolved") {
      const std::string request_id = conformance_detail::data_string(event, "requestId");
      if (!resolved_requests.insert(request_id).second) {
        violations.push_back("request " + request_id + " resolved twice" + where);
      }
      view.open_requests.erase(request_id);
    }
  }
  return violations;
}

Json send_allowing_everything(DaemonClient& client, const std::string& session_id, const std::string& text) {
  std::size_t at = client.events().size();
  const auto sent = client.send("session.send", {{"sessionId", session_id}, {"text", text}});
  for (;;) {
    const auto event = client.wait_event([&](const Json& e) {
      const std::string type = e.value("type", "");
      return e.value("sessionId", "") == session_id && (type == "permission.requested" || type == "turn.stopped");
    }, at);
    if (event.is_null() || event["type"] == "turn.stopped") break;
    const auto answered = client.call("permission.respond", {{"requestId", event["data"]["request"]["requestId"]},
                                                             {"decision", "allow_once"}});
    CHECK(answered.contains("result"));
  }
  const auto done = client.response(sent);
  INFO(done.dump());
  REQUIRE(done.contains("result"));
  return done["result"];
}

Json file_changing_turn(const AgentProfile& profile, const std::vector<FileChange>& changes, const std::string& text) {
  Json replies = Json::array();
  for (const auto& change : changes) {
    for (auto call : profile.change_file(change)) {
      if (!replies.empty()) call["match"] = profile.after_tool_output("")["match"];
      replies.push_back(std::move(call));
    }
  }
  replies.push_back(profile.after_tool_output(text));
  return replies;
}

void check_lifecycle(const AgentWorld& world) {
  const auto violations = lifecycle_violations(world.client->events());
  INFO(world.transcript());
  for (const auto& violation : violations) FAIL_CHECK(violation);
}

void scenario_streamed_turn(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("Hello from the mock", 4, 0)}), /*with_http=*/true);
  if (!world.ready()) return;
  world.start_daemon();
  const conformance_detail::HttpSide http(world);
  RawHttpClient sse(http.port);
  REQUIRE(sse.send_request("GET", "/events", {http.authorization()}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // the retry hint

  const auto id = world.create_session();
  const auto done = world.client->call("session.send", {{"sessionId", id}, {"text", "say hello"}});
  INFO(done.dump());
  REQUIRE(done.contains("result"));
  CHECK(done["result"]["stopReason"] == "end_turn");
  CHECK(done["result"]["text"] == "Hello from the mock");

  std::size_t at = 0;
  CHECK_FALSE(world.client->wait_event("message.delta", at).is_null());
  const auto completed = world.client->wait_event(
      [](const Json& e) { return e.value("type", "") == "message.completed" && e["data"].value("kind", "text") == "text"; }, at);
  REQUIRE_FALSE(completed.is_null());
  CHECK(completed["data"]["text"] == "Hello from the mock");
  CHECK_FALSE(world.client->wait_event("turn.stopped", at).is_null());

  // The SSE client saw the same events, byte for byte, through turn.stopped.
  const auto lines = world.client->event_lines();
  std::size_t matched = 0;
  for (;;) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto data = frame->substr(frame->find("data: ") + 6);
    REQUIRE(matched < lines.size());
    CHECK(data == lines[matched]);
    ++matched;
    if (Json::parse(data)["type"] == "turn.stopped") break;
  }
  CHECK(matched >= 5);
  check_lifecycle(world);
}

// What every agent's request for a shell command tells the user, whoever the agent: the command exactly as it
// will run (never re-quoted or split), and why the user is asked.
void check_command_request(const Json& request, const std::string& command) {
  CHECK(request["input"]["command"] == command);
  CHECK(request.value("description", "").find(command) != std::string::npos);
  CHECK_FALSE(request.value("reason", "").empty());
}

void scenario_permission_allowed(const AgentProfile& profile) {
  const std::string command = "touch created_by_tool.txt && echo made";
  AgentWorld world(profile, Json::array({profile.run_command(command), profile.after_tool_output("Done.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  const auto send = world.client->send("session.send", {{"sessionId", id}, {"text", "make the file"}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  const auto& request = asked["data"]["request"];
  CHECK(request["tool"] == profile.shell_tool);
  check_command_request(request, command);
  // The session waits for the client while the request is open.
  CHECK(world.client->call("session.get", {{"sessionId", id}})["result"]["session"]["state"] == "awaiting_input");
  const auto answer = world.client->call("permission.respond", {{"requestId", request["requestId"]}, {"decision", "allow_once"}});
  CHECK(answer.contains("result"));
  const auto tool = world.client->wait_event(
      [](const Json& e) { return e.value("type", "") == "tool.completed" && e["data"].value("output", "").find("made") != std::string::npos; }, at);
  REQUIRE_FALSE(tool.is_null());
  CHECK(tool["data"]["isError"] == false);
  const auto done = world.client->response(send);
  REQUIRE(done.contains("result"));
  CHECK(done["result"]["text"] == "Done.");
  CHECK(fs::exists(world.work / "created_by_tool.txt"));
  check_lifecycle(world);
}

void scenario_permission_denied_and_late_answer(const AgentProfile& profile) {
  const std::string command = "touch must_not_exist.txt && echo made";
  AgentWorld world(profile, Json::array({profile.run_command(command),
                                         profile.after_refused_tool("Understood, not running it.")}),
                   /*with_http=*/true);
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  const auto send = world.client->send("session.send", {{"sessionId", id}, {"text", "try it"}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  check_command_request(asked["data"]["request"], command);
  const std::string request_id = asked["data"]["request"]["requestId"];
  const std::string turn_id = asked["data"]["request"].value("turnId", "");
  const auto requests_at_ask = world.mock->message_requests().size();
  const auto answer = world.client->call("permission.respond", {{"requestId", request_id}, {"decision", "deny"}, {"message", "not now"}});
  CHECK(answer.contains("result"));

  // The browser answers too, late: first answer wins, and the loser is told so with -32002.
  const conformance_detail::HttpSide http(world);
  RawHttpClient browser(http.port);
  const auto late = browser.request("POST", "/rpc", {http.authorization(), "Content-Type: application/json"},
                                    Json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "permission.respond"},
                                         {"params", {{"requestId", request_id}, {"decision", "allow_once"}}}}
                                        .dump());
  CHECK(Json::parse(late.body)["error"]["code"] == -32002);

  const auto resolved = world.client->wait_event("permission.resolved", at);
  REQUIRE_FALSE(resolved.is_null());
  CHECK(resolved["data"]["outcome"] == "denied");
  const auto done = world.client->response(send);
  REQUIRE(done.contains("result"));
  // One rule for every agent: a deny is not a cancel. The turn ends as the agent ends it (end_turn), whether it
  // stops at the deny or the model answers it; the denial is the permission.resolved inside the turn, before its
  // turn.stopped.
  CHECK(done["result"]["stopReason"] == "end_turn");
  const auto stopped = world.client->wait_event(
      [&](const Json& e) { return e.value("type", "") == "turn.stopped" && e["data"].value("turnId", "") == turn_id; }, at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "end_turn");
  if (profile.deny_ends_turn) {
    // The agent stops at the deny: the turn ends there, and the model is not asked again.
    CHECK(world.mock->message_requests().size() == requests_at_ask);
  } else {
    CHECK(done["result"]["text"] == "Understood, not running it.");
  }
  CHECK_FALSE(fs::exists(world.work / "must_not_exist.txt"));
  check_lifecycle(world);
}

void scenario_cancel_while_permission_open(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch never_made.txt"),
                                         profile.when_last_prompt_contains("after the cancel", "Still here.")}),
                   /*with_http=*/true);
  if (!world.ready()) return;
  world.start_daemon();
  const conformance_detail::HttpSide http(world);
  RawHttpClient sse(http.port);
  REQUIRE(sse.send_request("GET", "/events", {http.authorization()}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // the retry hint

  const auto id = world.create_session(profile.asking_mode);
  world.client->send("session.send", {{"sessionId", id}, {"text", "try it"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  const std::string request_id = asked["data"]["request"]["requestId"];
  const auto cancelled = world.client->call("session.cancel", {{"sessionId", id}});
  CHECK(cancelled["result"]["cancelled"] == true);
  const auto resolved = world.client->wait_event("permission.resolved", at);
  REQUIRE_FALSE(resolved.is_null());
  CHECK(resolved["data"]["requestId"] == request_id);
  CHECK(resolved["data"]["outcome"] == "cancelled");
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "cancelled");

  // The SSE client was told the same, and its answer now comes too late.
  bool sse_saw_cancelled = false;
  for (;;) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto event = Json::parse(frame->substr(frame->find("data: ") + 6));
    if (event.value("type", "") != "permission.resolved") continue;
    sse_saw_cancelled = event["data"]["requestId"] == request_id && event["data"]["outcome"] == "cancelled";
    break;
  }
  CHECK(sse_saw_cancelled);
  RawHttpClient browser(http.port);
  const auto late = browser.request("POST", "/rpc", {http.authorization(), "Content-Type: application/json"},
                                    Json{{"jsonrpc", "2.0"}, {"id", 9}, {"method", "permission.respond"},
                                         {"params", {{"requestId", request_id}, {"decision", "allow_once"}}}}
                                        .dump());
  CHECK(Json::parse(late.body)["error"]["code"] == -32002);
  CHECK_FALSE(fs::exists(world.work / "never_made.txt"));

  // The agent stays usable.
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "are you there after the cancel?"}});
  INFO(again.dump());
  REQUIRE(again.contains("result"));
  CHECK(again["result"]["text"] == "Still here.");
  check_lifecycle(world);
}

void scenario_interrupt_mid_command(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch started.txt && sleep 97531"),
                                         profile.when_last_prompt_contains("still there", "Yes.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);
  world.client->send("session.send", {{"sessionId", id}, {"text", "sleep a long time"}, {"wait", false}});
  std::size_t at = 0;
  const auto asked = world.client->wait_event("permission.requested", at);
  INFO(world.transcript());
  REQUIRE_FALSE(asked.is_null());
  world.client->call("permission.respond", {{"requestId", asked["data"]["request"]["requestId"]}, {"decision", "allow_once"}});
  REQUIRE(eventually([] { return !processes_matching("sleep 97531").empty(); }, kCliPatience, kProcessScanInterval));

  const auto cancelled = world.client->call("session.cancel", {{"sessionId", id}});
  CHECK(cancelled["result"]["cancelled"] == true);
  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "cancelled");
  CHECK(eventually([] { return processes_matching("sleep 97531").empty(); }, kCliPatience, kProcessScanInterval));

  // The agent stays usable after an interrupt.
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "are you still there?"}});
  INFO(again.dump());
  REQUIRE(again.contains("result"));
  CHECK(again["result"]["text"] == "Yes.");
  check_lifecycle(world);
}

void scenario_queued_prompt(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("first answer, slowly", 8, 150),
                                         profile.when_last_prompt_contains("second prompt", "second answer")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto first = world.client->send("session.send", {{"sessionId", id}, {"text", "first prompt"}});
  std::size_t at = 0;
  REQUIRE_FALSE(world.client->wait_event("turn.started", at).is_null());
  const auto queued = world.client->call("session.send", {{"sessionId", id}, {"text", "second prompt"}, {"wait", false}});
  CHECK(queued["result"]["queued"] == true);
  CHECK_FALSE(world.client->wait_event("turn.queued", at).is_null());
  CHECK(world.client->response(first)["result"]["text"] == "first answer, slowly");
  const auto second_started = world.client->wait_event("turn.started", at);
  REQUIRE_FALSE(second_started.is_null());
  CHECK(second_started["data"]["text"] == "second prompt");
  const std::string second_turn = second_started["data"]["turnId"];
  const auto second_stopped = world.client->wait_event(
      [&](const Json& e) { return e.value("type", "") == "turn.stopped" && e["data"]["turnId"] == second_turn; }, at);
  REQUIRE_FALSE(second_stopped.is_null());
  CHECK(second_stopped["data"]["text"] == "second answer");
  check_lifecycle(world);
}

void scenario_restart_and_resume(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("I will remember banana.", 1, 0),
                                         profile.when_any_prompt_contains("remember the word banana", "The word was banana.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "remember the word banana"}})["result"]["text"] ==
          "I will remember banana.");

  world.restart();
  const auto listed = world.client->call("session.list");
  REQUIRE(listed["result"]["sessions"].size() == 1);
  CHECK(listed["result"]["sessions"][0]["sessionId"] == id);
  CHECK(listed["result"]["sessions"][0]["live"] == false);
  const auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "what was the word?"}});
  INFO(resumed.dump());
  REQUIRE(resumed.contains("result"));
  CHECK(resumed["result"]["text"] == "The word was banana.");
  // The mock saw the earlier exchange in the resumed conversation.
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"].dump().find("remember the word banana") != std::string::npos);
  check_lifecycle(world);
}

namespace conformance_detail {

// The script both quit-right-after-a-turn scenarios run: a turn to remember, and the answer only a resumed
// conversation can give (the mock matches any earlier prompt of the conversation it is sent).
Json remembering_turns(const AgentProfile& profile) {
  return Json::array({profile.text("I will remember banana.", 1, 0),
                      profile.when_any_prompt_contains("remember the word banana", "The word was banana.")});
}

// After a restart: the session is cold and resumes its conversation with no error on the way.
void check_resumes_after_restart(AgentWorld& world, const std::string& id) {
  std::size_t at = world.client->events().size();
  const auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "what was the word?"}});
  INFO(resumed.dump());
  INFO(world.transcript());
  REQUIRE(resumed.contains("result"));
  CHECK(resumed["result"]["stopReason"] == "end_turn");
  CHECK(resumed["result"]["text"] == "The word was banana.");
  const auto error = world.client->wait_event("agent.error", at, std::chrono::milliseconds(200));
  CHECK(error.is_null());
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"].dump().find("remember the word banana") != std::string::npos);
  check_lifecycle(world);
}

// daemon.shutdown is the last event, and the sessions stopped by the shutdown said so before it.
void check_stream_ends_with_shutdown(const std::vector<Json>& events, const std::string& id) {
  std::vector<std::string> types;
  for (const auto& event : events) types.push_back(event.value("type", "") + (event.value("type", "") == "session.state" ? ":" + data_string(event, "state") : ""));
  INFO(Json(types).dump());
  REQUIRE_FALSE(types.empty());
  CHECK(types.back() == "daemon.shutdown");
  bool stopped = false;
  for (const auto& event : events) {
    stopped = stopped || (event.value("type", "") == "session.state" && event.value("sessionId", "") == id &&
                          data_string(event, "state") == "stopped");
  }
  CHECK(stopped);
}

}  // namespace conformance_detail

void scenario_shutdown_right_after_turn(const AgentProfile& profile) {
  AgentWorld world(profile, conformance_detail::remembering_turns(profile));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  const auto done = world.client->call("session.send", {{"sessionId", id}, {"text", "remember the word banana"}});
  REQUIRE(done["result"]["text"] == "I will remember banana.");
  // The client quits at once, as a TUI user who closes it the moment the answer is shown.
  world.client->close_stdin();
  REQUIRE(world.client->daemon().wait(std::chrono::seconds(40)) == 0);
  conformance_detail::check_stream_ends_with_shutdown(world.client->events(), id);
  world.validate_events();
  world.client.reset();
  CHECK(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
  world.start_daemon();
  conformance_detail::check_resumes_after_restart(world, id);
}

void scenario_sigterm_right_after_turn(const AgentProfile& profile) {
  AgentWorld world(profile, conformance_detail::remembering_turns(profile));
  if (!world.ready()) return;
  std::string id;
  {
    auto serve = world.spawn_serve();
    Json runtime;
    REQUIRE(eventually([&] {
      runtime = world.runtime();
      return runtime.is_object() && runtime.contains("port");
    }, kCliPatience, kProcessScanInterval));
    const std::string authorization = "Authorization: Bearer " + runtime.at("token").get<std::string>();
    const auto port = runtime.at("port").get<std::uint16_t>();
    RawHttpClient sse(port, 60000);
    REQUIRE(sse.send_request("GET", "/events", {authorization}));
    RawHttpClient::Response head;
    REQUIRE(sse.read_head(head));
    std::vector<Json> events;
    const auto next_event = [&]() -> Json {
      while (auto frame = sse.read_frame()) {
        const auto data = frame->find("data: ");
        if (data == std::string::npos) continue;
        events.push_back(Json::parse(frame->substr(data + 6)));
        return events.back();
      }
      return nullptr;
    };
    const auto post = [&](const std::string& method, const Json& params) {
      RawHttpClient rpc(port, 60000);
      rpc.request("POST", "/rpc", {authorization, "Content-Type: application/json"},
                  Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}.dump());
    };
    // The session's id and the turn's end are read from the event stream, as a browser sees them.
    post("session.create", {{"agent", profile.agent}, {"cwd", world.work.string()}});
    for (Json event; (event = next_event()).is_object();) {
      if (event.value("type", "") == "session.created") {
        id = event.value("sessionId", "");
        break;
      }
    }
    REQUIRE_FALSE(id.empty());
    post("session.send", {{"sessionId", id}, {"text", "remember the word banana"}, {"wait", false}});
    Json stopped;
    for (Json event; (event = next_event()).is_object();) {
      if (event.value("type", "") == "turn.stopped") {
        stopped = event;
        break;
      }
    }
    INFO(Json(events).dump());
    REQUIRE(stopped.is_object());
    REQUIRE(stopped["data"].value("text", "") == "I will remember banana.");
    // Stopped at once, as a service manager stops it.
    ::kill(serve->pid(), SIGTERM);
    while (next_event().is_object()) {
    }
    CHECK(serve->wait(std::chrono::seconds(40)) == 0);
    conformance_detail::check_stream_ends_with_shutdown(events, id);
  }
  CHECK(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
  world.start_daemon();
  conformance_detail::check_resumes_after_restart(world, id);
}

void scenario_conversation_gone(const AgentProfile& profile) {
  auto turns = conformance_detail::remembering_turns(profile);
  // The third request must come from the new conversation, resumed: it holds the second prompt.
  turns.push_back(profile.when_any_prompt_contains("what was the word", "Still here."));
  AgentWorld world(profile, turns);
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "remember the word banana"}})["result"]["text"] ==
          "I will remember banana.");
  world.restart();
  profile.forget_conversations(world.tmp.path() / "home", world.tmp.path() / "data");
  std::size_t at = 0;
  const auto answered = world.client->call("session.send", {{"sessionId", id}, {"text", "what was the word?"}});
  INFO(answered.dump());
  INFO(world.transcript());
  REQUIRE(answered.contains("result"));
  CHECK(answered["result"]["stopReason"] == "end_turn");
  CHECK(answered["result"]["text"] == "The word was banana.");
  const auto lost = world.client->wait_event("agent.error", at, std::chrono::seconds(1));
  REQUIRE_FALSE(lost.is_null());
  CHECK(lost["data"]["code"] == -32020);
  CHECK(lost["data"]["recoverable"] == true);
  // The new conversation was told the earlier exchange, and the client saw only what it sent.
  const auto requests = world.mock->message_requests();
  REQUIRE_FALSE(requests.empty());
  CHECK(requests.back()["body"].dump().find("remember the word banana") != std::string::npos);
  for (const auto& event : world.client->events()) {
    if (event.value("type", "") == "turn.started") CHECK(conformance_detail::data_string(event, "text") == "what was the word?");
  }
  // It is the session's conversation from now on: after another restart it resumes without a word of loss.
  world.restart();
  at = world.client->events().size();
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "and once more?"}});
  INFO(again.dump());
  CHECK(again["result"]["stopReason"] == "end_turn");
  CHECK(again["result"]["text"] == "Still here.");
  CHECK(world.client->wait_event("agent.error", at, std::chrono::milliseconds(200)).is_null());
  check_lifecycle(world);
}

void scenario_killed_cli(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("a long slow answer that will not finish", 40, 250),
                                         profile.when_last_prompt_contains("come back", "Back again.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  world.client->send("session.send", {{"sessionId", id}, {"text", "talk slowly"}, {"wait", false}});
  std::size_t at = 0;
  REQUIRE_FALSE(world.client->wait_event("message.delta", at).is_null());
  const auto clis = world.cli_processes();
  INFO(world.transcript());
  REQUIRE(clis.size() == 1);
  ::kill(clis[0], SIGKILL);  // the CLI alone, as the OOM killer would: not its group

  const auto stopped = world.client->wait_event("turn.stopped", at);
  REQUIRE_FALSE(stopped.is_null());
  CHECK(stopped["data"]["stopReason"] == "error");
  const auto state = world.client->wait_event(
      [&](const Json& e) { return e.value("type", "") == "session.state" && e["data"]["state"] == "stopped"; }, at);
  CHECK_FALSE(state.is_null());
  // Whatever the CLI had started (a native binary behind a node wrapper, say) went with it.
  CHECK(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
  CHECK(world.client->call("ping").contains("result"));
  // The next send starts a fresh CLI, which resumes the conversation.
  const auto again = world.client->call("session.send", {{"sessionId", id}, {"text", "come back"}});
  INFO(again.dump());
  CHECK(again["result"]["text"] == "Back again.");
  check_lifecycle(world);
}

namespace conformance_detail {

// The agent's one conversation that history.list shows for `where`, once it is there: CLIs write their history
// through buffers they flush on their own schedule, so the file (and the assistant's line in it) may appear a
// moment after the turn's result was reported.
std::string only_listed_conversation(AgentWorld& world, const Json& where) {
  Json listed;
  CHECK(eventually([&] {
    listed = world.client->call("history.list", where);
    return listed.contains("result") && !listed["result"]["sessions"].empty();
  }, std::chrono::seconds(15), kProcessScanInterval));
  INFO(listed.dump());
  REQUIRE(listed.contains("result"));
  REQUIRE(listed["result"]["sessions"].size() == 1);
  return listed["result"]["sessions"][0]["providerSessionId"];
}

}  // namespace conformance_detail

void scenario_history_import(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.text("Noted: the colour is teal.", 1, 0),
                                         profile.when_any_prompt_contains("the colour is teal", "It was teal.")}));
  if (!world.ready()) return;
  world.start_daemon();
  // A conversation the CLI recorded in its own history (made here through a first session of ours).
  const auto first = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", first}, {"text", "remember: the colour is teal"}})["result"]["text"] ==
          "Noted: the colour is teal.");
  const Json where{{"agent", profile.agent}, {"cwd", world.work.string()}};
  const std::string provider_id = conformance_detail::only_listed_conversation(world, where);
  Json read;
  auto read_params = where;
  read_params["providerSessionId"] = provider_id;
  CHECK(eventually([&] {
    read = world.client->call("history.read", read_params);
    return read.contains("result") && read["result"]["events"].dump().find("Noted: the colour is teal.") != std::string::npos;
  }, std::chrono::seconds(15), kProcessScanInterval));
  INFO(read.dump());
  CHECK(read["result"]["skippedLines"] == 0);
  CHECK(read["result"]["events"].dump().find("remember: the colour is teal") != std::string::npos);

  // The session that made the conversation is deleted first: the import continues the conversation itself. (While
  // a session of ours continues it, an import makes a fork instead: scenario_import_live_conversation.)
  REQUIRE(world.client->call("session.delete", {{"sessionId", first}}).contains("result"));
  const auto imported = world.client->call("session.import", read_params);
  INFO(imported.dump());
  REQUIRE(imported.contains("result"));
  const std::string id = imported["result"]["session"]["sessionId"];
  CHECK(id != first);
  const auto resumed = world.client->call("session.send", {{"sessionId", id}, {"text", "which colour?"}});
  INFO(resumed.dump());
  CHECK(resumed["result"]["text"] == "It was teal.");
  check_lifecycle(world);
}

namespace conformance_detail {

// The events of one session in a client's stream, from `from` on.
std::vector<Json> events_of(const std::vector<Json>& events, const std::string& session_id, std::size_t from = 0) {
  std::vector<Json> out;
  for (std::size_t i = from; i < events.size(); ++i) {
    if (events[i].value("sessionId", "") == session_id) out.push_back(events[i]);
  }
  return out;
}

// The text of the session's completed assistant messages (kind text), in order.
std::vector<std::string> answers_in(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (const auto& event : events) {
    if (event.value("type", "") == "message.completed" && event["data"].value("kind", "text") == "text") out.push_back(data_string(event, "text"));
  }
  return out;
}

}  // namespace conformance_detail

void scenario_import_live_conversation(const AgentProfile& profile) {
  // Each later reply answers one session's prompt, and only a request that carries the earlier exchange.
  const auto answer = [&](const std::string& prompt, const std::string& text) {
    return Json{{"match", {{"last_user_text_contains", prompt}, {"any_user_text_contains", "the colour is teal"}}},
                {"reply", {{"text", text}}}};
  };
  AgentWorld world(profile, Json::array({profile.text("Noted: the colour is teal.", 1, 0)}), /*with_http=*/false,
                   Json::array({answer("copy: which colour", "The copy says teal."),
                                answer("original: which colour", "The original says teal.")}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto original = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", original}, {"text", "remember: the colour is teal"}})["result"]["text"] ==
          "Noted: the colour is teal.");
  const Json where{{"agent", profile.agent}, {"cwd", world.work.string()}};
  auto import_params = where;
  import_params["providerSessionId"] = conformance_detail::only_listed_conversation(world, where);

  // The original is live and continues that conversation: the import makes a fork of it, or, for an agent that
  // cannot fork, is refused. Either way no conversation is driven by two sessions.
  std::optional<bool> can_fork;
  const auto agents = world.client->call("agents.list");
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent["agent"] == profile.agent) can_fork = agent["capabilities"].value("fork", false);
  }
  INFO(agents.dump());
  REQUIRE(can_fork == profile.forks);
  const auto imported = world.client->call("session.import", import_params);
  INFO(imported.dump());
  INFO(world.transcript());
  if (!profile.forks) {
    REQUIRE(imported.contains("error"));
    CHECK(imported["error"]["code"] == -32021);
    CHECK(imported["error"]["message"].get<std::string>().find(original) != std::string::npos);
  } else {
    REQUIRE(imported.contains("result"));
    const std::string copy = imported["result"]["session"]["sessionId"];
    const std::size_t copy_from = world.client->events().size();
    const auto copied = world.client->call("session.send", {{"sessionId", copy}, {"text", "copy: which colour?"}});
    INFO(copied.dump());
    REQUIRE(copied.contains("result"));
    CHECK(copied["result"]["text"] == "The copy says teal.");
    const auto copy_events = conformance_detail::events_of(world.client->events(), copy, copy_from);
    INFO(Json(copy_events).dump());
    CHECK(conformance_detail::answers_in(copy_events) == std::vector<std::string>{"The copy says teal."});
  }

  // The original answers in its own conversation, which never heard the copy's prompt, and its reply reaches
  // the original alone.
  const std::size_t original_from = world.client->events().size();
  const auto answered = world.client->call("session.send", {{"sessionId", original}, {"text", "original: which colour?"}});
  INFO(answered.dump());
  REQUIRE(answered.contains("result"));
  CHECK(answered["result"]["stopReason"] == "end_turn");
  CHECK(answered["result"]["text"] == "The original says teal.");
  const auto& events = world.client->events();
  CHECK(conformance_detail::answers_in(conformance_detail::events_of(events, original, original_from)) ==
        std::vector<std::string>{"The original says teal."});
  for (std::size_t i = original_from; i < events.size(); ++i) {
    if (events[i].value("sessionId", "") != original) CHECK(events[i].dump().find("The original says teal.") == std::string::npos);
  }
  bool original_request_seen = false;
  for (const auto& request : world.mock->message_requests()) {
    const auto body = request["body"].dump();
    if (body.find("original: which colour") == std::string::npos) continue;
    original_request_seen = true;
    CHECK(body.find("copy: which colour") == std::string::npos);
  }
  CHECK(original_request_seen);
  check_lifecycle(world);
}

void scenario_missing_cli(const AgentProfile& profile) {
  TempDir tmp{"e2e"};
  DaemonClient client({"--log-level", "off", "stdio", "--data-dir", (tmp.path() / "data").string()},
                      {profile.cli_variable + "=/nonexistent/" + profile.cli_name}, profile.daemon_binary);
  REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "e2e"}}}}).contains("result"));
  const auto agents = client.call("agents.list");
  REQUIRE(agents.contains("result"));
  Json entry;
  for (const auto& agent : agents["result"]["agents"]) {
    if (agent["agent"] == profile.agent) entry = agent;
  }
  INFO(agents.dump());
  REQUIRE(entry.is_object());
  CHECK(entry["installed"] == false);
  CHECK(entry["problem"].get<std::string>().find("not found") != std::string::npos);
  // What a client offers in its mode picker does not depend on the CLI being there.
  if (!profile.modes.empty()) CHECK(entry["modes"] == Json(profile.modes));
  const auto created = client.call("session.create", {{"agent", profile.agent}, {"cwd", tmp.path().string()}});
  INFO(created.dump());
  CHECK(created["error"]["code"] == -32013);
  CHECK(created["error"]["message"].get<std::string>().find(profile.cli_name) != std::string::npos);
}

namespace conformance_detail {

// The conversation a model request carries, whatever the provider's API: the Responses API's `input`, the Chat
// Completions' and Anthropic's `messages` (the system prompt and tool list left out, so words in them match nothing).
std::string conversation_of(const Json& request) {
  const auto& body = request["body"];
  std::string text;
  for (const char* key : {"input", "messages"}) {
    if (body.contains(key)) text += body[key].dump() + "\n";
  }
  return text;
}

// The model requests the conversation made so far: the profile's side requests left out.
std::vector<Json> conversation_requests(AgentWorld& world) {
  auto requests = world.mock->message_requests();
  if (world.profile.side_request) {
    requests.erase(std::remove_if(requests.begin(), requests.end(), world.profile.side_request), requests.end());
  }
  return requests;
}

std::string last_conversation(AgentWorld& world) {
  const auto requests = conversation_requests(world);
  REQUIRE_FALSE(requests.empty());
  return conversation_of(requests.back());
}

std::string turn_of(const Json& sent) {
  INFO(sent.dump());
  REQUIRE(sent.contains("result"));
  return sent["result"].value("turnId", "");
}

// A new session of `world` that has answered "alpha prompt" with "one" and "beta prompt" with "two" (the world's
// first two scripted turns): its id and the first send's answer.
std::pair<std::string, Json> alpha_and_beta(AgentWorld& world) {
  const auto id = world.create_session();
  auto first = world.client->call("session.send", {{"sessionId", id}, {"text", "alpha prompt"}});
  REQUIRE(first["result"]["text"] == "one");
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "beta prompt"}})["result"]["text"] == "two");
  return {id, std::move(first)};
}

}  // namespace conformance_detail

void scenario_fork_at_turn(const AgentProfile& profile) {
  using namespace conformance_detail;
  AgentWorld world(profile, Json::array({profile.text("one", 1, 0), profile.text("two", 1, 0),
                                         profile.text("forked answer", 1, 0), profile.text("original answer", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto [id, first] = alpha_and_beta(world);

  const auto forked = world.client->call("session.fork", {{"sessionId", id}, {"turnId", turn_of(first)}});
  INFO(forked.dump() << "\n" << world.transcript());
  REQUIRE(forked.contains("result"));
  const std::string fork_id = forked["result"]["session"]["sessionId"];
  CHECK(forked["result"]["session"]["forkedFrom"] == Json{{"sessionId", id}, {"turnId", turn_of(first)}});
  REQUIRE(world.client->call("session.send", {{"sessionId", fork_id}, {"text", "gamma prompt"}})["result"]["text"] == "forked answer");
  CHECK(conversation_requests(world).size() == 3);  // the fork asked the model once, nothing replayed
  const std::string sent = last_conversation(world);
  CHECK(sent.find("alpha prompt") != std::string::npos);
  CHECK(sent.find("\"one\"") != std::string::npos);  // the answer, as a JSON string of the request
  CHECK(sent.find("beta prompt") == std::string::npos);
  CHECK(sent.find("\"two\"") == std::string::npos);
  CHECK(sent.find("gamma prompt") != std::string::npos);

  // The original goes on with its whole conversation, and none of the fork's.
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "delta prompt"}})["result"]["text"] == "original answer");
  const std::string original = last_conversation(world);
  CHECK(original.find("beta prompt") != std::string::npos);
  CHECK(original.find("gamma prompt") == std::string::npos);
  check_lifecycle(world);
}

void scenario_fork_of_lost_conversation(const AgentProfile& profile) {
  using namespace conformance_detail;
  AgentWorld world(profile, Json::array({profile.text("one", 1, 0), profile.text("two", 1, 0),
                                         profile.text("forked answer", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto [id, first] = alpha_and_beta(world);
  world.restart();
  profile.forget_conversations(world.tmp.path() / "home", world.tmp.path() / "data");

  const auto forked = world.client->call("session.fork", {{"sessionId", id}, {"turnId", turn_of(first)}});
  INFO(forked.dump() << "\n" << world.transcript());
  REQUIRE(forked.contains("result"));
  const std::string fork_id = forked["result"]["session"]["sessionId"];
  std::size_t at = world.client->events().size();
  const auto answered = world.client->call("session.send", {{"sessionId", fork_id}, {"text", "gamma prompt"}});
  INFO(answered.dump());
  INFO(world.transcript());
  REQUIRE(answered.contains("result"));
  REQUIRE(answered["result"].value("stopReason", "") == "end_turn");
  CHECK(answered["result"].value("text", "") == "forked answer");
  const auto lost = world.client->wait_event("agent.error", at, std::chrono::seconds(1));
  REQUIRE_FALSE(lost.is_null());
  CHECK(lost.value("sessionId", "") == fork_id);
  CHECK(lost["data"]["code"] == -32020);
  const std::string sent = last_conversation(world);
  CHECK(sent.find("alpha prompt") != std::string::npos);
  CHECK(sent.find("Assistant: one") != std::string::npos);  // the seed's transcript of the first turn
  CHECK(sent.find("beta prompt") == std::string::npos);
  CHECK(sent.find("Assistant: two") == std::string::npos);
  CHECK(sent.find("gamma prompt") != std::string::npos);
  check_lifecycle(world);
}

void scenario_rewind_past_turn(const AgentProfile& profile) {
  using namespace conformance_detail;
  AgentWorld world(profile, Json::array({profile.text("one", 1, 0), profile.text("two", 1, 0), profile.text("three", 1, 0),
                                         profile.text("after the rewind", 1, 0), profile.text("after the restart", 1, 0)}));
  if (!world.ready()) return;
  world.start_daemon();
  const auto id = world.create_session();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "alpha prompt"}})["result"]["text"] == "one");
  const auto second = world.client->call("session.send", {{"sessionId", id}, {"text", "beta prompt"}});
  REQUIRE(second["result"]["text"] == "two");
  const auto third = world.client->call("session.send", {{"sessionId", id}, {"text", "gamma prompt"}});
  REQUIRE(third["result"]["text"] == "three");

  const auto rewound = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", turn_of(second)}, {"conversation", true}});
  INFO(rewound.dump() << "\n" << world.transcript());
  REQUIRE(rewound.contains("result"));
  CHECK(rewound["result"]["rewoundTurnIds"] == Json::array({turn_of(second), turn_of(third)}));
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "delta prompt"}})["result"]["text"] == "after the rewind");
  CHECK(conversation_requests(world).size() == 4);  // the rewind itself asked the model nothing
  const std::string sent = last_conversation(world);
  CHECK(sent.find("\"three\"") == std::string::npos);
  CHECK(sent.find("alpha prompt") != std::string::npos);
  CHECK(sent.find("beta prompt") == std::string::npos);
  CHECK(sent.find("gamma prompt") == std::string::npos);
  CHECK(sent.find("delta prompt") != std::string::npos);
  // A rewound turn is no rewind point any more.
  const auto again = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", turn_of(second)}});
  CHECK(again["error"]["code"] == -32023);
  check_lifecycle(world);

  // After a daemon restart the session resumes the conversation the rewind left.
  world.restart();
  REQUIRE(world.client->call("session.send", {{"sessionId", id}, {"text", "epsilon prompt"}})["result"]["text"] == "after the restart");
  const std::string resumed = last_conversation(world);
  CHECK(resumed.find("delta prompt") != std::string::npos);
  CHECK(resumed.find("beta prompt") == std::string::npos);
}

namespace conformance_detail {

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A session.diff or files rewind answer's files, by path.
std::map<std::string, Json> files_by_path(const Json& answer) {
  INFO(answer.dump());
  REQUIRE(answer.contains("result"));
  std::map<std::string, Json> files;
  for (const auto& file : answer["result"]["files"]) files[file.value("path", "")] = file;
  return files;
}

std::vector<std::string> paths_in(const std::map<std::string, Json>& files) {
  std::vector<std::string> paths;
  for (const auto& [path, file] : files) paths.push_back(path);
  return paths;
}

// A file's entry in a diff: its status, and its unified diff, which names the file and (past git's header, whose
// index line holds object ids) is exactly `hunks`, from the "--- " line on.
void check_file_diff(const std::map<std::string, Json>& files, const std::string& path, const std::string& status,
                     const std::string& hunks) {
  const auto file = files.find(path);
  REQUIRE(file != files.end());
  INFO(file->second.dump());
  CHECK(file->second["status"] == status);
  CHECK(file->second.value("binary", false) == false);
  const std::string diff = file->second.value("diff", "");
  CHECK(diff.rfind("diff --git a/" + path + " b/" + path + "\n", 0) == 0);
  const auto body = diff.find("\n--- ");
  REQUIRE(body != std::string::npos);
  CHECK(diff.substr(body + 1) == hunks);
}

}  // namespace conformance_detail

void scenario_file_rewind_and_diff(const AgentProfile& profile) {
  using namespace conformance_detail;
  if (!profile.change_file) {
    WARN("SKIPPED: " << profile.agent << " cannot be made to write files against the mock provider");
    return;
  }
  const std::string original = "first line\nsecond line\nthird line\n";
  const std::string after_first = "first line\nsecond line, edited once\nthird line\n";
  const std::string after_second = "first line\nsecond line, edited once\nthird line, edited twice\n";
  const std::string added = "made in turn one\n";
  auto turns = file_changing_turn(profile, {{"added.txt", "", "made in turn one"}, {"notes.txt", "second line", "second line, edited once"}},
                                  "Wrote and edited.");
  for (auto& reply : file_changing_turn(profile, {{"notes.txt", "third line", "third line, edited twice"}}, "Edited again.")) {
    turns.push_back(std::move(reply));
  }
  AgentWorld world(profile, turns);
  if (!world.ready()) return;
  std::ofstream(world.work / "notes.txt", std::ios::binary) << original;
  std::ofstream(world.work / "untouched.txt", std::ios::binary) << "left alone\n";
  world.start_daemon();
  const auto id = world.create_session(profile.asking_mode);

  const auto first = send_allowing_everything(*world.client, id, "write added.txt and edit notes.txt");
  INFO(world.transcript());
  CHECK(first["text"] == "Wrote and edited.");
  REQUIRE(file_bytes(world.work / "added.txt") == added);
  REQUIRE(file_bytes(world.work / "notes.txt") == after_first);
  const auto second = send_allowing_everything(*world.client, id, "edit notes.txt again");
  CHECK(second["text"] == "Edited again.");
  REQUIRE(file_bytes(world.work / "notes.txt") == after_second);
  const std::string first_turn = first.value("turnId", "");
  const std::string second_turn = second.value("turnId", "");

  // Each turn's diff lists exactly what it changed, and the session's diff both turns' change together.
  const auto first_diff = files_by_path(world.client->call("session.diff", {{"sessionId", id}, {"turnId", first_turn}}));
  CHECK(paths_in(first_diff) == std::vector<std::string>{"added.txt", "notes.txt"});
  check_file_diff(first_diff, "added.txt", "added", "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+made in turn one\n");
  check_file_diff(first_diff, "notes.txt", "modified",
                  "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n first line\n-second line\n+second line, edited once\n third line\n");
  const auto second_diff = files_by_path(world.client->call("session.diff", {{"sessionId", id}, {"turnId", second_turn}}));
  CHECK(paths_in(second_diff) == std::vector<std::string>{"notes.txt"});
  check_file_diff(second_diff, "notes.txt", "modified",
                  "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n first line\n second line, edited once\n-third line\n+third line, edited twice\n");
  const auto whole_diff = files_by_path(world.client->call("session.diff", {{"sessionId", id}}));
  CHECK(paths_in(whole_diff) == std::vector<std::string>{"added.txt", "notes.txt"});
  check_file_diff(whole_diff, "added.txt", "added", "--- /dev/null\n+++ b/added.txt\n@@ -0,0 +1 @@\n+made in turn one\n");
  check_file_diff(whole_diff, "notes.txt", "modified",
                  "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n first line\n-second line\n-third line\n"
                  "+second line, edited once\n+third line, edited twice\n");

  // The files alone go back to before the second turn; the conversation is left as it is.
  std::size_t at = world.client->events().size();
  const auto rewound_second = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", second_turn}, {"conversation", false}, {"files", true}});
  CHECK(paths_in(files_by_path(rewound_second)) == std::vector<std::string>{"notes.txt"});
  CHECK(rewound_second["result"]["rewoundTurnIds"] == Json::array({second_turn}));
  CHECK(rewound_second["result"]["checkpointId"].is_string());
  CHECK(file_bytes(world.work / "notes.txt") == after_first);
  CHECK(file_bytes(world.work / "added.txt") == added);
  CHECK(file_bytes(world.work / "untouched.txt") == "left alone\n");
  const auto announced = world.client->wait_event("session.rewound", at, std::chrono::seconds(10));
  REQUIRE_FALSE(announced.is_null());
  CHECK(announced["sessionId"] == id);
  CHECK(announced["data"]["turnId"] == second_turn);
  CHECK(announced["data"]["rewoundTurnIds"] == Json::array({second_turn}));
  CHECK(announced["data"]["files"] == true);
  CHECK(announced["data"]["conversation"] == false);

  // A files rewind of the first turn removes the file it made and restores the one it edited.
  const auto rewound_first = world.client->call("session.rewind", {{"sessionId", id}, {"turnId", first_turn}, {"conversation", false}, {"files", true}});
  CHECK(paths_in(files_by_path(rewound_first)) == std::vector<std::string>{"added.txt", "notes.txt"});
  CHECK(rewound_first["result"]["rewoundTurnIds"] == Json::array({first_turn}));
  CHECK_FALSE(fs::exists(world.work / "added.txt"));
  CHECK(file_bytes(world.work / "notes.txt") == original);
  CHECK(file_bytes(world.work / "untouched.txt") == "left alone\n");
  CHECK_FALSE(world.client->wait_event("session.rewound", at, std::chrono::seconds(10)).is_null());
  check_lifecycle(world);
}


namespace conformance_detail {

// One agent's part in the search scenario: its mock (in an AgentWorld, which also finds its CLI), the words its
// turn's prompt, answer and tool output carry (each a single word no other event has), and its session.
struct SearchedAgent {
  const AgentProfile& profile;
  std::string prompt_word;
  std::string answer_word;
  std::string output_word;
  std::unique_ptr<AgentWorld> world;
  std::string session_id;
  std::string turn_id;

  explicit SearchedAgent(const AgentProfile& agent_profile) : profile(agent_profile) {
    std::string name;
    for (const char c : profile.agent) {
      if (std::isalnum(static_cast<unsigned char>(c))) name += c;
    }
    prompt_word = "promptword" + name;
    answer_word = "answerword" + name;
    output_word = "outputword" + name;
    // The command prints the output word without spelling it: the tool call's own input (indexed too) must not
    // be what finds it.
    world = std::make_unique<AgentWorld>(
        profile, Json::array({profile.run_command("echo outputword\"\"" + name),
                              profile.after_tool_output("The answer is " + answer_word + ".")}));
  }
  std::string cwd() const { return world->work.string(); }
};

// session.search's hits, once there are some: an event is findable once the event log has committed it, a few
// milliseconds after the client saw it. Null when the search failed.
Json search_hits(DaemonClient& client, const Json& params) {
  Json hits = Json::array();
  eventually([&] {
    const auto answer = client.call("session.search", params);
    if (!answer.contains("result")) {
      hits = nullptr;
      return true;
    }
    hits = answer["result"]["hits"];
    return !hits.empty();
  }, std::chrono::seconds(10), std::chrono::milliseconds(50));
  return hits;
}

// Every hit of `word` is the agent's turn's event of `type`, at least one, and its seq names that event.
void check_found(DaemonClient& client, const SearchedAgent& agent, const std::string& word, const std::string& type) {
  INFO(agent.profile.agent << " " << word);
  const auto hits = search_hits(client, {{"query", word}});
  INFO(hits.dump());
  REQUIRE(hits.is_array());
  REQUIRE_FALSE(hits.empty());
  for (const auto& hit : hits) {
    CHECK(hit["sessionId"] == agent.session_id);
    CHECK(hit["turnId"] == agent.turn_id);
    CHECK(hit["type"] == type);
    CHECK(hit.value("snippet", "").find("«" + word + "»") != std::string::npos);
    // The hit's seq is the matching event: the first of session.events after the one before it.
    const auto page = client.call("session.events", {{"sessionId", agent.session_id},
                                                     {"afterSeq", hit["seq"].get<std::int64_t>() - 1}, {"limit", 1}});
    INFO(page.dump());
    REQUIRE(page.contains("result"));
    REQUIRE(page["result"]["events"].size() == 1);
    const auto& event = page["result"]["events"][0];
    CHECK(event["seq"] == hit["seq"]);
    CHECK(event["type"] == type);
    CHECK(event["data"]["turnId"] == agent.turn_id);
  }
}

std::size_t hit_count(DaemonClient& client, const Json& params) {
  const auto answer = client.call("session.search", params);
  INFO(answer.dump());
  REQUIRE(answer.contains("result"));
  return answer["result"]["hits"].size();
}

}  // namespace conformance_detail

void scenario_search_two_agents(const AgentProfile& profile, const AgentProfile& other) {
  using namespace conformance_detail;
  SearchedAgent first(profile);
  SearchedAgent second(other);
  if (!first.world->ready() || !second.world->ready()) return;

  // One daemon hosts both agents, each with its own mock; their environments differ only in HOME, shared here.
  const fs::path home = first.world->tmp.path() / "home";
  std::vector<std::string> environment;
  for (const auto* agent : {&first, &second}) {
    for (auto& variable : agent->profile.environment(home, agent->world->mock->base_url(), agent->world->binary)) {
      environment.push_back(std::move(variable));
    }
  }
  DaemonClient client({"--log-level", "info", "stdio", "--data-dir", (first.world->tmp.path() / "data").string()},
                      environment);
  REQUIRE(client.call("initialize", {{"protocolVersion", 1}, {"clientInfo", {{"name", "e2e"}}},
                                     {"capabilities", {{"answersPermissions", true}}}})
              .contains("result"));

  for (auto* agent : {&first, &second}) {
    INFO(agent->profile.agent);
    const auto created = client.call("session.create", {{"agent", agent->profile.agent}, {"cwd", agent->cwd()},
                                                        {"mode", agent->profile.asking_mode}});
    INFO(created.dump());
    REQUIRE(created.contains("result"));
    agent->session_id = created["result"]["session"]["sessionId"];
    const auto done = send_allowing_everything(client, agent->session_id, "Please look for " + agent->prompt_word);
    CHECK(done["text"] == "The answer is " + agent->answer_word + ".");
    agent->turn_id = done.value("turnId", "");
    REQUIRE_FALSE(agent->turn_id.empty());
  }

  for (const auto* agent : {&first, &second}) {
    check_found(client, *agent, agent->prompt_word, "turn.started");
    check_found(client, *agent, agent->answer_word, "message.completed");
    check_found(client, *agent, agent->output_word, "tool.completed");
  }

  // The filters: the agent's own name or directory finds its words, the other's leaves them out.
  for (const auto* agent : {&first, &second}) {
    const auto* another = agent == &first ? &second : &first;
    INFO(agent->profile.agent);
    CHECK(hit_count(client, {{"query", agent->answer_word}, {"agent", agent->profile.agent}}) >= 1);
    CHECK(hit_count(client, {{"query", agent->answer_word}, {"agent", another->profile.agent}}) == 0);
    CHECK(hit_count(client, {{"query", agent->output_word}, {"cwd", agent->cwd()}}) >= 1);
    CHECK(hit_count(client, {{"query", agent->output_word}, {"cwd", another->cwd()}}) == 0);
  }

  // A deleted session is found no more; the other still is.
  const auto deleted = client.call("session.delete", {{"sessionId", first.session_id}});
  INFO(deleted.dump());
  REQUIRE(deleted.contains("result"));
  for (const auto& word : {first.prompt_word, first.answer_word, first.output_word}) {
    INFO(word);
    CHECK(hit_count(client, {{"query", word}}) == 0);
  }
  check_found(client, second, second.answer_word, "message.completed");

  static const SchemaValidator validator;
  const auto events = client.events();
  for (const auto& event : events) {
    INFO(event.dump());
    CHECK(validator.validate_event(event).empty());
  }
  for (const auto& violation : lifecycle_violations(events)) FAIL_CHECK(violation);
}

}  // namespace switchboard::testing::e2e
