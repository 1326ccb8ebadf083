#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pi/PiAdapter.h"
#include "pi/PiHistory.h"
#include "pi/PiPermissions.h"
#include "pi/PiRuntime.h"
#include "pi/PiTranslator.h"
#include "support/CodexRecording.h"
#include "support/TempDir.h"
#include "support/SourceTree.h"

// The Pi translator fed recorded `pi --mode rpc` streams (tests/fixtures/pi/: Pi 1.6.0 against the project's Chat
// Completions mock, with our permission extension loaded, recorded with a small driver; the scratch directory is
// written <scratch>). The `response` lines answer the driver's commands, which the adapter handles, so they are
// not fed. The recording sink is the generic one the Codex and OpenCode tests use.

namespace pi_translator_tests {

using nlohmann::json;
using switchboard::adapters::PermissionAnswer;
using switchboard::adapters::pi::PiTranslator;
using switchboard::testing::CodexRecordingSink;
namespace pi = switchboard::adapters::pi;

std::vector<std::string> recorded(const std::string& name) {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/pi/") + name);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (json::parse(line).value("type", "") != "response") lines.push_back(line);
  }
  return lines;
}

// What the sink heard, with the deltas joined into one string.
struct Heard {
  std::vector<std::string> lines;
  std::string streamed;
};

Heard without_deltas(const CodexRecordingSink& sink) {
  Heard heard;
  for (const auto& line : sink.lines) {
    if (line.rfind("delta ", 0) == 0) {
      heard.streamed += json::parse(line.substr(line.find(" \"") + 1)).get<std::string>();
    } else {
      heard.lines.push_back(line);
    }
  }
  return heard;
}

struct Fed {
  CodexRecordingSink sink;
  std::vector<json> replies;
  PiTranslator translator{sink, [this](const json& reply) { replies.push_back(reply); }};
};

TEST_CASE("pi translator: a recorded allowed command becomes our events, in order, and ends at agent_settled", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  for (const auto& line : recorded("allowed-command.ndjson")) fed.translator.feed_line(line);
  const auto heard = without_deltas(fed.sink);
  INFO(json(fed.sink.lines).dump(1));
  REQUIRE(heard.lines.size() == 7);
  CHECK(heard.lines[0] == R"(message pi-1 text "Running it.")");
  CHECK(heard.lines[1] == R"(tool_started call_mock_0001 bash {"command":"echo hi from pi"})");
  CHECK(heard.lines[2].rfind("permission ", 0) == 0);
  CHECK(heard.lines[2].find(R"( bash "echo hi from pi")") != std::string::npos);
  CHECK(heard.lines[3] == R"(tool_output call_mock_0001 "hi from pi\n")");
  CHECK(heard.lines[4] == R"(tool_completed call_mock_0001 ok "hi from pi\n")");
  CHECK(heard.lines[5] == R"(message pi-2 text "Done: hi")");
  CHECK(heard.lines[6].rfind(R"(turn_end end_turn "Done: hi" in=)", 0) == 0);
  CHECK(heard.streamed == "Running it.Done: hi");
  REQUIRE(fed.sink.permissions.size() == 1);
  const auto& ask = fed.sink.permissions[0].second;
  CHECK(ask.tool == "bash");
  CHECK(ask.input == json{{"command", "echo hi from pi"}});
  CHECK(ask.description == "Run: echo hi from pi");
  REQUIRE(fed.sink.turns.size() == 1);
  REQUIRE(fed.sink.turns[0].usage);
  CHECK(fed.sink.turns[0].usage->output_tokens.value_or(0) > 0);
  CHECK(fed.translator.stats().malformed == 0);
  CHECK(fed.translator.stats().unknown == 0);
  CHECK(fed.replies.empty());
  CHECK_FALSE(fed.translator.turn_running());
  // The dialog's turn is over: an answer that comes now is not passed on.
  CHECK_FALSE(fed.translator.take_dialog(fed.sink.permissions[0].first));
}

