#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "codex/CodexAdapter.h"
#include "codex/CodexHistory.h"
#include "support/CodexRecording.h"
#include "switchboard/support/Clock.h"

// Codex's own history: rollout files under <CODEX_HOME>/sessions, replayed from the recorded fixture
// (tests/fixtures/codex/rollout/, written by smoke_codex.py's `history` scenario) and from hand-written lines.

namespace codex_history_tests {

namespace codex = switchboard::adapters::codex;
namespace adapters = switchboard::adapters;
namespace fs = std::filesystem;
using Json = nlohmann::json;
using Lines = std::vector<std::string>;
using switchboard::testing::CodexRecordingSink;

const std::string kRecordedThread = "01a22af6-cf76-7173-bc2a-5e4304033bc4";
const std::string kRecordedFile = "rollout-2026-11-30T05-39-07-" + kRecordedThread + ".jsonl";

// A scratch CODEX_HOME and a project directory beside it; "<scratch>" in fixtures stands for `root`.
struct CodexHome {
  fs::path root;
  fs::path home;
  fs::path project;

  CodexHome() {
    char name[] = "/tmp/switchboard-codex-history-XXXXXX";
    root = ::mkdtemp(name);
    home = root / "codex-home";
    project = root / "work";
    fs::create_directories(home / "sessions");
    fs::create_directories(project);
  }
  ~CodexHome() {
    std::error_code ignored;
    fs::remove_all(root, ignored);
  }

  fs::path day(const std::string& date = "2026/11/30") const {
    fs::create_directories(home / "sessions" / date);
    return home / "sessions" / date;
  }

  fs::path write(const fs::path& file, const std::string& text, int age_seconds = 0) const {
    std::string replaced = text;
    for (auto at = replaced.find("<scratch>"); at != std::string::npos; at = replaced.find("<scratch>", at)) {
      replaced.replace(at, 9, root.string());
    }
    std::ofstream(file, std::ios::binary) << replaced;
    fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::seconds(age_seconds));
    return file;
  }

  fs::path write_recorded(int age_seconds = 0) const {
    std::string text;
    for (const auto& line : switchboard::testing::codex_fixture_lines("rollout/" + kRecordedFile)) text += line + "\n";
    return write(day() / kRecordedFile, text, age_seconds);
  }
};

std::string rollout_name(const std::string& id) { return "rollout-2026-12-01T10-00-00-" + id + ".jsonl"; }

std::string line(const std::string& type, const Json& payload, const std::string& timestamp = "2026-12-01T10:00:00.000Z") {
  return Json{{"timestamp", timestamp}, {"type", type}, {"payload", payload}}.dump() + "\n";
}

std::string meta(const std::string& id, const std::string& cwd, const std::string& timestamp = "2026-12-01T10:00:00.000Z") {
  return line("session_meta", {{"id", id}, {"cwd", cwd}, {"timestamp", timestamp}, {"cli_version", "0.171.0"}});
}

std::string user_item(const std::string& text) {
  return line("response_item", {{"type", "message"}, {"role", "user"}, {"content", {{{"type", "input_text"}, {"text", text}}}}});
}

std::string user_event(const std::string& text) {
  return line("event_msg", {{"type", "item_completed"},
                            {"item", {{"type", "UserMessage"}, {"id", "um-" + std::to_string(text.size())}, {"content", {{{"type", "text"}, {"text", text}}}}}}});
}

std::string prompt(const std::string& text) { return user_item(text) + user_event(text); }

std::string assistant(const std::string& id, const std::string& text) {
  return line("response_item", {{"type", "message"}, {"role", "assistant"}, {"id", id}, {"content", {{{"type", "output_text"}, {"text", text}}}}});
}

std::string task_started(const std::string& turn) { return line("event_msg", {{"type", "task_started"}, {"turn_id", turn}}); }

std::string task_complete(const std::string& turn, const Json& last) {
  return line("event_msg", {{"type", "task_complete"}, {"turn_id", turn}, {"last_agent_message", last}});
}

