#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/RequestBroker.h"
#include "engine/RuleBook.h"

// The request broker on its own: no engine, no session, no agent. A recording host and asker stand in for the
// daemon and the session, so every rule (first answer wins, rules, headless policy, timeouts, withdrawal, typed
// refusals) is checked at the broker's boundary.

namespace request_broker_tests {

namespace p = switchboard::protocol;
namespace adapters = switchboard::adapters;
using switchboard::engine::EngineError;
using switchboard::engine::HeadlessPolicy;
using switchboard::engine::RequestBroker;
using switchboard::engine::RuleBook;

class Host : public RequestBroker::Host {
 public:
  explicit Host(RuleBook& rules) : m_rules(rules) {}
  std::vector<std::pair<std::string, p::EventPayload>> published;
  bool answering_client = true;

  void publish(const std::string& session_id, p::EventPayload event) override { published.emplace_back(session_id, std::move(event)); }
  bool can_ask_someone() const override { return answering_client; }
  std::string remember_rule(p::RuleScope scope, const std::string& session_id, const std::string& cwd, p::PermissionRule rule) override {
    return m_rules.add(scope, session_id, cwd, std::move(rule), true).rule_id;
  }

  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& [session, event] : published) {
      if (const auto* data = std::get_if<T>(&event)) out.push_back(*data);
    }
    return out;
  }

 private:
  RuleBook& m_rules;
};

// Records what the broker passes to the agent; completes at once with `refusal`, or holds the completion.
class Asker : public RequestBroker::Asker {
 public:
  std::vector<std::pair<std::string, adapters::PermissionAnswer>> permissions;
  std::vector<std::pair<std::string, adapters::QuestionAnswer>> questions;
  std::vector<adapters::Completion> held;
  std::optional<adapters::AdapterError> refusal;
  bool hold = false;
  int changes = 0;

  void deliver(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) override {
    permissions.emplace_back(native_id, std::move(answer));
    complete(std::move(done));
  }
  void deliver(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) override {
    questions.emplace_back(native_id, std::move(answer));
    complete(std::move(done));
  }
  void requests_changed() override { ++changes; }

 private:
  void complete(adapters::Completion done) {
    if (hold) return held.push_back(std::move(done));
    done(refusal);
  }
};

using Slot = std::shared_ptr<std::optional<std::optional<EngineError>>>;

struct Fixture {
  boost::asio::io_context io{1};
  RuleBook rules;
  Host host{rules};
  Asker asker;
  std::optional<RequestBroker> broker;

  explicit Fixture(RequestBroker::Policy policy = {}) { broker.emplace(io, host, rules, policy); }

  adapters::PermissionAsk bash(const std::string& native_id, const std::string& command) const {
    adapters::PermissionAsk ask;
    ask.native_id = native_id;
    ask.tool = "Bash";
    ask.input = {{"command", command}};
    ask.subject = command;
    ask.suggested_rule = p::PermissionRule{"Bash", command};
    return ask;
  }
  std::string ask_permission(const std::string& native_id, const std::string& command, const std::string& session = "s-1") {
    broker->ask_permission(asker, session, "/project", "t-1", bash(native_id, command));
    return host.all<p::PermissionRequestedEvent>().back().request.request_id;
  }
  std::string ask_question(const std::string& native_id, const std::string& session = "s-1") {
    broker->ask_question(asker, session, "t-1", adapters::QuestionAsk{native_id, {p::Question{"Which?", std::nullopt, std::nullopt, std::nullopt}}});
    return host.all<p::QuestionRequestedEvent>().back().request.request_id;
  }