TEST_CASE("pi translator: a denied command's block reason is its error result and the turn goes on to the answer", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  for (const auto& line : recorded("denied-command.ndjson")) fed.translator.feed_line(line);
  const auto heard = without_deltas(fed.sink);
  INFO(json(fed.sink.lines).dump(1));
  REQUIRE(heard.lines.size() == 6);
  CHECK(heard.lines[3] == R"(tool_completed call_mock_0001 error "Denied by the user: not now")");
  CHECK(heard.lines[5].rfind(R"(turn_end end_turn "It was refused.")", 0) == 0);
}

TEST_CASE("pi translator: an aborted command ends the turn cancelled with the output it had", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  for (const auto& line : recorded("aborted-command.ndjson")) fed.translator.feed_line(line);
  const auto heard = without_deltas(fed.sink);
  INFO(json(fed.sink.lines).dump(1));
  REQUIRE(fed.sink.turns.size() == 1);
  CHECK(fed.sink.turns[0].stop_reason == switchboard::protocol::StopReason::Cancelled);
  CHECK(std::find(heard.lines.begin(), heard.lines.end(), R"(tool_output call_mock_0001 "started\n")") != heard.lines.end());
  CHECK(std::find(heard.lines.begin(), heard.lines.end(), R"(tool_completed call_mock_0001 error "started\n\n\nCommand aborted")") !=
        heard.lines.end());
  CHECK(fed.translator.stats().unknown == 0);
}

TEST_CASE("pi translator: a provider failure is a retry status, then the turn's error, from the events alone", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  for (const auto& line : recorded("provider-down.ndjson")) fed.translator.feed_line(line);
  INFO(json(fed.sink.lines).dump(1));
  // The first agent_end (willRetry) ends nothing; agent_settled does.
  REQUIRE(fed.sink.turns.size() == 1);
  CHECK(fed.sink.turns[0].stop_reason == switchboard::protocol::StopReason::Error);
  REQUIRE(fed.sink.turns[0].error);
  CHECK(fed.sink.turns[0].error->find("mock provider down") != std::string::npos);
  REQUIRE(fed.sink.statuses.size() == 1);
  CHECK(fed.sink.statuses[0].status == switchboard::protocol::AgentStatusKind::Retrying);
  CHECK(fed.sink.statuses[0].attempt == 1);
  CHECK(fed.sink.statuses[0].max_attempts == 1);
  CHECK(fed.sink.statuses[0].retry_delay_ms == 50);
  CHECK(fed.translator.stats().unknown == 0);
}

TEST_CASE("pi translator: a retry that works clears the status and the earlier failure", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  fed.translator.feed(json{{"type", "message_start"}, {"message", {{"role", "assistant"}}}});
  fed.translator.feed(json{{"type", "message_end"}, {"message", {{"role", "assistant"}, {"stopReason", "error"}, {"errorMessage", "boom"}}}});
  fed.translator.feed(json{{"type", "auto_retry_start"}, {"attempt", 1}, {"maxAttempts", 3}, {"delayMs", 10}, {"errorMessage", "boom"}});
  fed.translator.feed(json{{"type", "message_start"}, {"message", {{"role", "assistant"}}}});
  fed.translator.feed(json{{"type", "message_end"},
                           {"message", {{"role", "assistant"}, {"stopReason", "stop"}, {"content", {{{"type", "text"}, {"text", "ok"}}}}}}});
  fed.translator.feed(json{{"type", "auto_retry_end"}, {"success", true}, {"attempt", 1}});
  fed.translator.feed(json{{"type", "agent_settled"}, {"aborted", false}});
  INFO(json(fed.sink.lines).dump(1));
  REQUIRE(fed.sink.statuses.size() == 2);
  CHECK(fed.sink.statuses[1].status == switchboard::protocol::AgentStatusKind::Working);
  REQUIRE(fed.sink.turns.size() == 1);
  CHECK(fed.sink.turns[0].stop_reason == switchboard::protocol::StopReason::EndTurn);
  CHECK(fed.sink.turns[0].text == "ok");
}