TEST_CASE("codex history: the home is the private one, else CODEX_HOME, else HOME/.codex", "[codex][history]") {
  using Path = std::optional<fs::path>;
  CHECK(codex::history_codex_home(Path("/private"), std::string("/env"), std::string("/home/u")) == Path("/private"));
  CHECK(codex::history_codex_home(std::nullopt, std::string("/env"), std::string("/home/u")) == Path("/env"));
  CHECK(codex::history_codex_home(Path(""), std::string(""), std::string("/home/u")) == Path("/home/u/.codex"));
  CHECK(codex::history_codex_home(std::nullopt, std::nullopt, std::nullopt) == std::nullopt);
}

TEST_CASE("codex history: thread ids are UUIDs and nothing else", "[codex][history]") {
  CHECK(codex::is_thread_id(kRecordedThread));
  CHECK(codex::is_thread_id("01A22AF6-CF76-7173-BC2A-5E4304033BC4"));
  CHECK_FALSE(codex::is_thread_id(""));
  CHECK_FALSE(codex::is_thread_id("../" + kRecordedThread.substr(3)));
  CHECK_FALSE(codex::is_thread_id(kRecordedThread + "0"));
  CHECK_FALSE(codex::is_thread_id("01a22af6xcf76-7173-bc2a-5e4304033bc4"));
  CHECK_FALSE(codex::is_thread_id("01a22af6-cf76-7173-bc2a-5e4304033bcg"));
  CHECK_FALSE(codex::is_thread_id("01a22af6-cf76-7173-bc2a-5e4304033b/4"));
}

TEST_CASE("codex history: a recorded rollout replays as prompts, reasoning, messages, tools and turn ends", "[codex][history]") {
  CodexHome home;
  const auto file = home.write_recorded();
  CodexRecordingSink sink;
  const auto stats = codex::read_history(file, sink);
  const std::string work = (home.root / "work").string();
  const Lines expected{
      "provider_session " + kRecordedThread,
      R"(prompt 01a22af6-cfc5-7931-b06d-62fa44f1c282 "say hello" at 2026-11-30T05:39:07.953Z)",
      R"(message rs_mock_0001 thinking "The user wants a greeting.")",
      R"(message msg_mock_0001 text "Hello from the mock.")",
      R"(turn_end end_turn "Hello from the mock." in=100 out=7 cached=20)",
      R"(prompt 01a22af6-d0bc-7d51-886f-1d98860d1bb4 "run echo hi" at 2026-11-30T05:39:08.144Z)",
      R"(tool_started call_mock_0001 shell {"command":"echo hi","cwd":")" + work + R"("})",
      R"(tool_completed call_mock_0001 ok "hi\n")",
      R"(message msg_mock_0002 text "It printed hi.")",
      R"(turn_end end_turn "It printed hi." in=20055 out=13 cached=0)",
      R"(prompt 01a22af6-d29e-78e3-a8d6-d78da9fdfd7a "create declined.txt" at 2026-11-30T05:39:08.622Z)",
      R"(tool_started call_mock_0002 shell {"command":"touch declined.txt && echo created","cwd":")" + work + R"("})",
      R"(tool_completed call_mock_0002 error "declined by the user")",
      R"(message msg_mock_0003 text "Declined.")",
      R"(turn_end end_turn "Declined." in=20432 out=19 cached=0)",
      R"(prompt 01a22af6-d38e-75b1-bb2f-538b40d7a5a2 "add hello.txt" at 2026-11-30T05:39:08.868Z)",
      R"(tool_started call_mock_0003 apply_patch {"changes":[{"diff":"hello from mock\n","kind":"add","path":")" + work +
          R"(/hello.txt"}]})",
      R"(tool_completed call_mock_0003 ok "add )" + work + R"(/hello.txt")",
      R"(message msg_mock_0004 text "Patched.")",
      R"(turn_end end_turn "Patched." in=20808 out=19 cached=0)",
      R"(prompt 01a22af6-d51d-75b2-9ef4-2a448445f75f "sleep a while" at 2026-11-30T05:39:09.269Z)",
      R"(tool_started call_mock_0004 shell {"command":"sleep 30; echo never","cwd":")" + work + R"("})",
      R"(tool_completed call_mock_0004 error "aborted by user")",
      R"(turn_end cancelled in=10538 out=13 cached=0)",
      R"(prompt 01a22af6-d7bd-7571-ad78-828de12ea699 "hello again" at 2026-11-30T05:39:09.945Z)",
      R"(turn_end error error="mock: bad request")",
      R"(prompt 01a22af6-d866-73b2-ba2e-792aee5c5c63 "look at this" at 2026-11-30T05:39:10.100Z)",
      R"(message msg_mock_0005 text "Saw the image.")",
      R"(turn_end end_turn "Saw the image." in=10885 out=3 cached=0)",
  };
  CHECK(sink.lines == expected);
  CHECK(stats.opened);
  CHECK(stats.lines == 82);
  CHECK(stats.malformed == 0);
}