  // The broker's answer to a client's answer, filled when it comes: nullopt inside means it was taken.
  Slot answer(const std::string& request_id, p::PermissionDecision decision) {
    auto slot = std::make_shared<std::optional<std::optional<EngineError>>>();
    broker->answer_permission(p::PermissionRespondParams{request_id, decision, std::nullopt, std::nullopt}, std::string("tui"),
                              [slot](std::optional<EngineError> error) { *slot = std::move(error); });
    return slot;
  }
  Slot answer_question(const std::string& request_id, std::vector<std::string> answers) {
    auto slot = std::make_shared<std::optional<std::optional<EngineError>>>();
    broker->answer_question(p::QuestionRespondParams{request_id, std::move(answers), std::nullopt}, std::string("tui"),
                            [slot](std::optional<EngineError> error) { *slot = std::move(error); });
    return slot;
  }

  void run_for(std::chrono::milliseconds time) {
    io.restart();
    io.run_for(time);
  }
};

p::ErrorCode code_of(const Slot& slot) {
  REQUIRE(slot->has_value());
  REQUIRE(slot->value().has_value());
  return slot->value()->code;
}

// The answer came, and the agent took it.
bool taken(const Slot& slot) {
  REQUIRE(slot->has_value());
  return !slot->value().has_value();
}

TEST_CASE("request broker: an open request waits for a client, whose answer reaches the agent and resolves it", "[engine][broker]") {
  Fixture f;
  const auto id = f.ask_permission("n-1", "make");
  CHECK(f.broker->has_open("s-1"));
  CHECK(f.asker.changes == 1);
  REQUIRE(f.broker->open_permissions("s-1").size() == 1);
  CHECK(f.broker->open_permissions("s-1")[0].turn_id == "t-1");
  CHECK(f.broker->open_permissions("s-2").empty());
  CHECK(f.host.all<p::PermissionResolvedEvent>().empty());

  CHECK(taken(f.answer(id, p::PermissionDecision::AllowOnce)));
  REQUIRE(f.asker.permissions.size() == 1);
  CHECK(f.asker.permissions[0].first == "n-1");
  CHECK(f.asker.permissions[0].second.allow);
  REQUIRE(f.host.all<p::PermissionRespondingEvent>().size() == 1);
  const auto resolved = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Allowed);
  CHECK(resolved[0].resolved_by == p::PermissionResolvedEventResolvedBy::Client);
  CHECK(resolved[0].client_id == std::optional<std::string>("tui"));
  CHECK_FALSE(f.broker->has_open("s-1"));
  CHECK(f.asker.changes == 2);
}

TEST_CASE("request broker: first answer wins, every later answer gets AlreadyAnswered (-32002)", "[engine][broker]") {
  Fixture f;
  const auto permission = f.ask_permission("n-1", "make");
  const auto question = f.ask_question("n-2");
  CHECK(taken(f.answer(permission, p::PermissionDecision::Deny)));
  CHECK(taken(f.answer_question(question, {"this"})));
  for (int attempt = 0; attempt < 3; ++attempt) {
    CHECK(code_of(f.answer(permission, p::PermissionDecision::AllowOnce)) == p::ErrorCode::AlreadyAnswered);
    CHECK(code_of(f.answer_question(question, {"that"})) == p::ErrorCode::AlreadyAnswered);
  }
  CHECK(static_cast<int>(p::ErrorCode::AlreadyAnswered) == -32002);
  // The agent heard each answer once, the first.
  REQUIRE(f.asker.permissions.size() == 1);
  CHECK_FALSE(f.asker.permissions[0].second.allow);
  REQUIRE(f.asker.questions.size() == 1);
  CHECK(f.asker.questions[0].second.answers == std::vector<std::string>{"this"});
  CHECK(f.host.all<p::PermissionResolvedEvent>().size() == 1);
  CHECK(f.host.all<p::QuestionResolvedEvent>().size() == 1);
}

TEST_CASE("request broker: while the agent takes an answer, a racing second answer is already too late", "[engine][broker]") {
  Fixture f;
  f.asker.hold = true;
  const auto id = f.ask_permission("n-1", "make");
  const auto first = f.answer(id, p::PermissionDecision::AllowOnce);
  CHECK_FALSE(first->has_value());  // the agent has not taken it yet
  CHECK(f.host.all<p::PermissionResolvedEvent>().empty());
  CHECK(code_of(f.answer(id, p::PermissionDecision::Deny)) == p::ErrorCode::AlreadyAnswered);
  REQUIRE(f.asker.held.size() == 1);
  f.asker.held[0](std::nullopt);
  CHECK(taken(first));
  const auto resolved = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Allowed);
}