TEST_CASE("pi translator: thinking streams and completes as thinking, apart from the text", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  fed.translator.feed(json{{"type", "message_start"}, {"message", {{"role", "assistant"}}}});
  fed.translator.feed(json{{"type", "message_update"}, {"assistantMessageEvent", {{"type", "thinking_delta"}, {"delta", "hmm"}}}});
  fed.translator.feed(json{{"type", "message_update"}, {"assistantMessageEvent", {{"type", "text_delta"}, {"delta", "yes"}}}});
  fed.translator.feed(json{{"type", "message_end"},
                           {"message", {{"role", "assistant"}, {"content", {{{"type", "thinking"}, {"thinking", "hmm"}}, {{"type", "text"}, {"text", "yes"}}}}}}});
  CHECK(fed.sink.lines == std::vector<std::string>{R"(delta pi-1-thinking thinking "hmm")", R"(delta pi-1 text "yes")",
                                                   R"(message pi-1-thinking thinking "hmm")", R"(message pi-1 text "yes")"});
}

TEST_CASE("pi translator: a tool's cumulative partial results become the new pieces only", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  const auto update = [](const std::string& text) {
    return json{{"type", "tool_execution_update"}, {"toolCallId", "c1"}, {"partialResult", {{"content", {{{"type", "text"}, {"text", text}}}}}}};
  };
  fed.translator.feed(json{{"type", "tool_execution_start"}, {"toolCallId", "c1"}, {"toolName", "bash"}, {"args", {{"command", "x"}}}});
  fed.translator.feed(json{{"type", "tool_execution_update"}, {"toolCallId", "c1"}, {"partialResult", {{"content", json::array()}}}});
  fed.translator.feed(update("one\n"));
  fed.translator.feed(update("one\ntwo\n"));
  fed.translator.feed(update("one\ntwo\n"));
  fed.translator.feed(update("rewritten\n"));
  CHECK(fed.sink.lines == std::vector<std::string>{R"(tool_started c1 bash {"command":"x"})", R"(tool_output c1 "one\n")",
                                                   R"(tool_output c1 "two\n")", R"(tool_output c1 "rewritten\n")"});
}

TEST_CASE("pi translator: another extension's dialog is dismissed at once and its notices dropped, never asked", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  fed.translator.feed(json{{"type", "extension_ui_request"}, {"id", "d1"}, {"method", "confirm"}, {"title", "Really?"}, {"message", "x"}});
  fed.translator.feed(json{{"type", "extension_ui_request"}, {"id", "d2"}, {"method", "input"}, {"title", "Name?"}});
  fed.translator.feed(json{{"type", "extension_ui_request"}, {"id", "d3"}, {"method", "notify"}, {"message", "hello"}});
  CHECK(fed.sink.lines.empty());
  REQUIRE(fed.replies.size() == 2);
  CHECK(fed.replies[0] == json{{"type", "extension_ui_response"}, {"id", "d1"}, {"cancelled", true}});
  CHECK(fed.replies[1] == json{{"type", "extension_ui_response"}, {"id", "d2"}, {"cancelled", true}});
  CHECK(fed.translator.stats().dropped == 3);
}

TEST_CASE("pi translator: bad lines are counted and skipped, and a settle that is not ours ends nothing", "[pi]") {
  Fed fed;
  fed.translator.feed_line("not json");
  fed.translator.feed_line("[1,2]");
  fed.translator.feed(json{{"type", "tool_execution_start"}});
  fed.translator.feed(json{{"type", "extension_ui_request"}, {"id", "p1"}, {"method", "input"}, {"title", pi::kPermissionDialogTitle}, {"placeholder", "{nope"}});
  fed.translator.feed(json{{"type", "something_new"}});
  fed.translator.feed(json{{"type", "agent_settled"}, {"aborted", false}});
  CHECK(fed.translator.stats().lines == 6);
  CHECK(fed.translator.stats().malformed == 4);
  CHECK(fed.translator.stats().unknown == 1);
  CHECK(fed.sink.turns.empty());
  // The unreadable permission dialog is denied rather than left hanging.
  REQUIRE(fed.replies.size() == 1);
  CHECK(fed.replies[0]["id"] == "p1");
  CHECK(json::parse(fed.replies[0]["value"].get<std::string>())["allow"] == false);
}