TEST_CASE("codex history: malformed lines, context messages and unfinished turns are handled and never fatal", "[codex][history]") {
  CodexHome home;
  const std::string id = "11111111-2222-4333-8444-555555555555";
  std::string text;
  text += "this is not json\r\n\n";
  text += "[\"an\",\"array\"]\n";
  text += R"({"type":"event_msg"})" "\n";  // no payload
  text += meta(id, "/w/project");
  text += line("turn_context", {{"cwd", "/w/project"}, {"model", "gpt-5.5"}});
  text += line("response_item", {{"type", "function_call_output"}, {"call_id", "call_elsewhere"}, {"output", "no call for it"}});
  text += task_started("turn-a");
  text += user_item("<environment_context>\n  <cwd>/w/project</cwd>\n</environment_context>");
  // A prompt that happens to start with '<' is still the user's: its UserMessage event says so.
  text += prompt("<div> is broken");
  text += line("response_item", {{"type", "message"}, {"role", "assistant"}, {"content", "no id"}});
  text += line("response_item", {{"type", "reasoning"}, {"id", "rs_1"}, {"summary", Json::array()}, {"encrypted_content", "opaque"}});
  text += line("response_item", {{"type", "reasoning"}, {"id", "rs_2"},
                                 {"summary", {{{"type", "summary_text"}, {"text", "Look."}}, {{"type", "summary_text"}, {"text", "Then fix."}}}},
                                 {"content", {{{"type", "reasoning_text"}, {"text", "raw thoughts"}}}}});
  text += line("response_item", {{"type", "function_call"}, {"name", "shell"}, {"call_id", "call_1"},
                                 {"arguments", R"({"command":["bash","-lc","ls -la"],"workdir":"/w/project/sub"})"}});
  text += line("response_item", {{"type", "function_call_output"}, {"call_id", "call_1"},
                                 {"output", "Exit code: 2\nWall time: 0.1 seconds\nOutput:\nls: cannot access\n"}});
  text += line("response_item", {{"type", "function_call"}, {"name", "docs__search"}, {"call_id", "call_2"}, {"arguments", R"({"q":"x"})"}});
  text += line("response_item", {{"type", "function_call_output"}, {"call_id", "call_2"}, {"output", {{"content", "found nothing"}, {"success", false}}}});
  // A patch written with CRLF line ends and a path padded with a space reads as the LF one would.
  text += line("response_item", {{"type", "custom_tool_call"}, {"name", "apply_patch"}, {"call_id", "call_3"},
                                 {"input", "*** Begin Patch\r\n*** Update File: a.txt \r\n*** Move to: b.txt\r\n@@\r\n-old\r\n+new\r\n"
                                           "*** Delete File: /abs/gone.txt\r\n*** End Patch\r\n"}});
  text += line("response_item", {{"type", "custom_tool_call_output"}, {"call_id", "call_3"}, {"output", "Exit code: 0\nOutput:\nSuccess.\n"}});
  text += line("response_item", {{"type", "web_search_call"}, {"id", "ws_1"}, {"status", "completed"}, {"action", {{"type", "search"}, {"query", "codex rollout"}}}});
  text += line("event_msg", {{"type", "error"}, {"message", "stream disconnected"}});
  text += assistant("msg_1", "final words");
  text += line("event_msg", {{"type", "token_count"}, {"info", nullptr}});
  text += line("event_msg", {{"type", "token_count"}, {"info", {{"last_token_usage", {{"input_tokens", 50}, {"cached_input_tokens", 10}, {"output_tokens", 5}}}}}});
  text += task_complete("turn-a", "final words");
  text += line("world_state", {{"full", true}});
  text += line("some_future_type", {{"x", 1}});
  text += task_started("turn-b");
  text += user_item("still running");  // the file ends before its event and before the turn does
  const auto file = home.write(home.day() / rollout_name(id), text);

  CodexRecordingSink sink;
  const auto stats = codex::read_history(file, sink);
  const Lines expected{
      "provider_session " + id,
      R"(prompt turn-a "<div> is broken" at 2026-12-01T10:00:00.000Z)",
      R"(message rs_2 thinking "Look.\n\nThen fix.")",
      R"(message rs_2:content thinking "raw thoughts")",
      R"(tool_started call_1 shell {"command":"ls -la","cwd":"/w/project/sub"})",
      R"(tool_completed call_1 error "ls: cannot access\n")",
      R"(tool_started call_2 docs__search {"q":"x"})",
      R"(tool_completed call_2 error "found nothing")",
      R"(tool_started call_3 apply_patch {"changes":[{"diff":"@@\n-old\n+new\n","kind":"update","movePath":"/w/project/b.txt","path":"/w/project/a.txt"},{"kind":"delete","path":"/abs/gone.txt"}]})",
      R"(tool_completed call_3 ok "Success.\n")",
      R"(tool_started ws_1 web_search {"query":"codex rollout"})",
      R"(tool_completed ws_1 ok "")",
      R"(message msg_1 text "final words")",
      R"(turn_end end_turn "final words" in=40 out=5 cached=10)",
      R"(prompt turn-b "still running" at 2026-12-01T10:00:00.000Z)",
  };
  CHECK(sink.lines == expected);
  // The patch's changes as diffs, as live: the update's hunk, the deleted file (whose old text the patch omits).
  REQUIRE(sink.tools.size() == 4);
  const auto& diffs = sink.tools[2].diffs;
  REQUIRE(diffs.size() == 2);
  CHECK(diffs[0].path == "/w/project/a.txt");
  CHECK(diffs[0].old_text == std::optional<std::string>("old\n"));
  CHECK(diffs[0].new_text == "new\n");
  CHECK(diffs[1].path == "/abs/gone.txt");
  CHECK(diffs[1].old_text == std::optional<std::string>(""));
  CHECK(diffs[1].new_text.empty());
  CHECK(sink.tools[0].diffs.empty());
  CHECK(stats.opened);
  CHECK(stats.lines == 29);
  CHECK(stats.malformed == 4);  // not JSON, an array, a line without payload, an assistant message without an id
  // The turn context, the stray output, the encrypted-only reasoning, the empty token count, world state and the
  // unknown type.
  CHECK(stats.ignored == 6);
}

