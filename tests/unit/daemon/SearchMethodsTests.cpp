#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support/LoggedMethods.h"
#include "support/SchemaValidator.h"
#include "support/ScriptedAdapter.h"

// session.search and session.export over the daemon's real wiring: scripted agents → bus → egress → durable
// event log and its full-text index, read back through the one dispatcher.

namespace search_methods_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
using Json = nlohmann::json;

// The daemon's wiring (LoggedMethods) with what these tests read back through it.
struct SearchFixture : testing::LoggedMethods {
  Json search(Json params) {
    const auto reply = call("session.search", params);
    REQUIRE(reply.contains("result"));
    CHECK(validator.validate_result("session.search", reply.at("result")).empty());
    return reply.at("result");
  }

  // Every event of the session, through session.events pages.
  Json all_events(const std::string& session) {
    Json events = Json::array();
    std::int64_t after = 0;
    for (;;) {
      const auto page = call("session.events", {{"sessionId", session}, {"afterSeq", after}, {"limit", 7}});
      REQUIRE(page.contains("result"));
      for (const auto& event : page.at("result").at("events")) events.push_back(event);
      if (!page.at("result").contains("nextAfterSeq")) return events;
      after = page.at("result").at("nextAfterSeq");
    }
  }

  testing::SchemaValidator validator;
};

std::set<std::string> sessions_of(const Json& result) {
  std::set<std::string> ids;
  for (const auto& hit : result.at("hits")) ids.insert(hit.at("sessionId").get<std::string>());
  return ids;
}

TEST_CASE("session.search finds a prompt, an answer and a tool's output in sessions of two agents, with its turn and seq", "[search]") {
  SearchFixture f;
  const auto first = f.create("scripted", f.dir.string());
  const auto second = f.create("other", "/");
  f.control->turns.push_back({ScriptedAdapter::Message{"the quokka answer"},
                              ScriptedAdapter::Tool{"c1", "Bash", "tool printed narwhal here"}, ScriptedAdapter::End{}});
  f.other_control->turns.push_back({ScriptedAdapter::Message{"another quokka"}, ScriptedAdapter::End{}});
  REQUIRE(f.call("session.send", {{"sessionId", first}, {"text", "please find the zebra"}}).contains("result"));
  REQUIRE(f.call("session.send", {{"sessionId", second}, {"text", "a zebra elsewhere"}}).contains("result"));
  f.commit();

  const auto prompt = f.search({{"query", "zebra"}});
  CHECK(sessions_of(prompt) == std::set<std::string>{first, second});
  for (const auto& hit : prompt.at("hits")) {
    CHECK(hit.at("type") == "turn.started");
    CHECK(hit.at("snippet").get<std::string>().find("«zebra»") != std::string::npos);
    // The seq names the matching event of the turn the hit names.
    bool found = false;
    for (const auto& event : f.all_events(hit.at("sessionId"))) {
      if (event.at("seq") != hit.at("seq")) continue;
      found = true;
      CHECK(event.at("type") == "turn.started");
      CHECK(event.at("data").at("turnId") == hit.at("turnId"));
    }
    CHECK(found);
  }
  const auto answer = f.search({{"query", "QUOKKA"}});  // case does not matter
  CHECK(sessions_of(answer) == std::set<std::string>{first, second});
  CHECK(answer.at("hits")[0].at("type") == "message.completed");
  const auto output = f.search({{"query", "narwhal"}});
  REQUIRE(output.at("hits").size() == 1);
  CHECK(output.at("hits")[0].at("sessionId") == first);
  CHECK(output.at("hits")[0].at("type") == "tool.completed");
  const auto input = f.search({{"query", "bash"}});  // the tool's name and input
  REQUIRE(input.at("hits").size() == 1);
  CHECK(input.at("hits")[0].at("type") == "tool.started");
  // All words must occur in one event; a prefix with *.
  CHECK(f.search({{"query", "quokka zebra"}}).at("hits").empty());
  CHECK(f.search({{"query", "narw*"}}).at("hits").size() == 1);
}

TEST_CASE("session.search respects the agent, cwd and since filters and pages with a cursor", "[search]") {
  SearchFixture f;
  const auto first = f.create("scripted", f.dir.string());
  const auto second = f.create("other", "/");
  for (int i = 0; i < 5; ++i) {
    f.control->turns.push_back({ScriptedAdapter::Message{"ok"}, ScriptedAdapter::End{}});
    REQUIRE(f.call("session.send", {{"sessionId", first}, {"text", "walrus " + std::to_string(i)}}).contains("result"));
  }
  f.other_control->turns.push_back({ScriptedAdapter::Message{"ok"}, ScriptedAdapter::End{}});
  REQUIRE(f.call("session.send", {{"sessionId", second}, {"text", "walrus too"}}).contains("result"));
  f.commit();

  CHECK(sessions_of(f.search({{"query", "walrus"}, {"agent", "other"}})) == std::set<std::string>{second});
  CHECK(sessions_of(f.search({{"query", "walrus"}, {"agent", "scripted"}})) == std::set<std::string>{first});
  CHECK(sessions_of(f.search({{"query", "walrus"}, {"cwd", "/"}})) == std::set<std::string>{second});
  CHECK(f.search({{"query", "walrus"}, {"agent", "nobody"}}).at("hits").empty());
  CHECK(f.search({{"query", "walrus"}, {"since", 0}}).at("hits").size() == 6);
  CHECK(f.search({{"query", "walrus"}, {"since", std::int64_t{4'000'000'000'000}}}).at("hits").empty());

  std::set<std::int64_t> seqs;
  Json params = {{"query", "walrus"}, {"limit", 4}};
  const auto page1 = f.search(params);
  REQUIRE(page1.at("hits").size() == 4);
  REQUIRE(page1.contains("nextCursor"));
  params["cursor"] = page1.at("nextCursor");
  const auto page2 = f.search(params);
  REQUIRE(page2.at("hits").size() == 2);
  CHECK_FALSE(page2.contains("nextCursor"));
  for (const auto* page : {&page1, &page2}) {
    for (const auto& hit : page->at("hits")) seqs.insert(hit.at("seq").get<std::int64_t>());
  }
  CHECK(seqs.size() == 6);  // every hit once across the pages
}