TEST_CASE("request broker: ids that were never opened, or name the other kind, are UnknownRequest", "[engine][broker]") {
  Fixture f;
  CHECK(code_of(f.answer("req-nope", p::PermissionDecision::AllowOnce)) == p::ErrorCode::UnknownRequest);
  CHECK(code_of(f.answer_question("req-nope", {})) == p::ErrorCode::UnknownRequest);
  const auto permission = f.ask_permission("n-1", "make");
  const auto question = f.ask_question("n-2");
  CHECK(code_of(f.answer_question(permission, {})) == p::ErrorCode::UnknownRequest);
  CHECK(code_of(f.answer(question, p::PermissionDecision::AllowOnce)) == p::ErrorCode::UnknownRequest);
  CHECK(f.broker->has_open("s-1"));  // a wrong answer leaves them open
  CHECK(f.asker.permissions.empty());
  CHECK(f.asker.questions.empty());
}

TEST_CASE("request broker: an answer the agent refuses reaches the client as its typed error and resolves as cancelled", "[engine][broker]") {
  Fixture f;
  f.asker.refusal = adapters::AdapterError{p::ErrorCode::Unsupported, "this agent takes no answers"};
  const auto question = f.ask_question("n-1");
  const auto permission = f.ask_permission("n-2", "make");
  CHECK(code_of(f.answer_question(question, {"yes"})) == p::ErrorCode::Unsupported);
  CHECK(code_of(f.answer(permission, p::PermissionDecision::AllowOnce)) == p::ErrorCode::Unsupported);
  const auto questions = f.host.all<p::QuestionResolvedEvent>();
  REQUIRE(questions.size() == 1);
  CHECK(questions[0].outcome == p::QuestionResolvedEventOutcome::Cancelled);
  CHECK_FALSE(questions[0].answers);
  const auto permissions = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(permissions.size() == 1);
  CHECK(permissions[0].outcome == p::PermissionResolvedEventOutcome::Cancelled);
  CHECK_FALSE(f.broker->has_open("s-1"));
  // Resolved for good: answering again is a late answer, not a second try.
  CHECK(code_of(f.answer_question(question, {"yes"})) == p::ErrorCode::AlreadyAnswered);
}

TEST_CASE("request broker: a remembered rule decides at once, for its scope only", "[engine][broker]") {
  Fixture f;
  const auto first = f.ask_permission("n-1", "npm test");
  CHECK(taken(f.answer(first, p::PermissionDecision::AllowProject)));
  REQUIRE(f.rules.list(std::nullopt, std::nullopt).size() == 1);
  CHECK(f.host.all<p::PermissionResolvedEvent>().back().rule_id == f.rules.list(std::nullopt, std::nullopt)[0].rule_id);

  // Another session in the same project: the rule answers, nobody is asked, no timer waits.
  f.broker->ask_permission(f.asker, "s-2", "/project", "t-2", f.bash("n-2", "npm test"));
  auto resolved = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 2);
  CHECK(resolved[1].resolved_by == p::PermissionResolvedEventResolvedBy::Rule);
  CHECK(resolved[1].outcome == p::PermissionResolvedEventOutcome::Allowed);
  CHECK(f.host.all<p::PermissionRequestedEvent>().back().request.reason == "rule " + *resolved[1].rule_id);
  CHECK(f.asker.permissions.back().first == "n-2");
  CHECK(f.asker.permissions.back().second.allow);
  CHECK_FALSE(f.broker->has_open("s-2"));

  // Another project, or another command: asked.
  f.broker->ask_permission(f.asker, "s-3", "/elsewhere", "t-3", f.bash("n-3", "npm test"));
  f.ask_permission("n-4", "rm -rf build");
  CHECK(f.host.all<p::PermissionResolvedEvent>().size() == 2);
  CHECK(f.broker->open_permissions("s-3").size() == 1);
  CHECK(f.broker->open_permissions("s-1").size() == 1);
}

