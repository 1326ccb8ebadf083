#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/StoredSessions.h"
#include "engine/Engine.h"
#include "store/Store.h"
#include "support/EngineCalls.h"
#include "support/ScriptedAdapter.h"
#include "support/StoreTestSupport.h"
#include "support/StoredEngineRun.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"

// What a session keeps of its controls across a daemon restart, with the real store: its MCP servers, the option
// values chosen, its latest plan and usage, its turns' references (fork and rewind points), and a fork still to
// make.

namespace session_controls_persistence_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
using switchboard::testing::TempDir;
namespace fs = std::filesystem;
namespace p = protocol;

// One run of the daemon's engine over the database in `dir`, its scripted agent with the controls these tests use.
struct DaemonRun : testing::StoredEngineRun {
  explicit DaemonRun(const fs::path& dir, const MakePersistence& persist = {})
      : StoredEngineRun(
            dir,
            [](ScriptedAdapter::Control& scripted) {
              scripted.capabilities.mcp = scripted.capabilities.options = scripted.capabilities.fork = true;
              scripted.capabilities.rewind = scripted.capabilities.plans = scripted.capabilities.context_usage = true;
            },
            persist) {}

  template <class T>
  T get(const std::optional<engine::Outcome<T>>& outcome) {
    REQUIRE(outcome);
    if (const auto* error = std::get_if<engine::EngineError>(&*outcome)) FAIL(error->message);
    return std::get<T>(*outcome);
  }

  std::string create(std::vector<p::McpServer> servers = {}) {
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = cwd;
    if (!servers.empty()) params.mcp_servers = std::move(servers);
    std::optional<engine::Outcome<p::SessionInfo>> outcome;
    engine->create_session(params, [&](engine::Outcome<p::SessionInfo> result) { outcome = std::move(result); });
    settle();
    return get(outcome).session_id;
  }

  void send(const std::string& session, std::string text) {
    p::SessionSendParams params;
    params.session_id = session;
    params.text = std::move(text);
    params.wait = false;
    engine->send(params, [](engine::Outcome<p::SessionSendResult>) {});
    settle();
  }

  p::SessionInfo info(const std::string& session) {
    auto outcome = testing::get_session(*engine, io, session);
    REQUIRE(std::holds_alternative<p::SessionInfo>(outcome));
    return std::get<p::SessionInfo>(outcome);
  }

  std::vector<std::string> turn_ids() const {
    std::vector<std::string> ids;
    for (const auto& e : events) {
      if (const auto* started = std::get_if<p::TurnStartedEvent>(&e.payload)) ids.push_back(started->turn_id);
    }
    return ids;
  }
};

p::McpServer echo_server() {
  p::McpServer server;
  server.name = "echo";
  server.transport = p::McpTransport::Stdio;
  server.command = "mcp-echo";
  server.args = std::vector<std::string>{"--tool", "echo"};
  server.env = nlohmann::json{{"TOKEN", "secret"}};
  return server;
}

