#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/EngineMethods.h"
#include "engine/Engine.h"
#include "support/RecordingPeer.h"
#include "support/ScriptedAdapter.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"

// The controls an agent offers beyond a turn, engine side, with the scripted agent: MCP servers given at
// session.create, options, slash commands, plans and usage, fork, rewind and compact. Each refusal is checked to
// change nothing.

namespace session_controls_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
namespace p = protocol;
using Json = nlohmann::json;

struct ControlsFixture {
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::unique_ptr<engine::Engine> engine;
  rpc::Dispatcher dispatcher;
  std::vector<bus::BusEvent> events;
  bus::Subscription recorder = bus.subscribe_all([this](const bus::BusEvent& e) { events.push_back(e); });
  std::shared_ptr<testing::RecordingPeer> peer = std::make_shared<testing::RecordingPeer>(false);
  std::string cwd = std::filesystem::temp_directory_path().string();
  int next_id = 1;

  ControlsFixture() {
    control->capabilities.mcp = control->capabilities.options = control->capabilities.commands = true;
    control->capabilities.fork = control->capabilities.rewind = control->capabilities.compact = true;
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)});
    daemon::bind_engine_methods(dispatcher, *engine);
    bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
  }

  void settle() {
    io.restart();
    while (io.poll() > 0) {
    }
  }

  // A call over the wire (the dispatcher the daemon binds), answered once the reactor has settled.
  Json call(const std::string& method, const Json& params) {
    const int id = next_id++;
    dispatcher.handle_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump(), peer);
    settle();
    for (const auto& response : peer->responses) {
      if (response.value("id", 0) == id) return response;
    }
    FAIL("no answer to " << method);
    return {};
  }

  std::string create(Json extra = Json::object()) {
    Json params{{"agent", "scripted"}, {"cwd", cwd}};
    params.update(extra);
    const auto created = call("session.create", params);
    REQUIRE(created.contains("result"));
    return created["result"]["session"]["sessionId"];
  }

  // Sends a prompt and lets its turn run to its end (or as far as the script goes).
  Json send(const std::string& session, const std::string& text, bool wait = true) {
    return call("session.send", {{"sessionId", session}, {"text", text}, {"wait", wait}});
  }

  std::vector<std::string> turn_ids(const std::string& session) const {
    std::vector<std::string> ids;
    for (const auto& e : events) {
      if (e.session_id != session) continue;
      if (const auto* started = std::get_if<p::TurnStartedEvent>(&e.payload)) ids.push_back(started->turn_id);
    }
    return ids;
  }

  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& e : events) {
      if (const auto* data = std::get_if<T>(&e.payload)) out.push_back(*data);
    }
    return out;
  }

  std::size_t session_count() { return call("session.list", Json::object())["result"]["sessions"].size(); }
};

Json error_of(const Json& response) {
  REQUIRE(response.contains("error"));
  return response["error"];
}

Json stdio_server(const std::string& name) {
  return Json{{"name", name}, {"transport", "stdio"}, {"command", "mcp-echo"}, {"args", {"--tool", "echo"}}, {"env", {{"TOKEN", "secret"}}}};
}

// ---- MCP servers ---------------------------------------------------------------------------------------------

TEST_CASE("controls: bad mcpServers get -32602 with the bad field's path and create nothing", "[engine][controls]") {
  ControlsFixture f;
  struct Case {
    Json servers;
    std::string pointer;
  };
  const std::vector<Case> cases = {
      {Json::array({{{"name", "a"}, {"transport", "stdio"}}}), "/mcpServers/0/command"},
      {Json::array({stdio_server("a"), {{"name", "b"}, {"transport", "http"}}}), "/mcpServers/1/url"},
      {Json::array({{{"name", "a"}, {"transport", "stdio"}, {"command", "x"}, {"env", {{"N", 7}}}}}), "/mcpServers/0/env/N"},
      {Json::array({{{"name", "a"}, {"transport", "http"}, {"url", "http://127.0.0.1:9/mcp"}, {"headers", {{"X", true}}}}}),
       "/mcpServers/0/headers/X"},
      {Json::array({stdio_server("same"), stdio_server("same")}), "/mcpServers/1/name"},
      {Json::array({{{"name", "a"}, {"transport", "stdio"}, {"command", "x"}, {"url", "http://127.0.0.1:9/mcp"}}}), "/mcpServers/0/url"},
      {Json::array({{{"name", "a"}, {"transport", "http"}, {"url", "http://127.0.0.1:9/mcp"}, {"env", {{"A", "b"}}}}}), "/mcpServers/0/env"},
  };
  for (const auto& bad : cases) {
    CAPTURE(bad.servers.dump());
    const auto error = error_of(f.call("session.create", {{"agent", "scripted"}, {"cwd", f.cwd}, {"mcpServers", bad.servers}}));
    CHECK(error["code"] == -32602);
    CHECK(error["data"]["pointer"] == bad.pointer);
    CHECK(error["message"].get<std::string>().find(bad.pointer) != std::string::npos);
  }
  CHECK(f.session_count() == 0);
  CHECK(f.all<p::SessionCreatedEvent>().empty());
}