TEST_CASE("request broker: with nobody to ask, the headless policy decides permissions and questions are rejected", "[engine][broker]") {
  for (const auto policy : {HeadlessPolicy::Deny, HeadlessPolicy::Allow}) {
    DYNAMIC_SECTION((policy == HeadlessPolicy::Allow ? "allow" : "deny")) {
      Fixture f(RequestBroker::Policy{std::chrono::minutes(30), policy});
      f.host.answering_client = false;
      f.ask_permission("n-1", "make");
      f.ask_question("n-2");
      const auto permissions = f.host.all<p::PermissionResolvedEvent>();
      REQUIRE(permissions.size() == 1);
      CHECK(permissions[0].resolved_by == p::PermissionResolvedEventResolvedBy::Headless);
      REQUIRE(f.asker.permissions.size() == 1);
      CHECK(f.asker.permissions[0].second.allow == (policy == HeadlessPolicy::Allow));
      if (policy == HeadlessPolicy::Deny) CHECK(f.asker.permissions[0].second.message == std::optional<std::string>("no client is attached to answer"));
      const auto questions = f.host.all<p::QuestionResolvedEvent>();
      REQUIRE(questions.size() == 1);
      CHECK(questions[0].resolved_by == p::QuestionResolvedEventResolvedBy::Headless);
      CHECK(questions[0].outcome == p::QuestionResolvedEventOutcome::Rejected);
      REQUIRE(f.asker.questions.size() == 1);
      CHECK(f.asker.questions[0].second.rejected);
      CHECK_FALSE(f.broker->has_open("s-1"));
    }
  }
}

TEST_CASE("request broker: an unanswered request times out as a deny or a rejection, an answered one never does", "[engine][broker]") {
  Fixture f(RequestBroker::Policy{std::chrono::milliseconds(30), HeadlessPolicy::Allow});
  const auto answered = f.ask_permission("n-0", "ls");
  CHECK(taken(f.answer(answered, p::PermissionDecision::AllowOnce)));
  f.ask_permission("n-1", "make");
  f.ask_question("n-2");
  f.run_for(std::chrono::milliseconds(300));
  const auto permissions = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(permissions.size() == 2);
  CHECK(permissions[1].resolved_by == p::PermissionResolvedEventResolvedBy::Timeout);
  CHECK(permissions[1].outcome == p::PermissionResolvedEventOutcome::Denied);
  REQUIRE(f.asker.permissions.size() == 2);
  CHECK_FALSE(f.asker.permissions[1].second.allow);
  CHECK(f.asker.permissions[1].second.message == std::optional<std::string>("nobody answered in time"));
  const auto questions = f.host.all<p::QuestionResolvedEvent>();
  REQUIRE(questions.size() == 1);
  CHECK(questions[0].resolved_by == p::QuestionResolvedEventResolvedBy::Timeout);
  CHECK(questions[0].outcome == p::QuestionResolvedEventOutcome::Rejected);
  CHECK_FALSE(f.broker->has_open("s-1"));
}