TEST_CASE("controls store: MCP servers, chosen options, plan and usage survive a restart", "[engine][store][controls]") {
  TempDir dir{"controls-store"};
  std::string session;
  {
    DaemonRun run(dir.path());
    session = run.create({echo_server()});
    p::SessionSetOptionParams effort;
    effort.session_id = session;
    effort.option_id = "effort";
    effort.value = "high";
    std::optional<engine::Outcome<p::SessionInfo>> set;
    run.engine->set_option(effort, [&](engine::Outcome<p::SessionInfo> outcome) { set = std::move(outcome); });
    run.settle();
    run.get(set);
    p::ContextUsage usage;
    usage.used_tokens = 4321;
    usage.window_tokens = 200000;
    usage.cost_usd = 0.25;
    run.control->turns.push_back({ScriptedAdapter::Plan{{{p::PlanEntry{"step one", p::PlanEntryStatus::Completed, std::nullopt},
                                                          p::PlanEntry{"step two", p::PlanEntryStatus::Pending, p::PlanEntryPriority::High}}}},
                                  ScriptedAdapter::Usage{{usage}}, ScriptedAdapter::End{}});
    run.send(session, "plan");
    REQUIRE(run.control->start_options.size() == 1);
  }
  {
    DaemonRun run(dir.path());
    const auto info = run.info(session);  // dormant: read from what the store kept
    REQUIRE(info.plan);
    REQUIRE(info.plan->size() == 2);
    CHECK((*info.plan)[1].content == "step two");
    CHECK((*info.plan)[1].priority == std::optional<p::PlanEntryPriority>(p::PlanEntryPriority::High));
    REQUIRE(info.usage);
    CHECK(info.usage->used_tokens == 4321);
    CHECK(info.usage->window_tokens == std::optional<std::int64_t>(200000));
    CHECK(info.usage->cost_usd == std::optional<double>(0.25));
    REQUIRE(info.mcp_servers);
    REQUIRE(info.mcp_servers->size() == 1);
    CHECK((*info.mcp_servers)[0].name == "echo");
    CHECK((*info.mcp_servers)[0].status == p::McpServerStatusKind::Pending);

    // The restarted agent gets the same servers (env included) and the chosen option.
    run.send(session, "again");
    REQUIRE(run.control->start_options.size() == 1);
    const auto& start = run.control->start_options[0];
    REQUIRE(start.mcp_servers.size() == 1);
    CHECK(start.mcp_servers[0].env == std::optional<nlohmann::json>(nlohmann::json{{"TOKEN", "secret"}}));
    CHECK(start.mcp_servers[0].args == std::optional<std::vector<std::string>>(std::vector<std::string>{"--tool", "echo"}));
    CHECK(start.options == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});
  }
}

TEST_CASE("controls store: turns keep their references and rewound marks across a restart", "[engine][store][controls]") {
  TempDir dir{"controls-turns"};
  std::string session;
  std::vector<std::string> turns;
  {
    DaemonRun run(dir.path());
    session = run.create();
    run.send(session, "one");
    run.send(session, "two");
    run.send(session, "three");
    turns = run.turn_ids();
    REQUIRE(turns.size() == 3);
    p::SessionRewindParams rewind;
    rewind.session_id = session;
    rewind.turn_id = turns[2];
    std::optional<engine::Outcome<p::SessionRewindResult>> rewound;
    run.engine->rewind(rewind, [&](engine::Outcome<p::SessionRewindResult> outcome) { rewound = std::move(outcome); });
    run.settle();
    run.get(rewound);
  }
  {
    DaemonRun run(dir.path());
    p::SessionRewindParams rewind;
    rewind.session_id = session;
    rewind.turn_id = turns[2];
    std::optional<engine::Outcome<p::SessionRewindResult>> again;
    run.engine->rewind(rewind, [&](engine::Outcome<p::SessionRewindResult> outcome) { again = std::move(outcome); });
    run.settle();
    REQUIRE(again);
    REQUIRE(std::holds_alternative<engine::EngineError>(*again));
    CHECK(std::get<engine::EngineError>(*again).code == p::ErrorCode::UnknownTurn);  // rewound before the restart

    // The agent is started (resuming its conversation) and told the stored reference of the second turn.
    rewind.turn_id = turns[1];
    std::optional<engine::Outcome<p::SessionRewindResult>> rewound;
    run.engine->rewind(rewind, [&](engine::Outcome<p::SessionRewindResult> outcome) { rewound = std::move(outcome); });
    run.settle();
    CHECK(run.get(rewound).rewound_turn_ids == std::vector<std::string>{turns[1]});
    REQUIRE(run.control->start_options.size() == 1);
    CHECK(run.control->start_options[0].resume_provider_session_id == std::optional<std::string>("provider-1"));
    CHECK(run.control->rewinds == std::vector<std::string>{"ref-2"});
  }
}

// The daemon's persistence, whose event log holds one exchange: the engine here runs without the egress that
// writes the log, so the exchanges a lost conversation is seeded with are given as the log would give them.
struct OneExchangeStored : daemon::StoredSessions {
  using StoredSessions::StoredSessions;
  void exchanges(const std::string&, std::function<void(std::vector<engine::Exchange>)> done) override {
    done({engine::Exchange{"remember the number 42", "I will remember 42.", "t-1"}});
  }
};