TEST_CASE("session.search refuses bad params with -32602 and the pointer", "[search]") {
  SearchFixture f;
  const auto blank = f.call("session.search", {{"query", "   "}});
  CHECK(blank.at("error").at("code") == -32602);
  CHECK(blank.at("error").at("data").at("pointer") == "/query");
  const auto cursor = f.call("session.search", {{"query", "x"}, {"cursor", "not-ours"}});
  CHECK(cursor.at("error").at("code") == -32602);
  CHECK(cursor.at("error").at("data").at("pointer") == "/cursor");
  const auto limit = f.call("session.search", {{"query", "x"}, {"limit", 101}});
  CHECK(limit.at("error").at("code") == -32602);
  CHECK(limit.at("error").at("data").at("pointer") == "/limit");
  // FTS5 syntax in the user's words is text, never an error.
  CHECK(f.call("session.search", {{"query", "\"a OR (b* NEAR c:"}}).contains("result"));
}

TEST_CASE("session.search no longer finds a deleted session", "[search]") {
  SearchFixture f;
  const auto kept = f.create("scripted", f.dir.string());
  const auto deleted = f.create("scripted", f.dir.string());
  for (const auto& session : {kept, deleted}) {
    f.control->turns.push_back({ScriptedAdapter::Message{"ok"}, ScriptedAdapter::End{}});
    REQUIRE(f.call("session.send", {{"sessionId", session}, {"text", "pelican"}}).contains("result"));
  }
  f.commit();
  REQUIRE(sessions_of(f.search({{"query", "pelican"}})) == std::set<std::string>{kept, deleted});
  REQUIRE(f.call("session.delete", {{"sessionId", deleted}}).contains("result"));
  f.commit();
  CHECK(sessions_of(f.search({{"query", "pelican"}})) == std::set<std::string>{kept});
}

TEST_CASE("session.export: Markdown holds every prompt, answer, tool call and permission, and its JSON equals session.events", "[search]") {
  SearchFixture f;
  const auto session = f.create("scripted", f.dir.string());
  f.control->turns.push_back({ScriptedAdapter::Message{"First answer"}, ScriptedAdapter::Tool{"c1", "Grep", "grep output line"},
                              ScriptedAdapter::End{}});
  REQUIRE(f.call("session.send", {{"sessionId", session}, {"text", "first prompt"}}).contains("result"));
  f.control->turns.push_back({ScriptedAdapter::Ask{"Bash", "make test"}, ScriptedAdapter::Message{"Second answer"}, ScriptedAdapter::End{}});
  REQUIRE(f.call("session.send", {{"sessionId", session}, {"text", "second prompt"}, {"wait", false}}).contains("result"));
  const auto attached = f.call("session.attach", {{"sessionId", session}});
  REQUIRE(attached.at("result").at("permissions").size() == 1);
  const std::string request = attached.at("result").at("permissions")[0].at("requestId");
  REQUIRE(f.call("permission.respond", {{"requestId", request}, {"decision", "allow_once"}}).contains("result"));
  f.commit();

  const auto markdown = f.call("session.export", {{"sessionId", session}, {"format", "markdown"}});
  REQUIRE(markdown.contains("result"));
  const std::string text = markdown.at("result").at("content");
  for (const char* part : {"first prompt", "First answer", "Tool call: Grep", "grep output line", "second prompt",
                           "Permission asked** for Bash", "allowed once", "Second answer", "Turn ended: end_turn"}) {
    INFO(part);
    CHECK(text.find(part) != std::string::npos);
  }
  CHECK(text.find("first prompt") < text.find("second prompt"));

  const auto exported = f.call("session.export", {{"sessionId", session}, {"format", "json"}});
  REQUIRE(exported.contains("result"));
  const Json document = Json::parse(exported.at("result").at("content").get<std::string>());
  CHECK(f.validator.validate_type("SessionExport", document).empty());
  CHECK(document.at("format") == "switchboard.session-export");
  CHECK(document.at("session").at("sessionId") == session);
  CHECK(document.at("events") == f.all_events(session));
  CHECK(document.at("events").size() > 10);
}

TEST_CASE("session.export of an unknown session is UnknownSession", "[search]") {
  SearchFixture f;
  CHECK(f.call("session.export", {{"sessionId", "s-nope"}, {"format", "json"}}).at("error").at("code") == -32010);
  CHECK(f.call("session.export", {{"sessionId", "s-nope"}, {"format", "pdf"}}).at("error").at("code") == -32602);
}

}  // namespace search_methods_tests
