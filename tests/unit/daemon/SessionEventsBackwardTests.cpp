#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include "support/LoggedMethods.h"
#include "support/SchemaValidator.h"
#include "support/ScriptedAdapter.h"
#include "support/TempDir.h"

// session.events read from the end (beforeSeq, nextBeforeSeq) over the daemon's real wiring: bus → egress →
// durable event log, read back through the one dispatcher. A second run over the same directory is the daemon
// after a restart, which is how seqs lost in a crash come to be.

namespace session_events_backward_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
namespace fs = std::filesystem;
using Json = nlohmann::json;

using DaemonRun = testing::LoggedMethods;

std::string create(DaemonRun& run) { return run.create("scripted", run.dir.string()); }

std::int64_t last_seq(DaemonRun& run, const std::string& session) {
  return run.call("session.attach", {{"sessionId", session}}).at("result").at("lastSeq");
}

// Every event of `session` below `before`, read backward in pages of `limit`, and each page's result.
struct BackwardRead {
  std::vector<Json> events;
  std::vector<Json> pages;
};

BackwardRead read_backward(DaemonRun& run, const std::string& session, std::int64_t before, int limit) {
  BackwardRead read;
  testing::SchemaValidator validator;
  for (int guard = 0; guard < 1000; ++guard) {
    const auto answer = run.call("session.events", {{"sessionId", session}, {"beforeSeq", before}, {"limit", limit}});
    REQUIRE(answer.contains("result"));
    const auto& result = answer.at("result");
    CHECK(validator.validate_result("session.events", result).empty());
    CHECK_FALSE(result.contains("nextAfterSeq"));
    read.pages.push_back(result);
    const auto& events = result.at("events");
    read.events.insert(read.events.begin(), events.begin(), events.end());
    if (!result.contains("nextBeforeSeq")) break;
    CHECK(result.at("nextBeforeSeq") == events.front().at("seq"));
    before = result.at("nextBeforeSeq");
  }
  return read;
}

std::vector<Json> slice(const Json& events, std::size_t from, std::size_t to) {
  return {events.begin() + static_cast<std::ptrdiff_t>(from), events.begin() + static_cast<std::ptrdiff_t>(to)};
}

TEST_CASE("session.events with beforeSeq reads a session from its end back to its start", "[store][history]") {
  DaemonRun run;
  const std::string id = create(run);
  const std::string other = create(run);
  for (int turn = 0; turn < 3; ++turn) {
    run.control->turns.push_back({ScriptedAdapter::Delta{"a"}, ScriptedAdapter::Delta{"b"}, ScriptedAdapter::Message{"ab"},
                                  ScriptedAdapter::End{}});
    REQUIRE(run.call("session.send", {{"sessionId", turn == 1 ? other : id}, {"text", "go"}}).contains("result"));
  }
  const Json forward = run.call("session.events", {{"sessionId", id}, {"limit", 1000}}).at("result").at("events");
  REQUIRE(forward.size() > 10);
  const std::int64_t last = last_seq(run, id);

  // The newest page first: the session's last events, oldest first, and the cursor to the ones before them.
  const auto newest = run.call("session.events", {{"sessionId", id}, {"beforeSeq", last + 1}, {"limit", 4}}).at("result");
  CHECK(newest.at("events") == Json(slice(forward, forward.size() - 4, forward.size())));
  CHECK(newest.at("nextBeforeSeq") == forward[forward.size() - 4].at("seq"));

  // Paged back to the start with any page size: the events read forward, none twice, none missed (the other
  // session's events, between this one's, are in no page).
  for (const int limit : {1, 3, 7, 1000}) {
    CAPTURE(limit);
    const auto read = read_backward(run, id, last + 1, limit);
    CHECK(Json(read.events) == forward);
    CHECK(read.pages.size() == (forward.size() + static_cast<std::size_t>(limit)) / static_cast<std::size_t>(limit));
  }
  // With afterSeq too, only what lies between the two.
  const auto between = run.call("session.events", {{"sessionId", id}, {"afterSeq", forward[2].at("seq")},
                                                   {"beforeSeq", forward[6].at("seq")}, {"limit", 100}});
  CHECK(between.at("result").at("events") == Json(slice(forward, 3, 6)));
  CHECK_FALSE(between.at("result").contains("nextBeforeSeq"));
  // Below the session's first event: nothing, and no cursor.
  const auto before_start = run.call("session.events", {{"sessionId", id}, {"beforeSeq", forward[0].at("seq")}});
  CHECK(before_start.at("result").at("events").empty());
  CHECK_FALSE(before_start.at("result").contains("nextBeforeSeq"));
}