TEST_CASE("controls store: a slash command sent as the first prompt of a fresh conversation keeps the stored transcript",
          "[engine][store][controls]") {
  TempDir dir{"controls-seeded-command"};
  DaemonRun run(dir.path(), [](store::Store& store) { return std::make_unique<OneExchangeStored>(store); });
  p::AgentCommand review;
  review.name = "review";
  run.control->at_start = {ScriptedAdapter::Commands{{{review}}}};
  const auto session = run.create();
  run.send(session, "remember the number 42");
  run.control->turns.push_back({ScriptedAdapter::Die{"killed"}});
  run.send(session, "die");
  REQUIRE(run.info(session).commands);
  // The agent no longer has the conversation: the session goes on in a fresh one, seeded with the transcript.
  run.control->fail_next_start = adapters::AdapterError{p::ErrorCode::ConversationLost, "no such session"};
  run.send(session, "/review src/main.cpp");
  REQUIRE(run.control->inputs.size() == 3);
  const auto& input = run.control->inputs.back();
  CHECK_FALSE(input.command);  // as text: adapters send a command as the command alone, which would drop the seed
  CHECK(input.text.find("remember the number 42") != std::string::npos);
  CHECK(input.text.size() > std::string("/review src/main.cpp").size());
  CHECK(input.text.substr(input.text.size() - std::string("/review src/main.cpp").size()) == "/review src/main.cpp");
  // Once the fresh conversation has its transcript, commands go as commands again.
  run.send(session, "/review again");
  REQUIRE(run.control->inputs.back().command);
  CHECK(run.control->inputs.back().command->name == "review");
}

// The daemon's persistence, whose event log holds one exchange of whatever session is asked for (the engine here
// runs without the egress that writes the log); it records whose exchanges were asked for.
struct AskedExchangesStored : daemon::StoredSessions {
  using StoredSessions::StoredSessions;
  std::vector<std::string> asked;
  void exchanges(const std::string& session_id, std::function<void(std::vector<engine::Exchange>)> done) override {
    asked.push_back(session_id);
    done({engine::Exchange{"the first prompt", "the first answer", "t-source-1"}});
  }
};

TEST_CASE("controls store: a fork whose source conversation the agent no longer has goes on in a fresh conversation "
          "seeded with the fork's stored exchanges",
          "[engine][store][controls][fork]") {
  TempDir dir{"controls-fork-lost"};
  AskedExchangesStored* stored = nullptr;
  DaemonRun run(dir.path(), [&stored](store::Store& store) {
    auto made = std::make_unique<AskedExchangesStored>(store);
    stored = made.get();
    return made;
  });
  const auto source = run.create();
  run.send(source, "one");
  run.send(source, "two");
  p::SessionForkParams params;
  params.session_id = source;
  params.turn_id = run.turn_ids()[0];
  std::optional<engine::Outcome<p::SessionInfo>> forked;
  run.engine->fork(params, [&](engine::Outcome<p::SessionInfo> outcome) { forked = std::move(outcome); });
  run.settle();
  const auto fork = run.get(forked).session_id;

  run.control->fail_next_start = adapters::AdapterError{p::ErrorCode::ConversationLost, "no such session to fork"};
  run.send(fork, "what if");
  // The fork's own exchanges (which the daemon's persistence begins with the source's, through the fork's turn).
  CHECK(stored->asked == std::vector<std::string>{fork});
  const auto& input = run.control->inputs.back();
  CHECK(input.text.find("the first prompt") != std::string::npos);
  CHECK(input.text.find("the first answer") != std::string::npos);
  CHECK(input.text.substr(input.text.size() - std::string("what if").size()) == "what if");
  // It is the fork's own conversation from now on, not a fork still to make.
  const auto& start = run.control->start_options.back();
  CHECK_FALSE(start.fork);
  CHECK_FALSE(start.resume_provider_session_id);
}

// An egress-shaped event of `session` at time `ts`, with `data` as its data.
bus::EncodedEventPtr stored_event(std::uint64_t seq, const std::string& session, std::int64_t ts, p::EventKind kind,
                                  const nlohmann::json& data) {
  auto event = std::make_shared<bus::EncodedEvent>();
  event->seq = seq;
  event->kind = kind;
  event->session_id = session;
  event->json = nlohmann::json{{"seq", seq}, {"type", std::string(p::event_info(kind).type)}, {"ts", ts},
                               {"sessionId", session}, {"data", data}}.dump();
  return event;
}

