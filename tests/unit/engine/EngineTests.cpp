#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/Engine.h"
#include "daemon/EngineMethods.h"
#include "support/EngineCalls.h"
#include "support/RecordingPeer.h"
#include "support/ScriptedAdapter.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"

namespace engine_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
namespace p = protocol;

struct EngineFixture {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  engine::EngineConfig config;
  std::unique_ptr<engine::Engine> engine;
  rpc::Dispatcher dispatcher;
  std::vector<bus::BusEvent> events;
  bus::Subscription recorder = bus.subscribe_all([this](const bus::BusEvent& e) { events.push_back(e); });
  std::string cwd = std::filesystem::temp_directory_path().string();

  explicit EngineFixture(bool client_attached = true, engine::EngineConfig cfg = {}) : config(std::move(cfg)) {
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)}, config);
    daemon::bind_engine_methods(dispatcher, *engine);
    if (client_attached) bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
  }

  std::string create(std::optional<std::string> model = std::nullopt, std::string dir = "") {
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = dir.empty() ? cwd : dir;
    params.model = model;
    std::optional<engine::Outcome<p::SessionInfo>> outcome;
    engine->create_session(params, [&](engine::Outcome<p::SessionInfo> result) { outcome = std::move(result); });
    settle();
    REQUIRE(outcome);
    REQUIRE(std::holds_alternative<p::SessionInfo>(*outcome));
    return std::get<p::SessionInfo>(*outcome).session_id;
  }

  // Removes a rule and returns the engine's answer once it came.
  std::optional<engine::EngineError> remove_rule(const std::string& rule_id) {
    std::optional<std::optional<engine::EngineError>> answer;
    engine->remove_rule(rule_id, [&](std::optional<engine::EngineError> error) { answer = std::move(error); });
    settle();
    REQUIRE(answer);
    return *answer;
  }

  // Sends and returns the outcome slot (filled when the engine replies).
  std::shared_ptr<std::optional<engine::Outcome<p::SessionSendResult>>> send(const std::string& session, std::string text,
                                                                             bool wait = true, std::optional<std::string> model = std::nullopt) {
    auto slot = std::make_shared<std::optional<engine::Outcome<p::SessionSendResult>>>();
    p::SessionSendParams params;
    params.session_id = session;
    params.text = std::move(text);
    params.wait = wait;
    params.model = std::move(model);
    engine->send(params, [slot](engine::Outcome<p::SessionSendResult> outcome) { *slot = std::move(outcome); });
    return slot;
  }

  // Answers a request; returns the engine's answer (settling the reactor only if it has not come yet).
  std::optional<engine::EngineError> respond_permission(const p::PermissionRespondParams& params, std::optional<std::string> client) {
    std::optional<std::optional<engine::EngineError>> answer;
    engine->respond_permission(params, std::move(client), [&answer](std::optional<engine::EngineError> error) { answer = std::move(error); });
    if (!answer) settle();
    REQUIRE(answer);
    return *answer;
  }
  std::optional<engine::EngineError> respond_question(const p::QuestionRespondParams& params, std::optional<std::string> client) {
    std::optional<std::optional<engine::EngineError>> answer;
    engine->respond_question(params, std::move(client), [&answer](std::optional<engine::EngineError> error) { answer = std::move(error); });
    if (!answer) settle();
    REQUIRE(answer);
    return *answer;
  }

  void settle() {
    io.restart();
    io.poll();
    while (io.poll() > 0) {
    }
  }

  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& e : events) {
      std::string name(p::event_info(e.kind()).type);
      if (const auto* state = std::get_if<p::SessionStateEvent>(&e.payload)) name += ":" + std::string(p::to_string(state->state));
      out.push_back(name);
    }
    return out;
  }
  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& e : events) {
      if (const auto* data = std::get_if<T>(&e.payload)) out.push_back(*data);
    }
    return out;
  }
  std::string open_permission_id() const {
    const auto requested = all<p::PermissionRequestedEvent>();
    REQUIRE_FALSE(requested.empty());
    return requested.back().request.request_id;
  }
};

const p::SessionSendResult& result_of(const std::shared_ptr<std::optional<engine::Outcome<p::SessionSendResult>>>& slot) {
  REQUIRE(slot->has_value());
  REQUIRE(std::holds_alternative<p::SessionSendResult>(**slot));
  return std::get<p::SessionSendResult>(**slot);
}

TEST_CASE("engine: a turn streams and ends with stopped then idle, send resolves with a summary", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Delta{"Hel"}, ScriptedAdapter::Delta{"lo"}, ScriptedAdapter::Message{"Hello"},
                              ScriptedAdapter::Tool{"tool-1", "ls", "a\nb"}, ScriptedAdapter::End{}});
  f.events.clear();
  const auto reply = f.send(session, "hi");
  CHECK_FALSE(reply->has_value());  // waits for the turn
  f.settle();
  const auto& summary = result_of(reply);
  CHECK_FALSE(summary.queued);
  CHECK(summary.stop_reason == p::StopReason::EndTurn);
  CHECK(summary.text == std::optional<std::string>("Hello"));
  REQUIRE(summary.usage);
  CHECK(summary.usage->output_tokens == std::optional<std::int64_t>(20));
  CHECK(f.types() == std::vector<std::string>{"session.state:running", "turn.started", "message.delta", "message.delta",
                                              "message.completed", "tool.started", "tool.completed", "turn.stopped",
                                              "session.state:idle"});
  for (const auto& e : f.events) CHECK(e.session_id == session);
  CHECK(f.control->inputs.at(0).text == "hi");
}

