#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "grok/GrokHistory.h"
#include "support/CodexRecording.h"
#include "support/TempDir.h"

// Grok Build's own history read from a recorded session directory (tests/fixtures/grok/history/: the
// updates.jsonl and summary.json of a session with a text turn, a shell command and a cancelled turn, recorded
// from Grok 1.0.41 over ACP), placed where Grok keeps it: <GROK_HOME>/sessions/<url-encoded cwd>/<session id>/.

namespace grok_history_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::CodexRecordingSink;
using switchboard::testing::TempDir;
namespace grok = switchboard::adapters::grok;

constexpr const char* kId = "01a232e7-1308-7d62-ac3d-9621503e1ec9";
constexpr const char* kCwd = "/w/my project";

fs::path grok_home_with_session(const TempDir& tmp) {
  const auto dir = tmp.path() / "grok-home" / "sessions" / grok::encoded_cwd(kCwd) / kId;
  fs::create_directories(dir);
  const fs::path fixtures = fs::path(SWITCHBOARD_SOURCE_DIR) / "tests" / "fixtures" / "grok" / "history";
  fs::copy_file(fixtures / "updates.jsonl", dir / "updates.jsonl");
  fs::copy_file(fixtures / "summary.json", dir / "summary.json");
  return tmp.path() / "grok-home";
}

TEST_CASE("grok history: the directory of a cwd is its URL encoding, as Grok names it", "[grok]") {
  CHECK(grok::encoded_cwd("/tmp/acp/proj") == "%2Ftmp%2Facp%2Fproj");
  CHECK(grok::encoded_cwd("/w/my project") == "%2Fw%2Fmy%20project");
  CHECK(grok::encoded_cwd("a-b_c.d~") == "a-b_c.d~");
}

TEST_CASE("grok history: a cwd's sessions are listed with their title and times", "[grok]") {
  TempDir tmp("grok-history");
  const auto home = grok_home_with_session(tmp);
  fs::create_directories(home / "sessions" / grok::encoded_cwd(kCwd) / "no-summary");
  const auto listed = grok::list_history(home, kCwd);
  REQUIRE(std::holds_alternative<switchboard::adapters::HistoryList>(listed));
  const auto& list = std::get<switchboard::adapters::HistoryList>(listed);
  REQUIRE(list.sessions.size() == 1);
  CHECK(list.skipped_files == 1);
  CHECK(list.sessions[0].provider_session_id == kId);
  CHECK(list.sessions[0].title == "Mock session title");
  CHECK(list.sessions[0].created_at == 1796150334226);  // "2026-12-01T18:38:54.226010179Z"
  CHECK(list.sessions[0].updated_at >= *list.sessions[0].created_at);
  // Another directory has none.
  const auto other = grok::list_history(home, "/elsewhere");
  CHECK(std::get<switchboard::adapters::HistoryList>(other).sessions.empty());
}

TEST_CASE("grok history: a session is read as prompts, each with its turn's activity", "[grok]") {
  TempDir tmp("grok-history");
  const auto home = grok_home_with_session(tmp);
  CodexRecordingSink sink;
  const auto read = grok::read_history(home, kCwd, kId, sink);
  REQUIRE(std::holds_alternative<switchboard::adapters::HistoryReadStats>(read));
  CHECK(std::get<switchboard::adapters::HistoryReadStats>(read).lines == 13);
  std::vector<std::string> lines;
  for (const auto& line : sink.lines) {
    if (line.rfind("delta ", 0) != 0) lines.push_back(line.substr(0, 200));
  }
  INFO(json(sink.lines).dump(1));
  REQUIRE(lines.size() == 12);
  CHECK(lines[0].rfind(R"(prompt )", 0) == 0);
  CHECK(lines[0].find(R"("say hello" at 2026-12-01T)") != std::string::npos);
  CHECK(lines[1].find(R"(text "Hello from the mock.")") != std::string::npos);
  CHECK(lines[2].rfind("turn_end end_turn", 0) == 0);
  CHECK(lines[3].find(R"("run it")") != std::string::npos);
  CHECK(lines[4].find(R"(text "Running it.")") != std::string::npos);
  CHECK(lines[5] == R"(tool_started call_mock_0002 execute {"command":"echo grok-made","description":"test command"})");
  CHECK(lines[6] == R"(tool_completed call_mock_0002 ok "grok-made\n")");
  CHECK(lines[7].find(R"(text "It printed grok-made.")") != std::string::npos);
  CHECK(lines[8].rfind("turn_end end_turn", 0) == 0);
  CHECK(lines[9].find(R"("slow one")") != std::string::npos);
  CHECK(lines[10].rfind("message", 0) == 0);
  CHECK(lines[11].rfind("turn_end cancelled", 0) == 0);
  CHECK(sink.turns.size() == 3);
  CHECK(sink.turns.back().stop_reason == switchboard::protocol::StopReason::Cancelled);
}

TEST_CASE("grok history: a listed session counts the prompts that history.read finds in it", "[grok]") {
  TempDir tmp("grok-history");
  const auto home = grok_home_with_session(tmp);
  {
    // A reply that only mentions the word, and a line that is not JSON: neither is a prompt.
    std::ofstream out(home / "sessions" / grok::encoded_cwd(kCwd) / kId / "updates.jsonl", std::ios::app);
    out << R"({"timestamp":1796150336,"method":"session/update","params":{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a user_message_chunk is a prompt"}}}})"
        << "\n{\"sessionUpdate\":\"user_message_chunk\"\n";
  }
  const auto listed = grok::list_history(home, kCwd);
  REQUIRE(std::holds_alternative<switchboard::adapters::HistoryList>(listed));
  const auto& list = std::get<switchboard::adapters::HistoryList>(listed);
  REQUIRE(list.sessions.size() == 1);
  CHECK(list.sessions[0].prompts == 3);  // "say hello", "run it", "slow one"
  CodexRecordingSink sink;
  REQUIRE(std::holds_alternative<switchboard::adapters::HistoryReadStats>(grok::read_history(home, kCwd, kId, sink)));
  CHECK(sink.turns.size() == 3);
}

TEST_CASE("grok history: an unknown or malformed session id is UnknownHistorySession", "[grok]") {
  TempDir tmp("grok-history");
  const auto home = grok_home_with_session(tmp);
  for (const std::string id : {"01a232e7-0000-7000-8000-000000000000", "../sessions", ""}) {
    INFO(id);
    CodexRecordingSink sink;
    const auto read = grok::read_history(home, kCwd, id, sink);
    REQUIRE(std::holds_alternative<switchboard::adapters::AdapterError>(read));
    CHECK(std::get<switchboard::adapters::AdapterError>(read).code == switchboard::protocol::ErrorCode::UnknownHistorySession);
    CHECK(sink.lines.empty());
  }
}

}  // namespace grok_history_tests