TEST_CASE("pi translator: a refused prompt ends its turn with the refusal", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  fed.translator.turn_refused("Pi refused the prompt: busy");
  REQUIRE(fed.sink.turns.size() == 1);
  CHECK(fed.sink.turns[0].stop_reason == switchboard::protocol::StopReason::Error);
  CHECK(fed.sink.turns[0].error == "Pi refused the prompt: busy");
  CHECK_FALSE(fed.translator.turn_running());
}

TEST_CASE("pi translator: a compaction is compacting then compacted, and one Pi could not do is back to working with its reason", "[pi]") {
  Fed fed;
  fed.translator.feed(json{{"type", "compaction_start"}, {"reason", "manual"}});
  fed.translator.feed(json{{"type", "compaction_end"}, {"reason", "manual"}, {"aborted", false}, {"willRetry", false}});
  // As Pi 1.6.0 wrote it for a conversation too short to summarize.
  fed.translator.feed(json{{"type", "compaction_end"}, {"reason", "manual"}, {"aborted", false}, {"willRetry", false},
                           {"errorMessage", "Compaction failed: Nothing to compact (session too small)"}});
  REQUIRE(fed.sink.statuses.size() == 3);
  CHECK(fed.sink.statuses[0].status == switchboard::protocol::AgentStatusKind::Compacting);
  CHECK(fed.sink.statuses[1].status == switchboard::protocol::AgentStatusKind::Compacted);
  CHECK(fed.sink.statuses[2].status == switchboard::protocol::AgentStatusKind::Working);
  CHECK(fed.sink.statuses[2].message == "Compaction failed: Nothing to compact (session too small)");
}

TEST_CASE("pi translator: a command Pi ran without the model ends its turn at once, one that started a run at its settle", "[pi]") {
  Fed fed;
  fed.translator.turn_started();
  fed.translator.turn_handled();
  REQUIRE(fed.sink.turns.size() == 1);
  CHECK(fed.sink.turns[0].stop_reason == switchboard::protocol::StopReason::EndTurn);
  CHECK_FALSE(fed.translator.turn_running());

  // An extension's command that sent the model a message: its run ends the turn, not the prompt's answer.
  fed.translator.turn_started();
  fed.translator.feed(json{{"type", "agent_start"}});
  fed.translator.turn_handled();
  CHECK(fed.sink.turns.size() == 1);
  CHECK(fed.translator.turn_running());
  fed.translator.feed(json{{"type", "agent_settled"}, {"aborted", false}});
  CHECK(fed.sink.turns.size() == 2);
}

TEST_CASE("pi permissions: ask asks for every tool, accept-edits lets only edits and writes through, full-access all", "[pi]") {
  for (const std::string tool : {"bash", "read", "edit", "write", "grep", "some_extension_tool"}) {
    INFO(tool);
    CHECK_FALSE(pi::mode_allows("ask", tool));
    CHECK(pi::mode_allows("accept-edits", tool) == (tool == "edit" || tool == "write"));
    CHECK(pi::mode_allows("full-access", tool));
  }
  CHECK(pi::is_mode("ask"));
  CHECK_FALSE(pi::is_mode("yolo"));
}

TEST_CASE("pi permissions: the answer is the JSON value the extension reads, a deny's message with it", "[pi]") {
  const auto allow = pi::permission_answer("d1", PermissionAnswer{true, "ignored"});
  CHECK(allow["type"] == "extension_ui_response");
  CHECK(allow["id"] == "d1");
  CHECK(json::parse(allow["value"].get<std::string>()) == json{{"allow", true}});
  const auto deny = pi::permission_answer("d2", PermissionAnswer{false, "not now"});
  CHECK(json::parse(deny["value"].get<std::string>()) == json{{"allow", false}, {"message", "not now"}});
  const auto ask = pi::permission_ask("d3", R"({"toolCallId":"c","toolName":"edit","input":{"path":"a.txt","edits":[]}})");
  REQUIRE(ask);
  CHECK(ask->subject == "a.txt");
  CHECK(ask->description == "Edit a.txt");
  // Allowing it always means this tool on this subject only.
  REQUIRE(ask->suggested_rule);
  CHECK(ask->suggested_rule->tool == "edit");
  CHECK(ask->suggested_rule->pattern == "a.txt");
  const auto command = pi::permission_ask("d5", R"({"toolName":"bash","input":{"command":"rm -rf [ab]*"}})");
  REQUIRE(command);
  REQUIRE(command->suggested_rule);
  CHECK(command->suggested_rule->pattern == "rm -rf \\[ab\\]\\*");
  CHECK_FALSE(pi::permission_ask("d4", R"({"input":{}})"));
}