TEST_CASE("engine: agent status and sub-agent messages are published with the turn, a sub-agent's text is not the answer", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  adapters::AgentStatus retrying;
  retrying.status = p::AgentStatusKind::Retrying;
  retrying.message = "overloaded";
  retrying.attempt = 1;
  retrying.max_attempts = 3;
  retrying.retry_delay_ms = 500;
  f.control->turns.push_back({ScriptedAdapter::Status{retrying}, ScriptedAdapter::Message{"main answer"},
                              ScriptedAdapter::Message{"sub-agent notes", std::string("toolu_task")}, ScriptedAdapter::End{}});
  f.events.clear();
  const auto reply = f.send(session, "hi");
  f.settle();
  CHECK(result_of(reply).text == std::optional<std::string>("main answer"));
  const auto statuses = f.all<p::AgentStatusEvent>();
  REQUIRE(statuses.size() == 1);
  const auto turn_id = f.all<p::TurnStartedEvent>().at(0).turn_id;
  CHECK(statuses[0].turn_id == std::optional<std::string>(turn_id));
  CHECK(statuses[0].status == p::AgentStatusKind::Retrying);
  CHECK(statuses[0].message == std::optional<std::string>("overloaded"));
  CHECK(statuses[0].attempt == std::optional<std::int64_t>(1));
  CHECK(statuses[0].max_attempts == std::optional<std::int64_t>(3));
  CHECK(statuses[0].retry_delay_ms == std::optional<std::int64_t>(500));
  const auto messages = f.all<p::MessageCompletedEvent>();
  REQUIRE(messages.size() == 2);
  CHECK_FALSE(messages[0].parent_tool_call_id);
  CHECK(messages[1].parent_tool_call_id == std::optional<std::string>("toolu_task"));
}

TEST_CASE("engine: streamed tool output is published as tool.output between the tool's start and end", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::ToolOutput{"tool-1", "a\n"}, ScriptedAdapter::ToolOutput{"tool-1", "b\n"},
                              ScriptedAdapter::Tool{"tool-1", "ls", "a\nb\n"}, ScriptedAdapter::End{}});
  f.events.clear();
  const auto reply = f.send(session, "hi");
  f.settle();
  CHECK(result_of(reply).stop_reason == p::StopReason::EndTurn);
  CHECK(f.types() == std::vector<std::string>{"session.state:running", "turn.started", "tool.output", "tool.output",
                                              "tool.started", "tool.completed", "turn.stopped", "session.state:idle"});
  const auto outputs = f.all<p::ToolOutputEvent>();
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0].turn_id == f.all<p::TurnStartedEvent>().at(0).turn_id);
  CHECK(outputs[0].tool_call_id == "tool-1");
  CHECK(outputs[1].text == "b\n");
}

TEST_CASE("engine: the session reports running before send's reply (wait false)", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  p::SessionState state_at_reply{};
  p::SessionSendParams params;
  params.session_id = session;
  params.text = "go";
  params.wait = false;
  std::optional<p::SessionSendResult> result;
  f.engine->send(params, [&](engine::Outcome<p::SessionSendResult> outcome) {
    state_at_reply = std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state;
    result = std::get<p::SessionSendResult>(outcome);
  });
  REQUIRE(result);
  CHECK(state_at_reply == p::SessionState::Running);
  CHECK(result->turn_id.has_value());
  CHECK_FALSE(result->queued);
  f.settle();
  f.control->resume();
  f.settle();
  CHECK(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state == p::SessionState::Idle);
}

TEST_CASE("engine: prompts sent while busy are queued FIFO and run in order", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  const auto first = f.send(session, "first");
  f.settle();
  const auto second = f.send(session, "second");
  const auto third = f.send(session, "third");
  // Queued sends return at once.
  CHECK(result_of(second).queued);
  CHECK(result_of(third).queued);
  CHECK(result_of(second).queue_id != result_of(third).queue_id);
  const auto queued = f.all<p::TurnQueuedEvent>();
  REQUIRE(queued.size() == 2);
  CHECK(queued[0].position == 1);
  CHECK(queued[1].position == 2);
  CHECK(queued[1].prompt.text == "third");
  const auto snapshot = std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session));
  REQUIRE(snapshot.queue.size() == 2);
  CHECK(snapshot.queue[0].text == "second");

  f.control->resume();
  f.settle();
  REQUIRE(f.control->inputs.size() == 3);
  CHECK(f.control->inputs[0].text == "first");
  CHECK(f.control->inputs[1].text == "second");
  CHECK(f.control->inputs[2].text == "third");
  CHECK(result_of(first).stop_reason == p::StopReason::EndTurn);
  // The queued turns say where they came from.
  const auto started = f.all<p::TurnStartedEvent>();
  REQUIRE(started.size() == 3);
  CHECK(started[1].queue_id == result_of(second).queue_id);
  CHECK(f.all<p::TurnStoppedEvent>().size() == 3);
  CHECK(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state == p::SessionState::Idle);
}

TEST_CASE("engine: cancel tears down open requests and follows stopped then idle", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "rm -rf build"}, ScriptedAdapter::End{}});
  const auto reply = f.send(session, "clean");
  f.settle();
  CHECK(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state == p::SessionState::AwaitingInput);
  const auto request_id = f.open_permission_id();
  f.events.clear();
  CHECK(std::get<bool>(testing::cancel(*f.engine, f.io, session)));
  f.settle();
  CHECK(f.control->cancels == 1);
  const auto resolved = f.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].request_id == request_id);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Cancelled);
  CHECK(resolved[0].resolved_by == p::PermissionResolvedEventResolvedBy::Cancel);
  CHECK(result_of(reply).stop_reason == p::StopReason::Cancelled);
  const auto t = f.types();
  REQUIRE(t.size() >= 2);
  CHECK(t[t.size() - 2] == "turn.stopped");
  CHECK(t.back() == "session.state:idle");
  CHECK_FALSE(std::get<bool>(testing::cancel(*f.engine, f.io, session)));  // nothing running any more
  // A late answer to the torn-down request is "already answered", not a failure.
  auto error = f.respond_permission(p::PermissionRespondParams{request_id, p::PermissionDecision::AllowOnce, std::nullopt, std::nullopt}, "tui");
  REQUIRE(error);
  CHECK(error->code == p::ErrorCode::AlreadyAnswered);
}