TEST_CASE("controls: an agent without MCP refuses mcpServers with Unsupported, none given is fine", "[engine][controls]") {
  ControlsFixture f;
  f.control->capabilities.mcp = false;
  const auto error = error_of(f.call("session.create", {{"agent", "scripted"}, {"cwd", f.cwd}, {"mcpServers", {stdio_server("a")}}}));
  CHECK(error["code"] == -32015);
  CHECK(f.session_count() == 0);
  f.create();
  CHECK(f.session_count() == 1);
}

TEST_CASE("controls: MCP servers reach every start, session info shows them pending then as reported, never env or headers",
          "[engine][controls]") {
  ControlsFixture f;
  const Json http{{"name", "web"}, {"transport", "http"}, {"url", "http://127.0.0.1:9/mcp"}, {"headers", {{"Authorization", "Bearer x"}}}};
  const auto session = f.create({{"mcpServers", {stdio_server("echo"), http}}});
  const auto info = f.call("session.get", {{"sessionId", session}})["result"]["session"];
  CHECK(info["mcpServers"] == Json::array({{{"name", "echo"}, {"transport", "stdio"}, {"status", "pending"}},
                                           {{"name", "web"}, {"transport", "http"}, {"status", "pending"}}}));
  CHECK(info.dump().find("secret") == std::string::npos);
  CHECK(info.dump().find("Bearer") == std::string::npos);

  p::McpServerState connected{"echo", p::McpTransport::Stdio, p::McpServerStatusKind::Connected, std::nullopt, 1};
  p::McpServerState failed{"web", p::McpTransport::Http, p::McpServerStatusKind::Failed, std::string("refused"), std::nullopt};
  f.control->at_start = {ScriptedAdapter::McpStatus{{{connected, failed}}}};
  f.send(session, "hi");
  REQUIRE(f.control->start_options.size() == 1);
  const auto& given = f.control->start_options[0].mcp_servers;
  REQUIRE(given.size() == 2);
  CHECK(given[0].command == std::optional<std::string>("mcp-echo"));
  CHECK(given[0].env == std::optional<Json>(Json{{"TOKEN", "secret"}}));
  CHECK(given[1].url == std::optional<std::string>("http://127.0.0.1:9/mcp"));
  const auto reported = f.call("session.get", {{"sessionId", session}})["result"]["session"]["mcpServers"];
  CHECK(reported[0]["status"] == "connected");
  CHECK(reported[1]["status"] == "failed");
  CHECK(reported[1]["error"] == "refused");
  CHECK(f.all<p::McpStatusEvent>().size() == 1);

  // A CLI that died is restarted with the same servers.
  f.control->turns.push_back({ScriptedAdapter::Die{"killed"}});
  f.send(session, "die");
  f.send(session, "again");
  REQUIRE(f.control->start_options.size() == 2);
  CHECK(f.control->start_options[1].mcp_servers.size() == 2);
}

// ---- options ---------------------------------------------------------------------------------------------------

p::SessionOption effort(const std::string& current) {
  p::SessionOption option;
  option.id = "effort";
  option.name = "Reasoning effort";
  option.kind = p::SessionOptionKind::Select;
  option.values = {p::SessionOptionValue{"low", std::nullopt, std::nullopt}, p::SessionOptionValue{"high", std::nullopt, std::nullopt}};
  option.current_value = current;
  return option;
}