TEST_CASE("codex history: update_plan calls replay as whole plans inside their turn and not as tool calls (as live)", "[codex][history]") {
  CodexHome home;
  const std::string id = "11111111-2222-4333-8444-555555555555";
  const auto plan_call = [](const std::string& call_id, const Json& arguments) {
    return line("response_item", {{"type", "function_call"}, {"name", "update_plan"}, {"call_id", call_id}, {"arguments", arguments.dump()}});
  };
  const auto plan_output = [](const std::string& call_id) {
    return line("response_item", {{"type", "function_call_output"}, {"call_id", call_id}, {"output", "Plan updated"}});
  };
  std::string text = meta(id, "/w");
  text += task_started("t1") + prompt("hello") + assistant("m1", "hi") + task_complete("t1", "hi");
  text += task_started("t2") + prompt("make a plan");
  text += plan_call("p1", {{"plan", {{{"step", "Read the code"}, {"status", "in_progress"}}, {{"step", "Fix it"}, {"status", "pending"}}}}});
  text += plan_output("p1");
  text += plan_call("p2", {{"explanation", "read it"},
                           {"plan", {{{"step", "Read the code"}, {"status", "completed"}}, {{"step", "Fix it"}, {"status", "in_progress"}}}}});
  text += plan_output("p2");
  text += assistant("m2", "Planned.") + task_complete("t2", "Planned.");
  const auto file = home.write(home.day() / rollout_name(id), text);
  CodexRecordingSink sink;
  codex::read_history(file, sink);
  const Lines expected{
      "provider_session " + id,
      R"(prompt t1 "hello" at 2026-12-01T10:00:00.000Z)",
      R"(message m1 text "hi")",
      R"(turn_end end_turn "hi")",
      R"(prompt t2 "make a plan" at 2026-12-01T10:00:00.000Z)",
      R"(message m2 text "Planned.")",
      R"(turn_end end_turn "Planned.")",
  };
  CHECK(sink.lines == expected);  // no tool call: live, Codex has no tool item for update_plan
  REQUIRE(sink.plans.size() == 2);
  // Both come in the second turn, after its prompt and before its message.
  CHECK(sink.plan_lines == std::vector<std::size_t>{5, 5});
  using switchboard::protocol::PlanEntryStatus;
  const auto& first = sink.plans[0].entries;
  REQUIRE(first.size() == 2);
  CHECK(first[0].content == "Read the code");
  CHECK(first[0].status == PlanEntryStatus::InProgress);
  CHECK(first[1].content == "Fix it");
  CHECK(first[1].status == PlanEntryStatus::Pending);
  const auto& second = sink.plans[1].entries;  // whole again, not a difference
  REQUIRE(second.size() == 2);
  CHECK(second[0].content == "Read the code");
  CHECK(second[0].status == PlanEntryStatus::Completed);
  CHECK(second[1].content == "Fix it");
  CHECK(second[1].status == PlanEntryStatus::InProgress);
}