TEST_CASE("engine: a request the agent withdraws resolves as cancelled for every client and the turn goes on", "[engine]") {
  for (const bool question : {false, true}) {
    DYNAMIC_SECTION((question ? "question" : "permission")) {
      EngineFixture f;
      const auto session = f.create();
      f.control->turns.push_back({ScriptedAdapter::AskThenWithdraw{"Bash", "make", question}, ScriptedAdapter::Hold{},
                                  ScriptedAdapter::Message{"went on"}, ScriptedAdapter::End{}});
      const auto reply = f.send(session, "build it");
      f.settle();
      // Withdrawn while the turn still runs (held here): resolved now, not torn down at the turn's end.
      REQUIRE(f.control->resume);
      CHECK(f.all<p::TurnStoppedEvent>().empty());
      CHECK(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state == p::SessionState::Running);
      CHECK(std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session)).permissions.empty());
      CHECK(std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session)).questions.empty());
      CHECK(f.all<p::PermissionResolvedEvent>().size() + f.all<p::QuestionResolvedEvent>().size() == 1);
      f.control->resume();
      f.settle();
      std::string request_id;
      if (question) {
        const auto resolved = f.all<p::QuestionResolvedEvent>();
        REQUIRE(resolved.size() == 1);
        CHECK(resolved[0].outcome == p::QuestionResolvedEventOutcome::Cancelled);
        CHECK(resolved[0].resolved_by == p::QuestionResolvedEventResolvedBy::Cancel);
        request_id = resolved[0].request_id;
        CHECK(f.all<p::QuestionRequestedEvent>().at(0).request.request_id == request_id);
      } else {
        const auto resolved = f.all<p::PermissionResolvedEvent>();
        REQUIRE(resolved.size() == 1);
        CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Cancelled);
        CHECK(resolved[0].resolved_by == p::PermissionResolvedEventResolvedBy::Cancel);
        request_id = resolved[0].request_id;
        CHECK(f.open_permission_id() == request_id);
      }
      // Nothing was answered to the agent, the session went back to running, and the turn finished normally.
      CHECK(f.control->permission_answers.empty());
      CHECK(f.control->question_answers.empty());
      const auto t = f.types();
      const auto resolved_at = std::find(t.begin(), t.end(), question ? "question.resolved" : "permission.resolved");
      REQUIRE(resolved_at != t.end());
      CHECK(std::find(resolved_at, t.end(), "session.state:running") != t.end());
      CHECK(result_of(reply).text == std::optional<std::string>("went on"));
      CHECK(result_of(reply).stop_reason == p::StopReason::EndTurn);
      // No client can answer it any more: the request is closed, not unknown.
      const auto late = question ? f.respond_question(p::QuestionRespondParams{request_id, std::nullopt, std::nullopt}, "tui")
                                 : f.respond_permission(p::PermissionRespondParams{request_id, p::PermissionDecision::AllowOnce, std::nullopt, std::nullopt}, "tui");
      REQUIRE(late);
      CHECK(late->code == p::ErrorCode::AlreadyAnswered);
      CHECK(testing::attach(*f.engine, f.io, session).index() == 0);
      CHECK(std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session)).permissions.empty());
      CHECK(std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session)).questions.empty());
    }
  }
}

TEST_CASE("engine: first answer wins, the racing second client gets -32002", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "make"}, ScriptedAdapter::Message{"built"}, ScriptedAdapter::End{}});
  const auto reply = f.send(session, "build it");
  f.settle();
  const auto request_id = f.open_permission_id();
  auto tui = std::make_shared<testing::RecordingPeer>(false);
  auto browser = std::make_shared<testing::RecordingPeer>(false);
  const std::string answer = R"({"jsonrpc":"2.0","id":1,"method":"permission.respond","params":{"requestId":")" + request_id + R"(","decision":"allow_once"}})";
  f.dispatcher.handle_message(answer, tui);
  f.dispatcher.handle_message(answer, browser);
  REQUIRE(tui->responses.size() == 1);
  REQUIRE(browser->responses.size() == 1);
  CHECK(tui->responses[0].contains("result"));
  CHECK(browser->responses[0].at("error").at("code") == -32002);
  f.dispatcher.handle_message(R"({"jsonrpc":"2.0","id":2,"method":"permission.respond","params":{"requestId":"req-nope","decision":"deny"}})", tui);
  CHECK(tui->responses[1].at("error").at("code") == -32011);
  f.settle();
  REQUIRE(f.control->permission_answers.size() == 1);
  CHECK(f.control->permission_answers[0].allow);
  CHECK(result_of(reply).text == std::optional<std::string>("built"));
  // open → responding → resolved, each step an event.
  const auto t = f.types();
  const auto at = [&](const std::string& name) { return std::find(t.begin(), t.end(), name) - t.begin(); };
  CHECK(at("permission.requested") < at("permission.responding"));
  CHECK(at("permission.responding") < at("permission.resolved"));
}

TEST_CASE("engine: a request nobody answers times out as deny, questions as rejection", "[engine]") {
  engine::EngineConfig config;
  config.request_timeout = std::chrono::milliseconds(20);
  EngineFixture f(true, config);
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "curl"}, ScriptedAdapter::AskQuestion{"Which?"}, ScriptedAdapter::End{}});
  const auto reply = f.send(session, "go");
  for (int i = 0; i < 200 && !reply->has_value(); ++i) {
    f.io.restart();
    f.io.run_for(std::chrono::milliseconds(5));
  }
  REQUIRE(reply->has_value());
  const auto resolved = f.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].resolved_by == p::PermissionResolvedEventResolvedBy::Timeout);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Denied);
  REQUIRE(f.control->permission_answers.size() == 1);
  CHECK_FALSE(f.control->permission_answers[0].allow);
  const auto questions = f.all<p::QuestionResolvedEvent>();
  REQUIRE(questions.size() == 1);
  CHECK(questions[0].resolved_by == p::QuestionResolvedEventResolvedBy::Timeout);
  CHECK(f.control->question_answers.at(0).rejected);
}