TEST_CASE("controls: an option set before the agent reported its options is kept and passed at start", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  const auto set = f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}});
  REQUIRE(set.contains("result"));
  CHECK(f.control->options_set.empty());  // no agent yet: nothing to tell
  f.control->at_start = {ScriptedAdapter::Options{{{effort("high")}}}};
  f.send(session, "hi");
  REQUIRE(f.control->start_options.size() == 1);
  CHECK(f.control->start_options[0].options == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});
  // The agent's report is announced with session.updated and shows in session info.
  const auto info = f.call("session.get", {{"sessionId", session}})["result"]["session"];
  CHECK(info["options"][0]["id"] == "effort");
  CHECK(info["options"][0]["currentValue"] == "high");
  bool announced = false;
  for (const auto& updated : f.all<p::SessionUpdatedEvent>()) announced = announced || updated.session.options.has_value();
  CHECK(announced);
}

TEST_CASE("controls: once options are known, a bad optionId or value is -32602 naming it and changes nothing", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.control->at_start = {ScriptedAdapter::Options{{{effort("low")}}}};
  f.send(session, "hi");
  const auto unknown = error_of(f.call("session.setOption", {{"sessionId", session}, {"optionId", "verbosity"}, {"value", "high"}}));
  CHECK(unknown["code"] == -32602);
  CHECK(unknown["data"]["pointer"] == "/optionId");
  CHECK(unknown["message"].get<std::string>().find("effort") != std::string::npos);  // says what there is
  const auto bad_value = error_of(f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "max"}}));
  CHECK(bad_value["code"] == -32602);
  CHECK(bad_value["data"]["pointer"] == "/value");
  CHECK(f.control->options_set.empty());
  CHECK(f.call("session.get", {{"sessionId", session}})["result"]["session"]["options"][0]["currentValue"] == "low");

  // A good one goes to the live agent, and shows in the answer.
  f.events.clear();
  const auto set = f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}});
  REQUIRE(set.contains("result"));
  CHECK(set["result"]["session"]["options"][0]["currentValue"] == "high");
  CHECK(f.control->options_set == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});
  CHECK(f.all<p::SessionUpdatedEvent>().size() == 1);
  // And it is what the agent is started with next time.
  f.control->turns.push_back({ScriptedAdapter::Die{"killed"}});
  f.send(session, "die");
  f.send(session, "again");
  REQUIRE(f.control->start_options.size() == 2);
  CHECK(f.control->start_options[1].options == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});
}

TEST_CASE("controls: options are announced once per change, an unchanged report is not announced", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.control->at_start = {ScriptedAdapter::Options{{{effort("low")}}}};
  f.control->after_turn = {ScriptedAdapter::Options{{{effort("low")}}}};  // the same list again, between turns
  f.send(session, "hi");
  CHECK(f.all<p::SessionUpdatedEvent>().size() == 1);

  // The agent answers a change with its whole list, before and after it completes: one announcement.
  f.control->options_on_set = {effort("low")};
  f.events.clear();
  const auto set = f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}});
  REQUIRE(set.contains("result"));
  const auto updates = f.all<p::SessionUpdatedEvent>();
  REQUIRE(updates.size() == 1);
  REQUIRE(updates[0].session.options);
  CHECK(updates[0].session.options->at(0).current_value == "high");

  // A change the agent makes itself is announced once.
  f.events.clear();
  f.control->turns.push_back({ScriptedAdapter::Options{{{effort("low")}}}, ScriptedAdapter::End{}});
  f.send(session, "lower it");
  CHECK(f.all<p::SessionUpdatedEvent>().size() == 1);
  CHECK(f.call("session.get", {{"sessionId", session}})["result"]["session"]["options"][0]["currentValue"] == "low");
}

TEST_CASE("controls: an option set while the agent starts reaches it once started", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  const int id = f.next_id++;
  f.dispatcher.handle_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session.send"}, {"params", {{"sessionId", session}, {"text", "hi"}}}}.dump(), f.peer);
  // The start is under way (its options were built without the value).
  const auto set = f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}});
  REQUIRE(set.contains("result"));
  REQUIRE(f.control->start_options.size() == 1);
  CHECK(f.control->start_options[0].options.empty());
  CHECK(f.control->options_set == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});
}