TEST_CASE("codex history: rollouts without task events end a turn at the next prompt and at the end", "[codex][history]") {
  CodexHome home;
  const std::string id = "11111111-2222-4333-8444-666666666666";
  std::string text = meta(id, "/w");
  // An older layout: the prompt as a response item plus a user_message event, no task_started / task_complete.
  text += user_item("first") + line("event_msg", {{"type", "user_message"}, {"message", "first"}});
  text += assistant("m1", "one");
  text += user_item("second");  // no event at all: its text decides
  text += assistant("m2", "two");
  const auto file = home.write(home.day() / rollout_name(id), text);
  CodexRecordingSink sink;
  codex::read_history(file, sink);
  const Lines expected{
      "provider_session " + id,
      R"(prompt  "first" at 2026-12-01T10:00:00.000Z)",
      R"(message m1 text "one")",
      R"(turn_end end_turn "one")",
      R"(prompt  "second" at 2026-12-01T10:00:00.000Z)",
      R"(message m2 text "two")",
      R"(turn_end end_turn "two")",
  };
  CHECK(sink.lines == expected);
  // The listing, which parses only the lines that can be prompts once the first is out, counts the same.
  const auto list = codex::list_history(home.home, "/w");
  REQUIRE(list.sessions.size() == 1);
  CHECK(list.sessions[0].prompts == std::optional<std::int64_t>(2));
  CHECK(list.sessions[0].title == "first");
}

TEST_CASE("codex history: a fork replays its parent's conversation up to the fork and then its own", "[codex][history]") {
  // Recorded by smoke_codex.py's `fork` scenario: the parent took a turn, was forked, then took another turn.
  CodexHome home;
  const std::string parent = "01a22b17-322e-71c2-813a-8fc3c7c09ee5";
  const std::string fork = "01a22b17-33af-7351-bc4c-72f7dd656369";
  const auto copy = [&](const std::string& id) {
    std::string text;
    for (const auto& line : switchboard::testing::codex_fixture_lines("rollout/rollout-2026-11-30T06-14-30-" + id + ".jsonl")) text += line + "\n";
    return home.write(home.day() / ("rollout-2026-11-30T06-14-30-" + id + ".jsonl"), text);
  };
  const auto parent_file = copy(parent);
  const auto fork_file = copy(fork);

  CodexRecordingSink sink;
  const auto stats = codex::read_history(fork_file, sink, home.home);
  const Lines expected{
      "provider_session " + fork,
      R"(prompt 01a22b17-3268-7a32-a733-27cb66c47682 "remember the colour teal" at 2026-11-30T06:14:30.339Z)",
      R"(message msg_mock_0001 text "Noted: teal.")",
      R"(turn_end end_turn "Noted: teal." in=10324 out=3 cached=0)",
      R"(prompt 01a22b17-33e0-7b32-a896-b7a350468848 "which colour did I say?" at 2026-11-30T06:14:30.648Z)",
      R"(message msg_mock_0002 text "It was teal.")",
      R"(turn_end end_turn "It was teal." in=10434 out=3 cached=0)",
  };
  CHECK(sink.lines == expected);  // the parent's turn after the fork is not the fork's
  CHECK(stats.opened);
  CHECK(stats.lines == 14 + 11);
  CHECK(stats.malformed == 0);

  // Without the home (or without the parent's file) the fork's own file is all there is.
  CodexRecordingSink alone;
  codex::read_history(fork_file, alone);
  CHECK(alone.lines == Lines{expected[0], expected[4], expected[5], expected[6]});

  const auto list = codex::list_history(home.home, home.project.string());
  REQUIRE(list.sessions.size() == 2);
  for (const auto& entry : list.sessions) {
    CHECK(entry.prompts == std::optional<std::int64_t>(2));
    CHECK(entry.title == "remember the colour teal");  // the fork's conversation starts with its parent's
  }
  fs::remove(parent_file);
  CodexRecordingSink orphan;
  codex::read_history(fork_file, orphan, home.home);
  CHECK(orphan.lines == alone.lines);
}