TEST_CASE("engine: headless, the configured policy answers at once (default deny)", "[engine]") {
  EngineFixture f(/*client_attached=*/false);
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "ls"}, ScriptedAdapter::End{}});
  const auto reply = f.send(session, "go");
  f.settle();
  REQUIRE(reply->has_value());
  const auto resolved = f.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].resolved_by == p::PermissionResolvedEventResolvedBy::Headless);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Denied);
  for (const auto& t : f.types()) CHECK(t != "session.state:awaiting_input");
  // A client that attaches later can answer again; one that detaches leaves the daemon headless.
  f.bus.publish_global(p::ClientAttachedEvent{"web", p::Transport::Http, true});
  CHECK(f.engine->can_ask_someone());
  f.bus.publish_global(p::ClientDetachedEvent{"web"});
  CHECK_FALSE(f.engine->can_ask_someone());
}

TEST_CASE("engine: remembered rules answer without asking (session / project / always)", "[engine]") {
  EngineFixture f;
  const auto dir_a = (std::filesystem::temp_directory_path() / "sb-engine-a").string();
  const auto dir_b = (std::filesystem::temp_directory_path() / "sb-engine-b").string();
  std::filesystem::create_directories(dir_a);
  std::filesystem::create_directories(dir_b);
  auto ask_and_answer = [&](const std::string& session, std::optional<p::PermissionDecision> decision) {
    f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "npm test"}, ScriptedAdapter::End{}});
    f.events.clear();
    const auto reply = f.send(session, "test");
    f.settle();
    if (decision) {
      REQUIRE_FALSE(f.respond_permission(p::PermissionRespondParams{f.open_permission_id(), *decision, std::nullopt, std::nullopt}, "tui"));
      f.settle();
    }
    REQUIRE(reply->has_value());
    const auto resolved = f.all<p::PermissionResolvedEvent>();
    REQUIRE(resolved.size() == 1);
    return resolved[0].resolved_by;
  };
  const auto s1 = f.create(std::nullopt, dir_a);
  const auto s2 = f.create(std::nullopt, dir_a);
  const auto s3 = f.create(std::nullopt, dir_b);
  SECTION("session") {
    CHECK(ask_and_answer(s1, p::PermissionDecision::AllowSession) == p::PermissionResolvedEventResolvedBy::Client);
    CHECK(ask_and_answer(s1, std::nullopt) == p::PermissionResolvedEventResolvedBy::Rule);
    CHECK(ask_and_answer(s2, p::PermissionDecision::AllowOnce) == p::PermissionResolvedEventResolvedBy::Client);
  }
  SECTION("project") {
    CHECK(ask_and_answer(s1, p::PermissionDecision::AllowProject) == p::PermissionResolvedEventResolvedBy::Client);
    CHECK(ask_and_answer(s2, std::nullopt) == p::PermissionResolvedEventResolvedBy::Rule);
    CHECK(ask_and_answer(s3, p::PermissionDecision::AllowOnce) == p::PermissionResolvedEventResolvedBy::Client);
  }
  SECTION("always; listed; removed") {
    CHECK(ask_and_answer(s1, p::PermissionDecision::AllowAlways) == p::PermissionResolvedEventResolvedBy::Client);
    CHECK(ask_and_answer(s3, std::nullopt) == p::PermissionResolvedEventResolvedBy::Rule);
    const auto rules = f.engine->list_rules(std::nullopt, std::nullopt);
    REQUIRE(rules.size() == 1);
    CHECK(rules[0].scope == p::RuleScope::Always);
    CHECK(rules[0].rule.pattern == std::optional<std::string>("npm test"));  // the suggested rule
    REQUIRE_FALSE(f.remove_rule(rules[0].rule_id));
    CHECK(ask_and_answer(s3, p::PermissionDecision::AllowOnce) == p::PermissionResolvedEventResolvedBy::Client);
    CHECK(f.remove_rule("rule-nope")->code == p::ErrorCode::UnknownRule);
  }
}

TEST_CASE("engine: a session rule a client adds decides that session's asks only, deny beating allow", "[engine]") {
  EngineFixture f;
  const auto s1 = f.create();
  const auto s2 = f.create();
  auto ask = [&](const std::string& session, const std::string& tool, const std::string& subject) {
    f.control->turns.push_back({ScriptedAdapter::Ask{tool, subject}, ScriptedAdapter::End{}});
    f.events.clear();
    const auto reply = f.send(session, "go");
    f.settle();
    const auto resolved = f.all<p::PermissionResolvedEvent>();
    if (resolved.empty()) {  // nobody decided: the attached client answers, so the turn ends
      REQUIRE_FALSE(f.respond_permission(p::PermissionRespondParams{f.open_permission_id(), p::PermissionDecision::Deny, std::nullopt, std::nullopt}, "tui"));
      f.settle();
      REQUIRE(reply->has_value());
      return std::string("asked");
    }
    REQUIRE(reply->has_value());
    REQUIRE(resolved.size() == 1);
    if (resolved[0].resolved_by != p::PermissionResolvedEventResolvedBy::Rule) return std::string("not by rule");
    return std::string(resolved[0].outcome == p::PermissionResolvedEventOutcome::Allowed ? "allowed" : "denied");
  };
  REQUIRE(std::holds_alternative<p::RememberedRule>(testing::add_session_rule(*f.engine, f.io, s1, p::PermissionRule{"Bash", std::string("git *")}, true)));
  REQUIRE(std::holds_alternative<p::RememberedRule>(testing::add_session_rule(*f.engine, f.io, s1, p::PermissionRule{"Bash", std::string("git push*")}, false)));
  REQUIRE(std::holds_alternative<p::RememberedRule>(testing::add_session_rule(*f.engine, f.io, s1, p::PermissionRule{"Read", std::nullopt}, true)));
  CHECK(ask(s1, "Bash", "git status") == "allowed");
  CHECK(ask(s1, "Bash", "git push origin") == "denied");
  CHECK(ask(s1, "Bash", "rm -rf x") == "asked");
  CHECK(ask(s1, "Read", "/etc/hosts") == "allowed");
  CHECK(ask(s2, "Bash", "git status") == "asked");
  const auto rules = f.engine->list_rules(s1, std::nullopt);
  CHECK(rules.size() == 3);
  for (const auto& rule : rules) CHECK(rule.scope == p::RuleScope::Session);
  const auto unknown = testing::add_session_rule(*f.engine, f.io, "s-nope", p::PermissionRule{"Bash", std::nullopt}, true);
  REQUIRE(std::holds_alternative<engine::EngineError>(unknown));
  CHECK(std::get<engine::EngineError>(unknown).code == p::ErrorCode::UnknownSession);
}