// A store holding sessions and their events as the daemon writes them, and the daemon's reading of exchanges.
struct StoredLog {
  testing::StoreTempDir dir;
  boost::asio::io_context io{1};
  std::unique_ptr<store::Store> store;
  std::uint64_t seq = 0;

  StoredLog() {
    auto opened = store::Store::open(io, dir.db());
    REQUIRE(opened);
    store = std::move(*opened);
  }
  void session(const std::string& id, std::int64_t created_at, const std::string& forked_from = "") {
    store::SessionRecord record;
    record.id = id;
    record.agent = "scripted";
    record.cwd = "/w";
    record.created_at = record.updated_at = created_at;
    record.forked_from = forked_from;
    REQUIRE(testing::await_store<store::SessionRecord>(io, [&](auto done) { store->sessions().insert_session(record, done); }));
  }
  void turn(const std::string& session, std::int64_t ts, const std::string& id, const std::string& prompt, const std::string& answer) {
    store->events().on_event(stored_event(++seq, session, ts, p::EventKind::TurnStarted, {{"turnId", id}, {"text", prompt}}));
    store->events().on_event(stored_event(++seq, session, ts, p::EventKind::TurnStopped,
                                          {{"turnId", id}, {"stopReason", "end_turn"}, {"text", answer}}));
  }
  void rewind(const std::string& session, std::int64_t ts, const std::string& turn, std::vector<std::string> listed, bool conversation) {
    store->events().on_event(stored_event(++seq, session, ts, p::EventKind::SessionRewound,
                                          {{"turnId", turn}, {"rewoundTurnIds", listed}, {"conversation", conversation},
                                           {"files", !conversation}}));
  }
  // "prompt/answer/turn" of each exchange the daemon would seed `session`'s fresh conversation with.
  std::vector<std::string> exchanges(const std::string& session) {
    REQUIRE(testing::await_store<std::uint64_t>(io, [&](auto done) { store->events().flush(done); }));
    daemon::StoredSessions stored(*store);
    std::optional<std::vector<engine::Exchange>> read;
    stored.exchanges(session, [&](std::vector<engine::Exchange> exchanges) { read = std::move(exchanges); });
    REQUIRE(testing::run_handlers_until(io, [&] { return read.has_value(); }));
    std::vector<std::string> lines;
    for (const auto& exchange : *read) lines.push_back(exchange.prompt + "/" + exchange.answer + "/" + exchange.turn_id);
    return lines;
  }
};

TEST_CASE("controls store: the exchanges a lost conversation is seeded with leave out the turns a rewind of the "
          "conversation undid", "[engine][store][controls][rewind]") {
  StoredLog log;
  log.session("s-1", 1000);
  log.turn("s-1", 1000, "t-1", "alpha", "one");
  log.turn("s-1", 2000, "t-2", "beta", "two");
  log.turn("s-1", 3000, "t-3", "gamma", "three");
  // The files alone went back before t-3: the agent still holds it; the session marks it rewound, so the next
  // rewind does not list it again.
  log.rewind("s-1", 4000, "t-3", {"t-3"}, false);
  // The conversation went back before t-2: t-2 and every later turn are gone from it.
  log.rewind("s-1", 5000, "t-2", {"t-2"}, true);
  log.turn("s-1", 6000, "t-4", "delta", "four");
  CHECK(log.exchanges("s-1") == std::vector<std::string>{"alpha/one/t-1", "delta/four/t-4"});
}

TEST_CASE("controls store: a fork's exchanges begin with its source's through the fork's turn, through a fork of a "
          "fork, whatever the source did later", "[engine][store][controls][fork]") {
  StoredLog log;
  log.session("s-a", 1000);
  log.turn("s-a", 1000, "t-1", "alpha", "one");
  log.turn("s-a", 2000, "t-2", "beta", "two");
  // B forks A at t-1; C forks B (no turn of its own yet) at 7000.
  log.session("s-b", 5000, R"({"sessionId":"s-a","turnId":"t-1"})");
  log.rewind("s-a", 5500, "t-1", {"t-1", "t-2"}, true);  // A's later rewind: B copied t-1 before it
  log.turn("s-a", 6500, "t-3", "gamma", "three");
  log.turn("s-b", 6000, "b-1", "bee", "bzz");
  log.session("s-c", 7000, R"({"sessionId":"s-b"})");
  log.turn("s-b", 8000, "b-2", "later", "after c was made");
  CHECK(log.exchanges("s-a") == std::vector<std::string>{"gamma/three/t-3"});
  CHECK(log.exchanges("s-b") == std::vector<std::string>{"alpha/one/t-1", "bee/bzz/b-1", "later/after c was made/b-2"});
  CHECK(log.exchanges("s-c") == std::vector<std::string>{"alpha/one/t-1", "bee/bzz/b-1"});
  // A fork whose turn is no longer in its source's log holds nothing the daemon can name.
  log.session("s-d", 9000, R"({"sessionId":"s-a","turnId":"t-gone"})");
  CHECK(log.exchanges("s-d").empty());
}