TEST_CASE("controls: setOption is Unsupported without options, and AgentUnavailable when the agent refuses so", "[engine][controls]") {
  ControlsFixture f;
  f.control->capabilities.options = false;
  const auto session = f.create();
  CHECK(error_of(f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}}))["code"] == -32015);
  CHECK(error_of(f.call("session.setOption", {{"sessionId", "s-nope"}, {"optionId", "effort"}, {"value", "high"}}))["code"] == -32010);
  f.control->capabilities.options = true;
  f.send(session, "hi");
  f.control->refuse_controls = adapters::AdapterError{p::ErrorCode::AgentUnavailable, "the agent stopped before it answered"};
  CHECK(error_of(f.call("session.setOption", {{"sessionId", session}, {"optionId", "effort"}, {"value", "high"}}))["code"] == -32013);
  f.send(session, "again");
  CHECK(f.control->start_options.at(0).options.empty());
}

// ---- slash commands --------------------------------------------------------------------------------------------

TEST_CASE("controls: a prompt naming an offered command goes to the agent as that command", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  p::AgentCommand review;
  review.name = "review";
  review.description = "Review the changes";
  f.control->at_start = {ScriptedAdapter::Commands{{{review}}}};
  f.send(session, "before the agent said anything: /review is text");
  f.send(session, "/review   src/main.cpp\n  and the tests  ");
  f.send(session, "/unknown thing");
  f.send(session, "/tmp/file.txt is a path");
  f.send(session, "/review");
  REQUIRE(f.control->inputs.size() == 5);
  CHECK_FALSE(f.control->inputs[0].command);
  REQUIRE(f.control->inputs[1].command);
  CHECK(f.control->inputs[1].command->name == "review");
  CHECK(f.control->inputs[1].command->arguments == "src/main.cpp\n  and the tests");
  CHECK(f.control->inputs[1].text == "/review   src/main.cpp\n  and the tests  ");  // the text itself is unchanged
  CHECK_FALSE(f.control->inputs[2].command);
  CHECK_FALSE(f.control->inputs[3].command);
  REQUIRE(f.control->inputs[4].command);
  CHECK(f.control->inputs[4].command->arguments.empty());
  CHECK(f.call("session.get", {{"sessionId", session}})["result"]["session"]["commands"][0]["name"] == "review");
  CHECK(f.all<p::CommandsUpdatedEvent>().size() == 1);
}

// ---- plan and usage ------------------------------------------------------------------------------------------

TEST_CASE("controls: plan and usage are published with the turn and kept in session info", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  p::PlanEntry step{"write the test", p::PlanEntryStatus::InProgress, std::nullopt};
  p::ContextUsage usage;
  usage.used_tokens = 1200;
  usage.window_tokens = 200000;
  f.control->turns.push_back({ScriptedAdapter::Plan{{{step}}}, ScriptedAdapter::Usage{{usage}}, ScriptedAdapter::End{}});
  f.send(session, "plan it");
  const auto turn = f.turn_ids(session).at(0);
  REQUIRE(f.all<p::PlanUpdatedEvent>().size() == 1);
  CHECK(f.all<p::PlanUpdatedEvent>()[0].turn_id == std::optional<std::string>(turn));
  REQUIRE(f.all<p::UsageUpdatedEvent>().size() == 1);
  const auto info = f.call("session.get", {{"sessionId", session}})["result"]["session"];
  CHECK(info["plan"][0]["content"] == "write the test");
  CHECK(info["usage"]["usedTokens"] == 1200);
  CHECK(info["usage"]["windowTokens"] == 200000);
}

// ---- fork ------------------------------------------------------------------------------------------------------

TEST_CASE("controls: session.fork makes a session that forks the agent's conversation through the turn", "[engine][controls]") {
  ControlsFixture f;
  const auto source = f.create({{"mcpServers", {stdio_server("echo")}}, {"title", "source"}, {"model", "big"}});
  f.call("session.setOption", {{"sessionId", source}, {"optionId", "effort"}, {"value", "high"}});
  f.send(source, "one");
  f.send(source, "two");
  f.send(source, "three");
  const auto turns = f.turn_ids(source);
  REQUIRE(turns.size() == 3);

  const auto forked = f.call("session.fork", {{"sessionId", source}, {"turnId", turns[1]}, {"title", "what if"}});
  REQUIRE(forked.contains("result"));
  const auto info = forked["result"]["session"];
  CHECK(info["forkedFrom"] == Json{{"sessionId", source}, {"turnId", turns[1]}});
  CHECK(info["title"] == "what if");
  CHECK(info["model"] == "big");
  CHECK(info["mcpServers"][0]["status"] == "pending");
  const std::string fork = info["sessionId"];
  CHECK(fork != source);

  // Its first start continues a copy of the source's conversation through the second turn.
  f.send(fork, "and now?");
  REQUIRE(f.control->start_options.size() == 2);
  const auto& start = f.control->start_options[1];
  CHECK(start.session_id == fork);
  CHECK(start.resume_provider_session_id == std::optional<std::string>("provider-1"));
  CHECK(start.fork);
  CHECK(start.fork_through_turn_ref == std::optional<std::string>("ref-2"));
  CHECK(start.mcp_servers.size() == 1);
  CHECK(start.options == std::vector<std::pair<std::string, std::string>>{{"effort", "high"}});

  // Without turnId: through the latest turn.
  const auto whole = f.call("session.fork", {{"sessionId", source}});
  CHECK(whole["result"]["session"]["forkedFrom"]["turnId"] == turns[2]);
}