TEST_CASE("engine: attach replays open requests and the queue to a reconnecting client", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Ask{"Edit", "src/main.cpp"}, ScriptedAdapter::End{}});
  f.send(session, "edit");
  f.settle();
  f.send(session, "later");
  const auto snapshot = std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session));
  CHECK(snapshot.session.state == p::SessionState::AwaitingInput);
  REQUIRE(snapshot.permissions.size() == 1);
  CHECK(snapshot.permissions[0].tool == "Edit");
  CHECK(snapshot.permissions[0].description == "run src/main.cpp");
  CHECK(snapshot.permissions[0].reason == "default mode asks for Edit");
  REQUIRE(snapshot.permissions[0].suggested_rule);
  REQUIRE(snapshot.queue.size() == 1);
  CHECK(snapshot.queue[0].text == "later");
  // The client that was there has gone; the request survives and a new client answers it.
  f.bus.publish_global(p::ClientDetachedEvent{"tui"});
  f.bus.publish_global(p::ClientAttachedEvent{"tui-2", p::Transport::Stdio, true});
  CHECK_FALSE(f.respond_permission(p::PermissionRespondParams{snapshot.permissions[0].request_id, p::PermissionDecision::Deny, std::nullopt, std::string("no")}, "tui-2"));
  f.settle();
  CHECK(f.control->permission_answers.at(0).message == std::optional<std::string>("no"));
}

TEST_CASE("engine: model precedence is override, then the session's choice, then configuration", "[engine]") {
  CHECK(engine::resolve_model("o", "s", "c") == std::optional<std::string>("o"));
  CHECK(engine::resolve_model(std::nullopt, "s", "c") == std::optional<std::string>("s"));
  CHECK(engine::resolve_model(std::nullopt, std::nullopt, "c") == std::optional<std::string>("c"));
  CHECK_FALSE(engine::resolve_model(std::nullopt, std::nullopt, std::nullopt).has_value());

  engine::EngineConfig config;
  SECTION("pin only") {
    EngineFixture f(true, config);
    const auto session = f.create("pinned");
    f.send(session, "a");
    f.settle();
    CHECK(f.control->inputs.at(0).model == std::optional<std::string>("pinned"));
  }
  SECTION("the session's choice over configuration, override over both") {
    config.default_models["scripted"] = "configured";
    EngineFixture f(true, config);
    const auto session = f.create("pinned");
    f.send(session, "a");
    f.settle();
    f.send(session, "b", true, "override");
    f.settle();
    CHECK(f.control->inputs.at(0).model == std::optional<std::string>("pinned"));
    CHECK(f.control->inputs.at(1).model == std::optional<std::string>("override"));
  }
  SECTION("configuration when the session chose no model") {
    config.default_models["scripted"] = "configured";
    EngineFixture f(true, config);
    const auto session = f.create();
    f.send(session, "a");
    f.settle();
    CHECK(f.control->inputs.at(0).model == std::optional<std::string>("configured"));
  }
}

TEST_CASE("engine: the models an agent offers reach its session as session.updated, agents.list and its next new sessions", "[engine]") {
  EngineFixture f;
  p::ModelInfo fast;
  fast.id = "fast";
  fast.is_default = true;
  p::ModelInfo slow;
  slow.id = "slow";
  slow.name = "Slow and careful";
  f.control->offered_models = {fast, slow};
  const auto info = [&](const std::string& session) {
    auto outcome = testing::get_session(*f.engine, f.io, session);
    REQUIRE(std::holds_alternative<p::SessionInfo>(outcome));
    return std::get<p::SessionInfo>(outcome);
  };
  // The first turn's agent dies; the second turn starts another, which offers the same models.
  f.control->turns.push_back({ScriptedAdapter::Die{"gone"}});
  f.control->turns.push_back({ScriptedAdapter::Message{"ok"}, ScriptedAdapter::End{}});
  const auto first = f.create();
  CHECK_FALSE(info(first).models.has_value());  // not known before the agent first starts
  CHECK_FALSE(f.engine->list_agents().at(0).models.has_value());

  f.send(first, "a");
  f.settle();
  const auto updates = f.all<p::SessionUpdatedEvent>();
  REQUIRE(updates.size() == 1);
  REQUIRE(updates[0].session.models);
  REQUIRE(updates[0].session.models->size() == 2);
  CHECK(updates[0].session.models->at(0).id == "fast");
  CHECK(updates[0].session.models->at(0).is_default == true);
  CHECK(updates[0].session.models->at(1).name == "Slow and careful");
  const auto listed = f.engine->list_agents().at(0).models;
  REQUIRE(listed);
  CHECK(listed->size() == 2);

  // The same offer again (the agent restarted) is no news; a new session knows it from the start.
  f.send(first, "b");
  f.settle();
  CHECK(f.control->starts == 2);
  CHECK(f.all<p::SessionUpdatedEvent>().size() == 1);
  const auto second = f.create();
  REQUIRE(info(second).models);
  CHECK(info(second).models->at(1).id == "slow");
}