TEST_CASE("codex history: a missing rollout reads as nothing", "[codex][history]") {
  CodexRecordingSink sink;
  const auto stats = codex::read_history("/nonexistent/codex/rollout.jsonl", sink);
  CHECK_FALSE(stats.opened);
  CHECK(sink.lines.empty());
}

TEST_CASE("codex history: listing shows a directory's threads newest first and counts what it skipped", "[codex][history]") {
  CodexHome home;
  const std::string cwd = home.project.string();
  home.write_recorded(/*age_seconds=*/300);
  const std::string newer = "22222222-aaaa-4bbb-8ccc-dddddddddddd";
  const std::string long_prompt =
      "  please refactor the parser so that it reports line numbers in every error message it produces\nand more";
  // Recorded with a trailing slash: the same directory.
  home.write(home.day("2026/12/01") / rollout_name(newer),
             meta(newer, cwd + "/", "2026-12-01T10:00:00.000Z") + task_started("t1") + prompt(long_prompt) + "garbage\n" +
                 assistant("m1", "ok") + task_complete("t1", "ok") + task_started("t2") + prompt("and add tests"),
             /*age_seconds=*/100);
  // Another directory's thread: not listed, not counted.
  const std::string foreign = "33333333-aaaa-4bbb-8ccc-dddddddddddd";
  home.write(home.day() / rollout_name(foreign), meta(foreign, "/elsewhere") + prompt("not here"), 50);
  // Skipped files: no session_meta, a session_meta naming another thread, no conversation.
  home.write(home.day() / rollout_name("44444444-aaaa-4bbb-8ccc-dddddddddddd"), prompt("headless"), 40);
  home.write(home.day() / rollout_name("55555555-aaaa-4bbb-8ccc-dddddddddddd"), meta(newer, cwd) + prompt("copied"), 30);
  home.write(home.day() / rollout_name("66666666-aaaa-4bbb-8ccc-dddddddddddd"), meta("66666666-aaaa-4bbb-8ccc-dddddddddddd", cwd), 20);
  // Not rollouts, or not where Codex keeps them: never read.
  home.write(home.day() / "notes.jsonl", "garbage\n", 10);
  fs::create_directories(home.day() / "extra");
  home.write(home.day() / "extra" / rollout_name("77777777-aaaa-4bbb-8ccc-dddddddddddd"),
             meta("77777777-aaaa-4bbb-8ccc-dddddddddddd", cwd) + prompt("too deep"), 10);

  const auto list = codex::list_history(home.home, cwd);
  REQUIRE(list.sessions.size() == 2);
  const auto& first = list.sessions.at(0);
  CHECK(first.provider_session_id == newer);
  CHECK(first.title == "please refactor the parser so that it reports line numbers in every error messag…");
  CHECK(first.cwd == cwd + "/");  // as recorded
  CHECK(first.prompts == std::optional<std::int64_t>(2));
  CHECK(first.created_at == switchboard::parse_iso8601_millis("2026-12-01T10:00:00.000Z"));
  const auto& recorded = list.sessions.at(1);
  CHECK(recorded.provider_session_id == kRecordedThread);
  CHECK(recorded.title == "say hello");
  CHECK(recorded.cwd == cwd);
  CHECK(recorded.prompts == std::optional<std::int64_t>(7));
  CHECK(recorded.created_at == switchboard::parse_iso8601_millis("2026-11-30T05:39:07.779Z"));
  REQUIRE(recorded.path);
  CHECK(recorded.path->ends_with("/sessions/2026/11/30/" + kRecordedFile));
  CHECK(first.updated_at > recorded.updated_at);
  CHECK(recorded.updated_at > switchboard::unix_millis_now() - 3600 * 1000);
  CHECK(list.skipped_files == 3);
  CHECK(list.skipped_lines == 1);  // "garbage" in the listed thread

  const auto nowhere = codex::list_history(home.home, "/nowhere/at/all");
  CHECK(nowhere.sessions.empty());
  const auto no_home = codex::list_history(home.root / "missing-home", cwd);
  CHECK(no_home.sessions.empty());
  CHECK(no_home.skipped_files == 0);
}