TEST_CASE("pi: edit and write calls carry their changes as diffs, in every input shape Pi takes", "[pi]") {
  using switchboard::protocol::FileDiff;
  const auto as_json = [](const std::vector<FileDiff>& diffs) {
    json out = json::array();
    for (const auto& d : diffs) out.push_back(json{{"path", d.path}, {"old", d.old_text.value_or("<none>")}, {"new", d.new_text}});
    return out;
  };
  CHECK(as_json(pi::file_diffs("edit", json::parse(R"({"path":"a.txt","edits":[{"oldText":"x","newText":"y"},{"oldText":"p","newText":"q"}]})"))) ==
        json::parse(R"([{"path":"a.txt","old":"x","new":"y"},{"path":"a.txt","old":"p","new":"q"}])"));
  // A single edit object, the edits as a JSON string, the legacy top-level pair.
  CHECK(as_json(pi::file_diffs("edit", json::parse(R"({"path":"a.txt","edits":{"oldText":"x","newText":"y"}})"))).size() == 1);
  CHECK(as_json(pi::file_diffs("edit", json::parse(R"({"path":"a.txt","edits":"[{\"oldText\":\"x\",\"newText\":\"y\"}]"})"))) ==
        json::parse(R"([{"path":"a.txt","old":"x","new":"y"}])"));
  CHECK(as_json(pi::file_diffs("edit", json::parse(R"({"path":"a.txt","oldText":"x","newText":"y"})"))).size() == 1);
  // A write is the whole file, what was there before unknown.
  CHECK(as_json(pi::file_diffs("write", json::parse(R"({"path":"b.txt","content":"all\n"})"))) ==
        json::parse(R"([{"path":"b.txt","old":"<none>","new":"all\n"}])"));
  // Nothing for other tools, or input without a path or texts.
  CHECK(pi::file_diffs("bash", json::parse(R"({"path":"a","content":"x"})")).empty());
  CHECK(pi::file_diffs("edit", json::parse(R"({"edits":[{"oldText":"x","newText":"y"}]})")).empty());
  CHECK(pi::file_diffs("edit", json::parse(R"({"path":"a","edits":[{"oldText":"x"}],"note":1})")).empty());
  CHECK(pi::file_diffs("edit", json::parse(R"({"path":"a","edits":"not json"})")).empty());
}

TEST_CASE("pi: a model choice splits into provider, model and a known thinking level only", "[pi]") {
  const auto full = pi::parse_model_choice("mock/mock-model:high");
  CHECK(full.provider == "mock");
  CHECK(full.model == "mock-model");
  CHECK(full.thinking == "high");
  const auto colon = pi::parse_model_choice("ollama/llama3:8b");
  CHECK(colon.model == "llama3:8b");
  CHECK(colon.thinking.empty());
  const auto level_only = pi::parse_model_choice(":off");
  CHECK(level_only.model.empty());
  CHECK(level_only.thinking == "off");
  const auto bare = pi::parse_model_choice("gpt-x");
  CHECK(bare.provider.empty());
  CHECK(bare.model == "gpt-x");
}

TEST_CASE("pi: Node 22.19 and newer run Pi, older ones and non-versions do not", "[pi]") {
  CHECK(pi::node_version("v22.23.5\n") == std::vector<int>{22, 23, 5});
  CHECK_FALSE(pi::node_version("22.23.5"));
  CHECK_FALSE(pi::node_version("v22.x"));
  CHECK(pi::node_runs_pi({22, 19, 0}));
  CHECK(pi::node_runs_pi({24, 0, 0}));
  CHECK(pi::node_runs_pi({22, 23, 5}));
  CHECK_FALSE(pi::node_runs_pi({22, 18, 9}));
  CHECK_FALSE(pi::node_runs_pi({20, 20, 2}));
}

std::string fixture_text(const std::string& name) {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/pi/") + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("pi history: a session file replays its current branch as a turn, its bad line skipped and counted", "[pi]") {
  CodexRecordingSink sink;
  const auto stats = pi::read_history(switchboard::testing::source_path("tests/fixtures/pi/session.jsonl"), sink);
  CHECK(stats.opened);
  CHECK(stats.malformed == 1);
  INFO(json(sink.lines).dump(1));
  // The abandoned prompt (a branch the leaf does not descend from) is not replayed.
  CHECK(sink.lines == std::vector<std::string>{
                          "provider_session 01234567-89ab-4def-8123-456789abcdef",
                          R"(prompt 9a4640eb "run it" at 2026-12-01T18:39:36.797Z)",
                          R"(message 81eebde1 text "Running it.")",
                          R"(tool_started call_mock_0001 bash {"command":"echo hi from pi"})",
                          R"(tool_completed call_mock_0001 ok "hi from pi\n")",
                          R"(message 4cd0825f text "Done: hi")",
                          R"(turn_end end_turn "Done: hi")",
                      });
}

TEST_CASE("pi history: the sessions of a directory are listed from Pi's own folder for it, others not", "[pi]") {
  switchboard::testing::TempDir tmp{"pi-history"};
  const auto root = tmp.path() / "sessions";
  const std::string cwd = (tmp.path() / "work").string();
  auto text = fixture_text("session.jsonl");
  const auto at = text.find("<scratch>/work");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string("<scratch>/work").size(), cwd);
  std::filesystem::create_directories(pi::sessions_dir(root, cwd));
  std::ofstream(pi::sessions_dir(root, cwd) / "2026-12-01T18-39-36-261Z_01234567-89ab-4def-8123-456789abcdef.jsonl") << text;
  std::ofstream(pi::sessions_dir(root, cwd) / "empty.jsonl") << "not a header\n";
  CHECK(pi::sessions_dir(root, "/a/b:c").filename() == "--a-b-c--");

  const auto listed = pi::list_history(pi::sessions_dir(root, cwd), cwd + "/");
  REQUIRE(listed.sessions.size() == 1);
  CHECK(listed.sessions[0].provider_session_id == "01234567-89ab-4def-8123-456789abcdef");
  CHECK(listed.sessions[0].title == "run it");
  CHECK(listed.sessions[0].prompts == 2);  // both prompts of the file, the abandoned one too
  CHECK(listed.skipped_files == 1);
  CHECK(listed.skipped_lines == 1);
  CHECK(pi::find_session_file(pi::sessions_dir(root, cwd), cwd, "01234567-89ab-4def-8123-456789abcdef"));
  CHECK_FALSE(pi::find_session_file(pi::sessions_dir(root, cwd), cwd, "nope"));
  CHECK(pi::list_history(pi::sessions_dir(root, cwd), (tmp.path() / "elsewhere").string()).sessions.empty());
}

TEST_CASE("pi history: the session folder is chosen as Pi chooses it, and a flat folder lists only the directory's sessions", "[pi]") {
  switchboard::testing::TempDir tmp{"pi-places"};
  const auto home = tmp.path() / "home";
  const auto agent = home / ".pi" / "agent";
  const auto work = tmp.path() / "work";
  std::filesystem::create_directories(agent);
  std::filesystem::create_directories(work / ".pi");
  const auto folder = [&](const pi::SessionPlaces& places) { return pi::session_folder(places, work.string()); };

  // By default: the agent directory (PI_CODING_AGENT_DIR, else ~/.pi/agent), one folder per directory.
  CHECK(folder(pi::session_places(std::nullopt, std::nullopt, home.string())) == pi::sessions_dir(agent / "sessions", work.string()));
  CHECK(folder(pi::session_places("~/cfg", std::nullopt, home.string())) == pi::sessions_dir(home / "cfg" / "sessions", work.string()));
  CHECK_FALSE(folder(pi::session_places(std::nullopt, std::nullopt, std::nullopt)));
  // The agent directory's sessionDir setting, relative to the working directory; the project's wins over it;
  // the variable over both.
  std::ofstream(agent / "settings.json") << R"({"sessionDir": "pi-sessions", "defaultModel": "m"})";
  const auto places = pi::session_places(std::nullopt, std::nullopt, home.string());
  CHECK(folder(places) == work / "pi-sessions");
  std::ofstream(work / ".pi" / "settings.json") << R"({"sessionDir": "~/flat"})";
  CHECK(folder(places) == home / "flat");
  CHECK(folder(pi::session_places(std::nullopt, (tmp.path() / "env").string(), home.string())) == tmp.path() / "env");
  // A settings file that is not JSON names no folder: the next place decides.
  std::ofstream(work / ".pi" / "settings.json") << "{ not json";
  CHECK(folder(places) == work / "pi-sessions");

  // A flat folder holds every directory's sessions: only this one's are listed and found.
  const auto flat = tmp.path() / "flat-sessions";
  std::filesystem::create_directories(flat);
  const auto text = fixture_text("session.jsonl");
  std::string ours = text;
  std::string theirs = text;
  ours.replace(ours.find("<scratch>/work"), std::string("<scratch>/work").size(), work.string());
  theirs.replace(theirs.find("<scratch>/work"), std::string("<scratch>/work").size(), (tmp.path() / "other").string());
  theirs.replace(theirs.find("01234567-89ab-4def-8123-456789abcdef"), 36, "fedcba98-7654-4321-8123-456789abcdef");
  std::ofstream(flat / "2026-12-01T18-39-36-261Z_01234567-89ab-4def-8123-456789abcdef.jsonl") << ours;
  std::ofstream(flat / "2026-12-01T18-40-00-000Z_fedcba98-7654-4321-8123-456789abcdef.jsonl") << theirs;
  const auto listed = pi::list_history(flat, work.string());
  REQUIRE(listed.sessions.size() == 1);
  CHECK(listed.sessions[0].provider_session_id == "01234567-89ab-4def-8123-456789abcdef");
  CHECK(pi::find_session_file(flat, work.string(), "01234567-89ab-4def-8123-456789abcdef"));
  CHECK_FALSE(pi::find_session_file(flat, work.string(), "fedcba98-7654-4321-8123-456789abcdef"));
  CHECK(pi::find_session_file(flat, (tmp.path() / "other").string(), "fedcba98-7654-4321-8123-456789abcdef"));
}

TEST_CASE("pi: get_available_models' models are named provider/id, as set_model takes them, the current one marked", "[pi]") {
  const auto response = json::parse(R"({"id":"sb-2","type":"response","command":"get_available_models","success":true,"data":{"models":[
      {"id":"mock-model","name":"Mock","provider":"mock","api":"openai-completions","reasoning":false},
      {"id":"other","provider":"mock"},
      {"id":"orphan"}]}})");
  const auto models = pi::offered_models(response, "mock/mock-model");
  REQUIRE(models.size() == 2);
  CHECK(models[0].id == "mock/mock-model");
  CHECK(models[0].name == "Mock");
  CHECK(models[0].is_default == true);
  CHECK(models[1].id == "mock/other");
  CHECK_FALSE(models[1].name.has_value());
  CHECK_FALSE(models[1].is_default.has_value());
  CHECK(pi::offered_models(json::parse(R"({"success":true,"data":{}})"), "").empty());
  // A session that chose its model: Pi's default is not known from it, so none is marked.
  for (const auto& model : pi::offered_models(response, "")) CHECK_FALSE(model.is_default.has_value());
}

}  // namespace pi_translator_tests