TEST_CASE("engine: a configured default model is the one marked default in the agent's offer", "[engine]") {
  p::ModelInfo fast;
  fast.id = "fast";
  fast.is_default = true;  // the agent's own choice
  p::ModelInfo slow;
  slow.id = "slow";
  // One turn of an agent offering {fast, slow} under a configured default model; the fixture for what follows.
  const auto after_one_turn = [&](const std::string& configured) {
    engine::EngineConfig config;
    config.default_models["scripted"] = configured;
    auto f = std::make_unique<EngineFixture>(true, config);
    f->control->offered_models = {fast, slow};
    f->send(f->create(), "a");
    f->settle();
    const auto updates = f->all<p::SessionUpdatedEvent>();
    REQUIRE(updates.size() == 1);
    REQUIRE(updates[0].session.models);
    REQUIRE(updates[0].session.models->size() == 2);
    return std::make_pair(std::move(f), *updates[0].session.models);
  };
  SECTION("the configured model is offered: it alone is marked") {
    const auto [f, models] = after_one_turn("slow");
    CHECK_FALSE(models[0].is_default.has_value());
    CHECK(models[1].is_default == true);
    const auto listed = f->engine->list_agents().at(0).models;
    REQUIRE(listed);
    CHECK_FALSE(listed->at(0).is_default.has_value());
    CHECK(listed->at(1).is_default == true);
    CHECK(f->control->inputs.at(0).model == std::optional<std::string>("slow"));
  }
  SECTION("the configured model is not offered: the agent's mark stands") {
    const auto [f, models] = after_one_turn("elsewhere");
    CHECK(models[0].is_default == true);
    CHECK_FALSE(models[1].is_default.has_value());
  }
}

TEST_CASE("engine: an agent that dies gives error then stopped, the queue survives and restarts it", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Delta{"wor"}, ScriptedAdapter::Hold{}, ScriptedAdapter::Die{"killed"}});
  const auto first = f.send(session, "one");
  f.settle();
  const auto queued = f.send(session, "two");
  CHECK(result_of(queued).queued);
  f.events.clear();
  f.control->resume();
  f.settle();
  CHECK(result_of(first).stop_reason == p::StopReason::Error);
  CHECK(f.types() == std::vector<std::string>{"turn.stopped", "session.state:stopped"});
  CHECK(f.all<p::SessionStateEvent>().back().reason == std::optional<std::string>("killed"));
  CHECK_FALSE(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).live);
  // The next send restarts the agent: the backlog ("two") runs first, then the new prompt.
  const auto third = f.send(session, "three");
  f.settle();
  CHECK(f.control->starts == 2);
  REQUIRE(f.control->inputs.size() == 3);
  CHECK(f.control->inputs[1].text == "two");
  CHECK(f.control->inputs[2].text == "three");
}

TEST_CASE("engine: message ids are unique within a session, however the agent numbers them", "[engine]") {
  // The scripted agent calls every message "m1", as an agent that numbers messages per process or per turn does:
  // two turns of one agent, then a third after the agent died and a new one started.
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Delta{"a"}, ScriptedAdapter::Message{"a"}, ScriptedAdapter::End{}});
  f.control->turns.push_back({ScriptedAdapter::Delta{"b"}, ScriptedAdapter::Die{"killed"}});
  f.control->turns.push_back({ScriptedAdapter::Delta{"c"}, ScriptedAdapter::Message{"c"}, ScriptedAdapter::End{}});
  f.send(session, "one");
  f.settle();
  f.send(session, "two");
  f.settle();
  f.send(session, "three");
  f.settle();
  REQUIRE(f.control->starts == 2);
  const auto started = f.all<p::TurnStartedEvent>();
  REQUIRE(started.size() == 3);
  std::map<std::string, std::string> turn_of;  // message id -> the turn it was first seen in
  for (const auto& delta : f.all<p::MessageDeltaEvent>()) {
    CHECK(delta.message_id.rfind(delta.turn_id, 0) == 0);
    CHECK(turn_of.emplace(delta.message_id, delta.turn_id).first->second == delta.turn_id);
  }
  for (const auto& message : f.all<p::MessageCompletedEvent>()) {
    CHECK(turn_of.emplace(message.message_id, message.turn_id).first->second == message.turn_id);
  }
  CHECK(turn_of.size() == 3);  // one message per turn, each with an id of its own; a delta and its message share it
}

TEST_CASE("engine: what an agent reports between turns is not published, and what it asks then is refused", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::Message{"in the turn"}, ScriptedAdapter::End{}});
  f.control->after_turn = {ScriptedAdapter::Delta{"late"}, ScriptedAdapter::Message{"late"}, ScriptedAdapter::ToolOutput{"tool-9", "x"},
                           ScriptedAdapter::Tool{"tool-9", "ls", "x"}, ScriptedAdapter::Ask{"Bash", "rm -rf /tmp/x"},
                           ScriptedAdapter::AskQuestion{"which?"}};
  f.events.clear();
  f.send(session, "hi");
  f.settle();
  CHECK(f.types() == std::vector<std::string>{"session.state:running", "turn.started", "message.completed", "turn.stopped",
                                              "session.state:idle"});
  // The agent was not left waiting for answers nobody could give.
  REQUIRE(f.control->permission_answers.size() == 1);
  CHECK_FALSE(f.control->permission_answers[0].allow);
  REQUIRE(f.control->question_answers.size() == 1);
  CHECK(f.control->question_answers[0].rejected);
  CHECK(std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session)).state == p::SessionState::Idle);
}