TEST_CASE("codex history: a thread is found by its id only in its own directory", "[codex][history]") {
  CodexHome home;
  const auto file = home.write_recorded();
  const std::string cwd = home.project.string();
  CHECK(codex::find_rollout(home.home, kRecordedThread, cwd) == std::optional<fs::path>(file));
  CHECK(codex::find_rollout(home.home, kRecordedThread, cwd + "/") == std::optional<fs::path>(file));
  CHECK_FALSE(codex::find_rollout(home.home, kRecordedThread, "/elsewhere"));
  CHECK_FALSE(codex::find_rollout(home.home, "99999999-0000-4000-8000-000000000000", cwd));
  CHECK_FALSE(codex::find_rollout(home.home, "../" + kRecordedFile, cwd));
  CHECK_FALSE(codex::find_rollout(home.home, "2026/11/30/" + kRecordedFile, cwd));
  CHECK_FALSE(codex::find_rollout(home.root / "missing-home", kRecordedThread, cwd));
}

TEST_CASE("codex history: the descriptor's hooks read the CODEX_HOME its CLIs use", "[codex][history]") {
  CodexHome home;
  home.write_recorded();
  boost::asio::io_context io;
  codex::CodexConfig config;
  config.executable = "/nonexistent/switchboard-test/codex";  // not installed: nothing is spawned
  codex::ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:1/v1";
  endpoint.codex_home = home.home;
  config.endpoint = endpoint;
  const auto descriptor = codex::codex_agent(io, config);
  REQUIRE(descriptor.list_history);
  REQUIRE(descriptor.read_history);
  const auto capabilities = descriptor.discover().capabilities;
  CHECK(capabilities.history_list);
  CHECK(capabilities.history_read);
  CHECK(capabilities.resume);

  const auto listed = descriptor.list_history(home.project.string());
  REQUIRE(std::holds_alternative<adapters::HistoryList>(listed));
  const auto& list = std::get<adapters::HistoryList>(listed);
  REQUIRE(list.sessions.size() == 1);
  CHECK(list.sessions[0].provider_session_id == kRecordedThread);

  CodexRecordingSink sink;
  const auto read = descriptor.read_history(home.project.string(), kRecordedThread, sink);
  REQUIRE(std::holds_alternative<adapters::HistoryReadStats>(read));
  CHECK(std::get<adapters::HistoryReadStats>(read).lines == 82);
  CHECK(std::get<adapters::HistoryReadStats>(read).skipped_lines == 0);
  REQUIRE(sink.lines.size() == 29);
  CHECK(sink.lines.front() == "provider_session " + kRecordedThread);

  for (const std::string& id : {std::string("99999999-0000-4000-8000-000000000000"), std::string("../../etc/passwd"), std::string()}) {
    CodexRecordingSink ignored;
    const auto refused = descriptor.read_history(home.project.string(), id, ignored);
    REQUIRE(std::holds_alternative<adapters::AdapterError>(refused));
    CHECK(std::get<adapters::AdapterError>(refused).code == switchboard::protocol::ErrorCode::UnknownHistorySession);
    CHECK(ignored.lines.empty());
  }
  CodexRecordingSink elsewhere;
  CHECK(std::holds_alternative<adapters::AdapterError>(descriptor.read_history("/elsewhere", kRecordedThread, elsewhere)));
}

}  // namespace codex_history_tests