TEST_CASE("controls: session.fork refuses what it cannot do and creates nothing", "[engine][controls]") {
  ControlsFixture f;
  const auto source = f.create();
  f.send(source, "one");
  CHECK(error_of(f.call("session.fork", {{"sessionId", source}, {"turnId", "t-nope"}}))["code"] == -32023);
  CHECK(error_of(f.call("session.fork", {{"sessionId", "s-nope"}}))["code"] == -32010);
  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  f.send(source, "long", /*wait=*/false);
  CHECK(error_of(f.call("session.fork", {{"sessionId", source}}))["code"] == -32022);
  f.control->resume();
  f.settle();
  f.control->capabilities.fork = false;
  CHECK(error_of(f.call("session.fork", {{"sessionId", source}}))["code"] == -32015);
  CHECK(f.session_count() == 1);
}

// ---- rewind ----------------------------------------------------------------------------------------------------

TEST_CASE("controls: session.rewind drops a turn and the later ones from the agent's conversation", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  f.send(session, "two");
  f.send(session, "three");
  const auto turns = f.turn_ids(session);
  REQUIRE(turns.size() == 3);
  f.events.clear();
  const auto rewound = f.call("session.rewind", {{"sessionId", session}, {"turnId", turns[1]}});
  REQUIRE(rewound.contains("result"));
  CHECK(rewound["result"]["rewoundTurnIds"] == Json::array({turns[1], turns[2]}));
  CHECK(f.control->rewinds == std::vector<std::string>{"ref-2"});
  const auto announced = f.all<p::SessionRewoundEvent>();
  REQUIRE(announced.size() == 1);
  CHECK(announced[0].turn_id == turns[1]);
  CHECK(announced[0].rewound_turn_ids == std::vector<std::string>{turns[1], turns[2]});
  CHECK(announced[0].conversation);
  CHECK_FALSE(announced[0].files);

  // Rewound turns are no fork or rewind point any more; the turn before them still is.
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", turns[2]}}))["code"] == -32023);
  CHECK(error_of(f.call("session.fork", {{"sessionId", session}, {"turnId", turns[1]}}))["code"] == -32023);
  CHECK(f.call("session.fork", {{"sessionId", session}})["result"]["session"]["forkedFrom"]["turnId"] == turns[0]);
  CHECK(f.control->rewinds.size() == 1);
  // The session goes on.
  f.send(session, "four");
  CHECK(f.control->inputs.back().text == "four");
}

TEST_CASE("controls: session.rewind refuses while busy, for unknown turns, and without the capability, nothing changes",
          "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  const auto first = f.turn_ids(session).at(0);
  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  f.send(session, "long", /*wait=*/false);
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}}))["code"] == -32022);
  // A prompt queued behind the running turn keeps the session busy too.
  f.send(session, "queued", /*wait=*/false);
  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  f.control->resume();
  f.settle();
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}}))["code"] == -32022);
  f.control->resume();
  f.settle();
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", "t-nope"}}))["code"] == -32023);
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}, {"conversation", false}}))["code"] == -32602);
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}, {"files", true}}))["code"] == -32024);
  f.control->capabilities.rewind = false;
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}}))["code"] == -32015);
  f.control->capabilities.rewind = true;
  // A turn the agent named no reference for cannot be a rewind point.
  f.control->turns.push_back({ScriptedAdapter::End{p::StopReason::EndTurn, std::string()}});
  f.send(session, "no ref");
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", f.turn_ids(session).back()}}))["code"] == -32015);
  CHECK(f.control->rewinds.empty());
  CHECK(f.all<p::SessionRewoundEvent>().empty());
  // The agent's own refusal reaches the caller, and marks nothing.
  f.control->refuse_controls = adapters::AdapterError{p::ErrorCode::Unsupported, "not in this version"};
  CHECK(error_of(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}}))["code"] == -32015);
  f.control->refuse_controls.reset();
  CHECK(f.call("session.rewind", {{"sessionId", session}, {"turnId", first}}).contains("result"));
}