TEST_CASE("session.events with beforeSeq refuses a bad value with its path", "[store][history]") {
  DaemonRun run;
  const std::string id = create(run);
  for (const Json& bad : {Json(0), Json(-5), Json("10"), Json(1.5)}) {
    CAPTURE(bad);
    const auto answer = run.call("session.events", {{"sessionId", id}, {"beforeSeq", bad}});
    REQUIRE(answer.contains("error"));
    CHECK(answer.at("error").at("code") == -32602);
    CHECK(answer.at("error").dump().find("/beforeSeq") != std::string::npos);
  }
}

TEST_CASE("session.events with beforeSeq reports seqs a crash lost in the one page that spans them", "[store][history]") {
  testing::TempDir data("events-back");
  const fs::path dir = data.path();
  std::string id;
  std::int64_t first_run_last = 0;
  {
    DaemonRun run(dir);
    id = create(run);
    for (int turn = 0; turn < 2; ++turn) {
      run.control->turns.push_back({ScriptedAdapter::Message{"before"}, ScriptedAdapter::End{}});
      REQUIRE(run.call("session.send", {{"sessionId", id}, {"text", "one"}}).contains("result"));
    }
    first_run_last = last_seq(run, id);
  }
  {
    // What a kill -9 leaves: seqs reserved above the stored events, which the next start records as lost.
    SQLite::Database db((dir / "switchboard.db").string(), SQLite::OPEN_READWRITE);
    db.exec("UPDATE store_meta SET value = " + std::to_string(first_run_last + 500) + " WHERE key = 'events.reserved_seq'");
  }
  DaemonRun run(dir);
  for (int turn = 0; turn < 2; ++turn) {
    run.control->turns.push_back({ScriptedAdapter::Message{"after"}, ScriptedAdapter::End{}});
    REQUIRE(run.call("session.send", {{"sessionId", id}, {"text", "two"}}).contains("result"));
  }
  const auto forward = run.call("session.events", {{"sessionId", id}, {"limit", 1000}}).at("result");
  const std::int64_t last = last_seq(run, id);
  const Json lost = Json::array({{{"from", first_run_last + 1}, {"to", first_run_last + 500}}});
  REQUIRE(forward.at("gaps") == lost);

  const auto read = read_backward(run, id, last + 1, 2);
  CHECK(Json(read.events) == forward.at("events"));
  // Exactly one page reports the lost range: the one whose span reaches down across it.
  int reporting = 0;
  for (const auto& page : read.pages) {
    if (!page.contains("gaps")) continue;
    ++reporting;
    CHECK(page.at("gaps") == lost);
  }
  CHECK(reporting == 1);
  // A page wholly below the range reports nothing, nor one wholly above it; one that starts inside it, the part
  // below its beforeSeq.
  CHECK_FALSE(run.call("session.events", {{"sessionId", id}, {"beforeSeq", first_run_last + 1}}).at("result").contains("gaps"));
  CHECK_FALSE(run.call("session.events", {{"sessionId", id}, {"afterSeq", first_run_last + 500}, {"beforeSeq", last + 1}})
                  .at("result")
                  .contains("gaps"));
  const auto inside = run.call("session.events", {{"sessionId", id}, {"beforeSeq", first_run_last + 100}}).at("result");
  CHECK(inside.at("gaps") == Json::array({{{"from", first_run_last + 1}, {"to", first_run_last + 99}}}));
}

}  // namespace session_events_backward_tests