TEST_CASE("engine: expected failures map to stable codes", "[engine]") {
  EngineFixture f;
  auto peer = std::make_shared<testing::RecordingPeer>(false);
  auto call = [&](const std::string& method, const std::string& params) {
    f.dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}", peer);
    return peer->responses.back();
  };
  CHECK(call("session.get", R"({"sessionId":"s-nope"})").at("error").at("code") == -32010);
  CHECK(call("session.create", R"({"agent":"nope","cwd":"/"})").at("error").at("code") == -32012);
  CHECK(call("session.create", R"({"agent":"scripted","cwd":"/definitely/not/here"})").at("error").at("code") == -32014);
  CHECK(call("session.create", R"({"agent":"scripted","cwd":7})").at("error").at("code") == -32602);
  const auto created = call("session.create", R"({"agent":"scripted","cwd":"/","title":"t"})");
  const std::string id = created.at("result").at("session").at("sessionId");
  f.control->supports_model_switch = false;
  f.send(id, "start the agent");
  f.settle();
  CHECK(call("session.setModel", R"({"sessionId":")" + id + R"(","model":"big"})").at("error").at("code") == -32015);
  CHECK(call("session.rename", R"({"sessionId":")" + id + R"(","title":"renamed"})").at("result").at("session").at("title") == "renamed");
  CHECK(call("session.list", "{}").at("result").at("sessions").size() == 1);
  CHECK(call("session.archive", R"({"sessionId":")" + id + R"(","archived":true})").at("result").at("session").at("archived") == true);
  CHECK(call("session.list", "{}").at("result").at("sessions").empty());
  CHECK(call("session.list", R"({"archived":true})").at("result").at("sessions").size() == 1);
  CHECK(call("agents.list", "{}").at("result").at("agents").at(0).at("agent") == "scripted");
  CHECK(call("session.delete", R"({"sessionId":")" + id + R"("})").contains("result"));
  CHECK(f.control->stops == 1);
  CHECK(call("session.delete", R"({"sessionId":")" + id + R"("})").at("error").at("code") == -32010);
}

TEST_CASE("engine: a model or mode switch replies once the agent answered, a refusal is the reply's typed error and no agent.error", "[engine]") {
  for (const bool refused : {false, true}) {
    DYNAMIC_SECTION((refused ? "refused" : "accepted")) {
      EngineFixture f;
      const auto session = f.create(std::string("small"));
      f.send(session, "start the agent");
      f.settle();
      f.control->settings_answer_later = true;
      if (refused) f.control->refuse_settings = adapters::AdapterError{p::ErrorCode::Unsupported, "the agent refused it"};
      f.events.clear();
      std::optional<engine::Outcome<p::SessionInfo>> model;
      std::optional<engine::Outcome<p::SessionInfo>> mode;
      f.engine->set_model(session, "big", [&](engine::Outcome<p::SessionInfo> outcome) { model = std::move(outcome); });
      f.engine->set_mode(session, "plan", [&](engine::Outcome<p::SessionInfo> outcome) { mode = std::move(outcome); });
      CHECK_FALSE(model);  // the agent has not answered yet
      CHECK_FALSE(mode);
      CHECK(f.control->models_set == std::vector<std::string>{"big"});
      CHECK(f.control->modes_set == std::vector<std::string>{"plan"});
      f.settle();
      REQUIRE(model);
      REQUIRE(mode);
      const auto info = std::get<p::SessionInfo>(testing::get_session(*f.engine, f.io, session));
      CHECK(f.all<p::AgentErrorEvent>().empty());
      if (refused) {
        REQUIRE(std::holds_alternative<engine::EngineError>(*model));
        CHECK(std::get<engine::EngineError>(*model).code == p::ErrorCode::Unsupported);
        CHECK(std::get<engine::EngineError>(*model).message == "the agent refused it");
        REQUIRE(std::holds_alternative<engine::EngineError>(*mode));
        CHECK(std::get<engine::EngineError>(*mode).code == p::ErrorCode::Unsupported);
        CHECK(f.all<p::SessionUpdatedEvent>().empty());
        CHECK(info.model == std::optional<std::string>("small"));
        CHECK_FALSE(info.mode);
      } else {
        REQUIRE(std::holds_alternative<p::SessionInfo>(*model));
        CHECK(std::get<p::SessionInfo>(*model).model == std::optional<std::string>("big"));
        REQUIRE(std::holds_alternative<p::SessionInfo>(*mode));
        CHECK(std::get<p::SessionInfo>(*mode).mode == std::optional<std::string>("plan"));
        CHECK(f.all<p::SessionUpdatedEvent>().size() == 2);
        CHECK(info.model == std::optional<std::string>("big"));
      }
    }
  }
}

TEST_CASE("engine: a question answer the agent cannot take replies Unsupported and resolves the question as cancelled", "[engine]") {
  EngineFixture f;
  const auto session = f.create();
  f.control->turns.push_back({ScriptedAdapter::AskQuestion{"Which one?"}, ScriptedAdapter::End{}});
  f.send(session, "ask me");
  f.settle();
  const auto asked = f.all<p::QuestionRequestedEvent>();
  REQUIRE(asked.size() == 1);
  f.control->refuse_answers = adapters::AdapterError{p::ErrorCode::Unsupported, "this agent takes no answers"};
  const auto error = f.respond_question(p::QuestionRespondParams{asked[0].request.request_id, std::vector<std::string>{"that one"}, std::nullopt}, "tui");
  REQUIRE(error);
  CHECK(error->code == p::ErrorCode::Unsupported);
  const auto resolved = f.all<p::QuestionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].outcome == p::QuestionResolvedEventOutcome::Cancelled);
  CHECK(f.control->question_answers.empty());
  CHECK(std::get<p::SessionAttachResult>(testing::attach(*f.engine, f.io, session)).questions.empty());
  // Answered for good: a second client is late, not refused again.
  const auto late = f.respond_question(p::QuestionRespondParams{asked[0].request.request_id, std::nullopt, true}, "tui");
  REQUIRE(late);
  CHECK(late->code == p::ErrorCode::AlreadyAnswered);
  testing::cancel(*f.engine, f.io, session);
  f.settle();
}

TEST_CASE("engine: session.list pages newest first", "[engine]") {
  EngineFixture f;
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(f.create());
  p::SessionListParams params;
  params.limit = 2;
  std::vector<std::string> seen;
  for (int page = 0; page < 5; ++page) {
    const auto result = testing::listed(*f.engine, f.io, params);
    for (const auto& s : result.sessions) seen.push_back(s.session_id);
    if (!result.next_cursor) break;
    params.cursor = result.next_cursor;
  }
  CHECK(seen.size() == 5);
  std::sort(ids.begin(), ids.end());
  auto sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == ids);  // every session exactly once
}

// ---- An agent started ahead of its session (Engine::prestart) ------------------------------------------------