TEST_CASE("controls: a rewind starts the agent when none is live, and prompts sent meanwhile wait for it", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  const auto first = f.turn_ids(session).at(0);
  f.control->turns.push_back({ScriptedAdapter::Die{"killed"}});
  f.send(session, "die");
  REQUIRE(f.control->starts == 1);
  const int id = f.next_id++;
  f.dispatcher.handle_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session.rewind"}, {"params", {{"sessionId", session}, {"turnId", first}}}}.dump(), f.peer);
  // Before the agent has started: a send queues behind the rewind.
  const auto queued = f.send(session, "after the rewind", /*wait=*/false);
  CHECK(queued["result"]["queued"] == true);
  f.settle();
  CHECK(f.control->starts == 2);
  CHECK(f.control->rewinds == std::vector<std::string>{"ref-1"});
  CHECK(f.control->inputs.back().text == "after the rewind");
}

TEST_CASE("controls: a rewind waiting for its agent's start is answered when the session is deleted", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  const auto first = f.turn_ids(session).at(0);
  f.control->turns.push_back({ScriptedAdapter::Die{"killed"}});
  f.send(session, "die");
  const int id = f.next_id++;
  f.dispatcher.handle_message(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session.rewind"}, {"params", {{"sessionId", session}, {"turnId", first}}}}.dump(), f.peer);
  CHECK(f.call("session.delete", {{"sessionId", session}}).contains("result"));  // before the agent has started
  f.settle();
  const auto answered = std::find_if(f.peer->responses.begin(), f.peer->responses.end(), [&](const Json& r) { return r.value("id", 0) == id; });
  REQUIRE(answered != f.peer->responses.end());
  CHECK((*answered)["error"]["code"] == -32010);
  CHECK(f.control->rewinds.empty());
}

// ---- diff ------------------------------------------------------------------------------------------------------

TEST_CASE("controls: session.diff of a turn the session never had is UnknownTurn, a rewound turn stays known", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  f.send(session, "two");
  const auto turns = f.turn_ids(session);
  REQUIRE(turns.size() == 2);
  CHECK(error_of(f.call("session.diff", {{"sessionId", session}, {"turnId", "t-nope"}}))["code"] == -32023);
  // A turn of its own gets as far as the checkpoints (none without a store).
  CHECK(error_of(f.call("session.diff", {{"sessionId", session}, {"turnId", turns[1]}}))["code"] == -32024);
  REQUIRE(f.call("session.rewind", {{"sessionId", session}, {"turnId", turns[1]}}).contains("result"));
  CHECK(error_of(f.call("session.diff", {{"sessionId", session}, {"turnId", turns[1]}}))["code"] == -32024);
  CHECK(error_of(f.call("session.diff", {{"sessionId", "s-nope"}, {"turnId", turns[0]}}))["code"] == -32010);
}

// ---- compact ---------------------------------------------------------------------------------------------------

TEST_CASE("controls: session.compact asks the agent, and refuses while busy or without the capability", "[engine][controls]") {
  ControlsFixture f;
  const auto session = f.create();
  f.send(session, "one");
  const auto compacted = f.call("session.compact", {{"sessionId", session}});
  REQUIRE(compacted.contains("result"));
  CHECK(compacted["result"]["session"]["sessionId"] == session);
  CHECK(f.control->compactions == 1);
  CHECK(f.all<p::AgentStatusEvent>().back().status == p::AgentStatusKind::Compacting);

  f.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  f.send(session, "long", /*wait=*/false);
  CHECK(error_of(f.call("session.compact", {{"sessionId", session}}))["code"] == -32022);
  f.control->resume();
  f.settle();
  f.control->capabilities.compact = false;
  CHECK(error_of(f.call("session.compact", {{"sessionId", session}}))["code"] == -32015);
  CHECK(f.control->compactions == 1);
}

}  // namespace session_controls_tests