TEST_CASE("request broker: a withdrawn request resolves as cancelled, its agent hears nothing, a late answer is AlreadyAnswered", "[engine][broker]") {
  Fixture f;
  const auto permission = f.ask_permission("n-1", "make");
  const auto question = f.ask_question("n-2");
  f.ask_permission("n-1", "make", "s-2");  // the same native id in another session is another request
  f.broker->withdraw("s-1", "n-1");
  f.broker->withdraw("s-1", "n-2");
  f.broker->withdraw("s-1", "n-unknown");
  CHECK(f.asker.permissions.empty());
  CHECK(f.asker.questions.empty());
  const auto permissions = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(permissions.size() == 1);
  CHECK(permissions[0].request_id == permission);
  CHECK(permissions[0].outcome == p::PermissionResolvedEventOutcome::Cancelled);
  CHECK(permissions[0].resolved_by == p::PermissionResolvedEventResolvedBy::Cancel);
  const auto questions = f.host.all<p::QuestionResolvedEvent>();
  REQUIRE(questions.size() == 1);
  CHECK(questions[0].outcome == p::QuestionResolvedEventOutcome::Cancelled);
  CHECK(code_of(f.answer(permission, p::PermissionDecision::AllowOnce)) == p::ErrorCode::AlreadyAnswered);
  CHECK(code_of(f.answer_question(question, {"x"})) == p::ErrorCode::AlreadyAnswered);
  CHECK(f.broker->open_permissions("s-2").size() == 1);
}

TEST_CASE("request broker: cancelling a session's requests leaves the others open", "[engine][broker]") {
  Fixture f;
  f.ask_permission("n-1", "make");
  f.ask_question("n-2");
  const auto other = f.ask_permission("n-3", "make", "s-2");
  f.broker->cancel_all("s-1");
  CHECK_FALSE(f.broker->has_open("s-1"));
  CHECK(f.broker->has_open("s-2"));
  CHECK(f.host.all<p::PermissionResolvedEvent>().size() == 1);
  CHECK(f.host.all<p::QuestionResolvedEvent>().size() == 1);
  CHECK(f.asker.permissions.empty());
  CHECK(taken(f.answer(other, p::PermissionDecision::AllowOnce)));
}

TEST_CASE("request broker: an answer the agent has not confirmed when its turn ends resolves as given before the end, once", "[engine][broker]") {
  // An agent behind HTTP (OpenCode, the fake server agent) can end the turn a deny decided before the reply to
  // the deny arrives: the session's end of turn (cancel_all) must not leave the decision out of the turn.
  Fixture f;
  f.asker.hold = true;
  const auto denied = f.ask_permission("n-1", "make");
  const auto question = f.ask_question("n-2");
  const auto deny = f.answer(denied, p::PermissionDecision::Deny);
  const auto answered = f.answer_question(question, {"this one"});
  CHECK(f.host.all<p::PermissionResolvedEvent>().empty());
  f.broker->cancel_all("s-1");
  auto resolved = f.host.all<p::PermissionResolvedEvent>();
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].outcome == p::PermissionResolvedEventOutcome::Denied);
  const auto questions = f.host.all<p::QuestionResolvedEvent>();
  REQUIRE(questions.size() == 1);
  CHECK(questions[0].outcome == p::QuestionResolvedEventOutcome::Answered);
  // The agent's confirmations come later: nothing is resolved twice, and each client still hears its answer taken.
  const auto published = f.host.published.size();
  REQUIRE(f.asker.held.size() == 2);
  f.asker.held[0](std::nullopt);
  f.asker.held[1](std::nullopt);
  CHECK(f.host.published.size() == published);
  CHECK(taken(deny));
  CHECK(taken(answered));
}

TEST_CASE("request broker: a forgotten session hears nothing more, not even an answer its agent completes late", "[engine][broker]") {
  Fixture f;
  f.asker.hold = true;
  const auto id = f.ask_permission("n-1", "make");
  f.ask_question("n-2");
  const auto result = f.answer(id, p::PermissionDecision::AllowOnce);
  CHECK_FALSE(result->has_value());
  f.broker->forget("s-1");
  const auto before = f.host.published.size();
  const int changes = f.asker.changes;
  REQUIRE(f.asker.held.size() == 1);
  f.asker.held[0](std::nullopt);
  CHECK(f.host.published.size() == before);
  CHECK(f.asker.changes == changes);
  CHECK(taken(result));  // the client is still answered
  CHECK(f.host.all<p::QuestionResolvedEvent>().size() == 1);  // cancelled as the session went
}

}  // namespace request_broker_tests