TEST_CASE("engine: the first new session that fits takes the agent started ahead, with what it reported meanwhile", "[engine]") {
  EngineFixture f;
  p::ModelInfo fast;
  fast.id = "fast";
  f.control->offered_models = {fast};
  f.engine->prestart(engine::AgentPrestart{"scripted", f.cwd, std::nullopt, std::nullopt});
  f.settle();
  // Started and ready before any session exists; the models it offered wait for the session.
  REQUIRE(f.control->starts == 1);
  CHECK(f.control->start_options[0].session_id == "prestarted");
  CHECK(f.control->start_options[0].cwd == f.cwd);
  CHECK(f.all<p::SessionUpdatedEvent>().empty());

  const auto session = f.create();
  auto sent = f.send(session, "hello");
  f.settle();
  REQUIRE(*sent);
  CHECK(std::holds_alternative<p::SessionSendResult>(**sent));
  CHECK(f.control->starts == 1);  // no second agent
  REQUIRE(f.control->inputs.size() == 1);
  CHECK(f.control->inputs[0].text == "hello");
  CHECK(f.all<p::TurnStoppedEvent>().size() == 1);
  const auto updates = f.all<p::SessionUpdatedEvent>();
  REQUIRE(updates.size() == 1);
  CHECK(updates[0].session.session_id == session);
  REQUIRE(updates[0].session.models);
  CHECK(updates[0].session.models->at(0).id == "fast");

  // Taken once: the next session starts an agent of its own.
  f.send(f.create(), "again");
  f.settle();
  CHECK(f.control->starts == 2);
}

TEST_CASE("engine: a session takes the agent started ahead while its start is still under way", "[engine]") {
  EngineFixture f;
  f.engine->prestart(engine::AgentPrestart{"scripted", f.cwd, std::nullopt, std::nullopt});
  // Created and sent to without letting the reactor run: the agent's start has not completed yet.
  p::SessionCreateParams params;
  params.agent = "scripted";
  params.cwd = f.cwd;
  std::optional<engine::Outcome<p::SessionInfo>> created;
  f.engine->create_session(params, [&](engine::Outcome<p::SessionInfo> outcome) { created = std::move(outcome); });
  REQUIRE(created);
  REQUIRE(std::holds_alternative<p::SessionInfo>(*created));
  auto sent = f.send(std::get<p::SessionInfo>(*created).session_id, "hello");
  CHECK(f.control->inputs.empty());
  f.settle();
  REQUIRE(*sent);
  CHECK(std::holds_alternative<p::SessionSendResult>(**sent));
  CHECK(f.control->starts == 1);
  REQUIRE(f.control->inputs.size() == 1);
  CHECK(f.all<p::TurnStoppedEvent>().size() == 1);
}

TEST_CASE("engine: a session that does not fit the agent started ahead starts its own, and that one is ended", "[engine]") {
  EngineFixture f;
  testing::TempDir elsewhere;
  // Each differs from the session in one thing only: its directory, its model, its mode.
  const std::vector<engine::AgentPrestart> misfits{
      {"scripted", elsewhere.path().string(), std::nullopt, std::nullopt},
      {"scripted", f.cwd, std::string("other-model"), std::nullopt},
      {"scripted", f.cwd, std::nullopt, std::string("plan")},
  };
  int starts = 0;
  for (const auto& misfit : misfits) {
    INFO("prestarted in " << misfit.cwd << " with model " << misfit.model.value_or("-") << " and mode " << misfit.mode.value_or("-"));
    f.engine->prestart(misfit);
    f.settle();
    REQUIRE(f.control->starts == starts + 1);
    const auto session = f.create();
    f.send(session, "hello");
    f.settle();
    REQUIRE(f.control->starts == starts + 2);
    CHECK(f.control->start_options.back().session_id == session);
    CHECK_FALSE(f.control->start_options.back().model);
    CHECK_FALSE(f.control->start_options.back().mode);
    starts += 2;
  }
  // Ended, not kept for later: a session the last one would have fitted (mode plan) starts its own agent too.
  p::SessionCreateParams params;
  params.agent = "scripted";
  params.cwd = f.cwd;
  params.mode = "plan";
  std::optional<engine::Outcome<p::SessionInfo>> created;
  f.engine->create_session(params, [&](engine::Outcome<p::SessionInfo> outcome) { created = std::move(outcome); });
  REQUIRE(created);
  REQUIRE(std::holds_alternative<p::SessionInfo>(*created));
  f.send(std::get<p::SessionInfo>(*created).session_id, "there");
  f.settle();
  CHECK(f.control->starts == starts + 1);
  CHECK(f.control->start_options.back().mode == "plan");
}

TEST_CASE("engine: an agent started ahead under a name no agent has starts nothing, and the session starts its own", "[engine]") {
  EngineFixture f;
  f.engine->prestart(engine::AgentPrestart{"no-such-agent", f.cwd, std::nullopt, std::nullopt});
  f.settle();
  CHECK(f.control->starts == 0);
  auto sent = f.send(f.create(), "hello");
  f.settle();
  REQUIRE(*sent);
  CHECK(std::holds_alternative<p::SessionSendResult>(**sent));
  REQUIRE(f.control->starts == 1);
  CHECK(f.control->start_options[0].session_id != "prestarted");
}

TEST_CASE("engine: an agent started ahead that failed is dropped, and the session's own start decides", "[engine]") {
  EngineFixture f;
  f.control->fail_start = adapters::AdapterError{p::ErrorCode::AgentUnavailable, "not yet"};
  f.engine->prestart(engine::AgentPrestart{"scripted", f.cwd, std::nullopt, std::nullopt});
  f.settle();
  REQUIRE(f.control->starts == 1);
  f.control->fail_start.reset();
  const auto session = f.create();
  auto sent = f.send(session, "hello");
  f.settle();
  CHECK(f.control->starts == 2);
  REQUIRE(*sent);
  CHECK(std::holds_alternative<p::SessionSendResult>(**sent));
  CHECK(f.all<p::AgentErrorEvent>().empty());  // the failure ahead of the session is no news to it
  CHECK(f.all<p::TurnStoppedEvent>().size() == 1);
}

}  // namespace engine_tests
