#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include "opencode/OpenCodeHistory.h"
#include "support/CodexRecording.h"
#include "support/TempDir.h"
#include "support/SourceTree.h"

// OpenCode's own history, read from an opencode.db: the recorded session (tests/fixtures/opencode/history.sql,
// from the e2e interrupt scenario) and rows written here for what a recording rarely holds (sub-agent
// sessions, other directories, failed answers, rows that are not JSON).

namespace opencode_history_tests {

namespace fs = std::filesystem;
namespace opencode = switchboard::adapters::opencode;
namespace adapters = switchboard::adapters;
using nlohmann::json;
using switchboard::testing::CodexRecordingSink;
using switchboard::testing::TempDir;

const std::string kRecorded = "ses_dcd7df282ffeMkG7zklXSiHj6i";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) text.replace(at, from.size(), to);
  return text;
}

// A scratch directory holding a database made from the fixture, and the project directory it names.
struct Database {
  TempDir root{"opencode-history"};
  fs::path file = root.path() / "opencode.db";
  std::string work = (root.path() / "work").string();

  Database() {
    std::ifstream in(switchboard::testing::source_path("tests/fixtures/opencode/history.sql"));
    REQUIRE(in.good());
    std::stringstream sql;
    sql << in.rdbuf();
    SQLite::Database db(file.string(), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(replaced(sql.str(), "<scratch>", root.path().string()));
  }

  void exec(const std::string& sql) const {
    SQLite::Database db(file.string(), SQLite::OPEN_READWRITE);
    db.exec(replaced(sql, "<work>", work));
  }

  void add_session(const std::string& id, const std::string& directory, std::int64_t updated, const std::string& parent = "NULL") const {
    exec("INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)"
         " VALUES ('" + id + "', 'global', " + parent + ", 's', '" + directory + "', 'title of " + id + "', '1.18.33', " +
         std::to_string(updated - 1000) + ", " + std::to_string(updated) + ")");
  }
  void add_message(const std::string& id, const std::string& session, std::int64_t created, const std::string& data) const {
    exec("INSERT INTO message VALUES ('" + id + "', '" + session + "', " + std::to_string(created) + ", " +
         std::to_string(created) + ", '" + data + "')");
  }
  void add_part(const std::string& id, const std::string& message, const std::string& session, const std::string& data) const {
    exec("INSERT INTO part VALUES ('" + id + "', '" + message + "', '" + session + "', 0, 0, '" + data + "')");
  }
};

TEST_CASE("opencode history: the recorded session is listed for its directory with its title times and prompts", "[opencode][history]") {
  Database db;
  db.add_session("ses_other_directory", "/somewhere/else", 1796143800000);
  db.add_session("ses_subagent", "<work>", 1796143900000, "'" + kRecorded + "'");
  db.add_session("ses_newer", "<work>", 1796143950000);

  const auto outcome = opencode::list_history(db.file, db.work);
  REQUIRE(std::holds_alternative<adapters::HistoryList>(outcome));
  const auto& list = std::get<adapters::HistoryList>(outcome);
  REQUIRE(list.sessions.size() == 2);  // not the other directory's, not the sub-agent's
  CHECK(list.sessions[0].provider_session_id == "ses_newer");
  const auto& recorded = list.sessions[1];
  CHECK(recorded.provider_session_id == kRecorded);
  CHECK(recorded.title == "switchboard session");
  CHECK(recorded.cwd == db.work);
  CHECK(recorded.created_at == std::optional<std::int64_t>(1796143713661));
  CHECK(recorded.updated_at == 1796143718494);
  CHECK(recorded.prompts == std::optional<std::int64_t>(2));
  CHECK(recorded.path == std::optional<std::string>(db.file.string()));
  CHECK(list.skipped_files == 0);
}

TEST_CASE("opencode history: the recorded session replays as prompts, parts and turn ends through the live translator", "[opencode][history]") {
  Database db;
  CodexRecordingSink sink;
  const auto outcome = opencode::read_history(db.file, db.work, kRecorded, sink);
  REQUIRE(std::holds_alternative<adapters::HistoryReadStats>(outcome));
  const auto& stats = std::get<adapters::HistoryReadStats>(outcome);
  CHECK(stats.lines == 12);  // 4 messages, 8 parts
  CHECK(stats.skipped_lines == 0);
  const std::vector<std::string> expected{
      "provider_session " + kRecorded,
      R"(prompt msg_232820dca001GzIAAR85rGD3BL "sleep a long time" at 2026-12-01T16:48:33.738Z)",
      R"(message prt_232821e2c001SpV6xuRa2TLYrO text "Running it.")",
      R"(tool_started call_mock_0001 bash {"command":"touch started.txt && sleep 97531","description":"test command"})",
      "tool_completed call_mock_0001 ok \"(no output)\\n\\n<shell_metadata>\\nUser aborted the command\\n</shell_metadata>\"",
      R"(turn_end cancelled "Running it.")",
      R"(prompt msg_232821f7d001dOvFopHkK4BjRS "are you still there?" at 2026-12-01T16:48:38.270Z)",
      R"(message prt_23282203d0010r9Gw0IfnjEx60 text "Yes.")",
      R"(turn_end end_turn "Yes." in=8271 out=1 cached=0)",
  };
  CHECK(sink.lines == expected);
}

TEST_CASE("opencode history: a failed answer ends its turn as an error and rows that are not JSON are skipped and counted", "[opencode][history]") {
  Database db;
  db.add_session("ses_broken", "<work>", 1796144000000);
  db.add_message("msg_1", "ses_broken", 1796143990000, R"({"role":"user","time":{"created":1796143990000}})");
  db.add_part("prt_1a", "msg_1", "ses_broken", R"({"type":"text","text":"first line"})");
  db.add_part("prt_1b", "msg_1", "ses_broken", R"({"type":"text","text":"file contents","synthetic":true})");
  db.add_part("prt_1c", "msg_1", "ses_broken", R"({"type":"text","text":"second line"})");
  db.add_message("msg_2", "ses_broken", 1796143991000,
                 R"({"role":"assistant","error":{"name":"APIError","data":{"message":"the provider said no"}}})");
  db.add_part("prt_2a", "msg_2", "ses_broken", R"({"type":"reasoning","text":"thinking it over","time":{"start":1}})");
  db.add_part("prt_2b", "msg_2", "ses_broken", "not json at all");
  db.add_part("prt_2c", "msg_2", "ses_broken",
              R"({"type":"tool","tool":"bash","callID":"call_2","state":{"status":"error","input":{"command":"false"},"error":"exit 1"}})");
  db.add_message("msg_3", "ses_broken", 1796143992000, "[1, 2, 3]");
  db.add_part("prt_3a", "msg_3", "ses_broken", R"({"type":"text","text":"whose part is this?"})");

  CodexRecordingSink sink;
  const auto outcome = opencode::read_history(db.file, db.work, "ses_broken", sink);
  REQUIRE(std::holds_alternative<adapters::HistoryReadStats>(outcome));
  const auto& stats = std::get<adapters::HistoryReadStats>(outcome);
  CHECK(stats.lines == 10);
  CHECK(stats.skipped_lines == 2);  // the part that is not JSON, the message that is not an object
  const std::vector<std::string> expected{
      "provider_session ses_broken",
      R"(prompt msg_1 "first line\nsecond line" at 2026-12-01T16:53:10.000Z)",
      R"(message prt_2a thinking "thinking it over")",
      R"(tool_started call_2 bash {"command":"false"})",
      R"(tool_completed call_2 error "exit 1")",
      R"(error recoverable "OpenCode: the provider said no")",
      R"(turn_end error error="the provider said no")",
  };
  CHECK(sink.lines == expected);
}

TEST_CASE("opencode history: unknown sessions, other directories and missing or foreign databases", "[opencode][history]") {
  Database db;
  CodexRecordingSink sink;
  const auto other_directory = opencode::read_history(db.file, "/somewhere/else", kRecorded, sink);
  REQUIRE(std::holds_alternative<adapters::AdapterError>(other_directory));
  CHECK(std::get<adapters::AdapterError>(other_directory).code == switchboard::protocol::ErrorCode::UnknownHistorySession);
  const auto unknown = opencode::read_history(db.file, db.work, "ses_nope' OR '1'='1", sink);
  REQUIRE(std::holds_alternative<adapters::AdapterError>(unknown));
  CHECK(sink.lines.empty());

  const fs::path missing = db.root.path() / "none.db";
  const auto none = opencode::list_history(missing, db.work);
  REQUIRE(std::holds_alternative<adapters::HistoryList>(none));
  CHECK(std::get<adapters::HistoryList>(none).sessions.empty());
  CHECK(std::get<adapters::HistoryList>(none).skipped_files == 0);
  CHECK(std::holds_alternative<adapters::AdapterError>(opencode::read_history(missing, db.work, kRecorded, sink)));

  const fs::path foreign = db.root.path() / "foreign.db";
  std::ofstream(foreign) << "this is not a database";
  const auto unreadable = opencode::list_history(foreign, db.work);
  REQUIRE(std::holds_alternative<adapters::HistoryList>(unreadable));
  CHECK(std::get<adapters::HistoryList>(unreadable).sessions.empty());
  CHECK(std::get<adapters::HistoryList>(unreadable).skipped_files == 1);
  CHECK(std::holds_alternative<adapters::AdapterError>(opencode::read_history(foreign, db.work, kRecorded, sink)));

  CHECK(opencode::opencode_database(std::string("/x/data"), std::string("/home/u")) == fs::path("/x/data/opencode/opencode.db"));
  CHECK(opencode::opencode_database(std::string(), std::string("/home/u")) == fs::path("/home/u/.local/share/opencode/opencode.db"));
  CHECK_FALSE(opencode::opencode_database(std::nullopt, std::nullopt));
}

TEST_CASE("opencode history: a sub-agent's work nests in the task call it did, a resumed child's in each call its own part", "[opencode][history]") {
  Database db;
  db.add_session("ses_p", "<work>", 1796145000000);
  db.add_session("ses_c", "<work>", 1796145000000, "'ses_p'");
  db.add_session("ses_stranger", "<work>", 1796145000000);  // named by a task but no child of ses_p
  const auto task = [](const std::string& call, const std::string& child, std::int64_t end, const std::string& output) {
    return R"({"type":"tool","tool":"task","callID":")" + call + R"(","state":{"status":"completed","input":{"description":")" + call +
           R"("},"output":")" + output + R"(","metadata":{"sessionId":")" + child + R"("},"time":{"start":0,"end":)" +
           std::to_string(end) + "}}}";
  };
  const auto text = [](const std::string& words) { return R"({"type":"text","text":")" + words + R"(","time":{"start":1,"end":2}})"; };
  // Turn 1: a task in ses_c; turn 2: a task that resumes ses_c; turn 3: a task naming a session that is not a child.
  db.add_message("m1", "ses_p", 100, R"({"role":"user","time":{"created":100}})");
  db.add_part("p1", "m1", "ses_p", text("first"));
  db.add_message("m2", "ses_p", 110, R"({"role":"assistant"})");
  db.add_part("p2", "m2", "ses_p", task("call_1", "ses_c", 150, "one"));
  db.add_message("c1", "ses_c", 120, R"({"role":"user"})");
  db.add_part("c1a", "c1", "ses_c", text("the task prompt"));
  db.add_message("c2", "ses_c", 130, R"({"role":"assistant"})");
  db.add_part("c2a", "c2", "ses_c", text("child work 1"));
  db.add_message("m3", "ses_p", 200, R"({"role":"user","time":{"created":200}})");
  db.add_part("p3", "m3", "ses_p", text("second"));
  db.add_message("m4", "ses_p", 210, R"({"role":"assistant"})");
  db.add_part("p4", "m4", "ses_p", task("call_2", "ses_c", 250, "two"));
  db.add_message("c3", "ses_c", 220, R"({"role":"assistant"})");
  db.add_part("c3a", "c3", "ses_c", text("child work 2"));
  db.add_message("m5", "ses_p", 300, R"({"role":"user","time":{"created":300}})");
  db.add_part("p5", "m5", "ses_p", text("third"));
  db.add_message("m6", "ses_p", 310, R"({"role":"assistant"})");
  db.add_part("p6", "m6", "ses_p", task("call_3", "ses_stranger", 350, "three"));
  db.add_message("s1", "ses_stranger", 320, R"({"role":"assistant"})");
  db.add_part("s1a", "s1", "ses_stranger", text("not ours"));

  CodexRecordingSink sink;
  const auto outcome = opencode::read_history(db.file, db.work, "ses_p", sink);
  REQUIRE(std::holds_alternative<adapters::HistoryReadStats>(outcome));
  std::vector<std::string> kept;
  for (const auto& line : sink.lines) {
    if (line.rfind("prompt ", 0) != 0) kept.push_back(line);
  }
  const std::vector<std::string> expected{
      "provider_session ses_p",
      R"(tool_started call_1 task {"description":"call_1"})",
      R"(message c2a text "child work 1" parent=call_1)",
      R"(tool_completed call_1 ok "one")",
      "turn_end end_turn",
      R"(tool_started call_2 task {"description":"call_2"})",
      R"(message c3a text "child work 2" parent=call_2)",
      R"(tool_completed call_2 ok "two")",
      "turn_end end_turn",
      R"(tool_started call_3 task {"description":"call_3"})",
      R"(tool_completed call_3 ok "three")",
      "turn_end end_turn",
  };
  CHECK(kept == expected);
}

}  // namespace opencode_history_tests