TEST_CASE("controls store: a fork not started before a restart still forks through its turn", "[engine][store][controls]") {
  TempDir dir{"controls-fork"};
  std::string fork;
  std::string source;
  std::vector<std::string> turns;
  {
    DaemonRun run(dir.path());
    source = run.create({echo_server()});
    run.send(source, "one");
    run.send(source, "two");
    turns = run.turn_ids();
    p::SessionForkParams params;
    params.session_id = source;
    params.turn_id = turns[0];
    std::optional<engine::Outcome<p::SessionInfo>> forked;
    run.engine->fork(params, [&](engine::Outcome<p::SessionInfo> outcome) { forked = std::move(outcome); });
    run.settle();
    fork = run.get(forked).session_id;
  }
  {
    DaemonRun run(dir.path());
    const auto info = run.info(fork);
    REQUIRE(info.forked_from);
    CHECK(info.forked_from->session_id == source);
    CHECK(info.forked_from->turn_id == std::optional<std::string>(turns[0]));
    run.send(fork, "what if");
    REQUIRE(run.control->start_options.size() == 1);
    const auto& start = run.control->start_options[0];
    CHECK(start.fork);
    CHECK(start.resume_provider_session_id == std::optional<std::string>("provider-1"));
    CHECK(start.fork_through_turn_ref == std::optional<std::string>("ref-1"));
    CHECK(start.mcp_servers.size() == 1);
  }
}

// The daemon's persistence, whose answers to "which conversation did this session last run" wait until the test
// lets them go.
struct HeldLatestRun : daemon::StoredSessions {
  using StoredSessions::StoredSessions;
  std::vector<std::function<void()>> held;
  void latest_run(const std::string& session_id, std::function<void(std::optional<engine::ConversationBinding>)> done) override {
    held.push_back([this, session_id, done = std::move(done)] { StoredSessions::latest_run(session_id, done); });
  }
};

TEST_CASE("controls store: a prompt sent while a fork point reads the stored conversation resumes that conversation",
          "[engine][store][controls]") {
  TempDir dir{"controls-lookup"};
  std::string session;
  {
    DaemonRun run(dir.path());
    session = run.create();
    run.send(session, "one");
  }
  HeldLatestRun* persistence = nullptr;
  DaemonRun run(dir.path(), [&](store::Store& opened) {
    auto made = std::make_unique<HeldLatestRun>(opened);
    persistence = made.get();
    return made;
  });
  // The fork point reads which conversation the session continues; meanwhile a prompt starts the agent.
  p::SessionForkParams params;
  params.session_id = session;
  std::optional<engine::Outcome<p::SessionInfo>> forked;
  run.engine->fork(params, [&](engine::Outcome<p::SessionInfo> outcome) { forked = std::move(outcome); });
  run.settle();
  REQUIRE(persistence->held.size() == 1);
  run.send(session, "two");
  CHECK(run.control->start_options.empty());  // the start waits for the look-up under way
  CHECK(persistence->held.size() == 1);       // and asks no second time
  for (auto& release : std::exchange(persistence->held, {})) release();
  run.settle();
  REQUIRE(run.control->start_options.size() == 1);
  CHECK(run.control->start_options[0].resume_provider_session_id == std::optional<std::string>("provider-1"));
  REQUIRE(forked);
  // The fork point was taken as the prompt arrived: the session was busy by then.
  if (const auto* error = std::get_if<engine::EngineError>(&*forked)) CHECK(error->code == p::ErrorCode::SessionBusy);
}

}  // namespace session_controls_persistence_tests
