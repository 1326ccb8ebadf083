#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/FileDiffs.h"
#include "opencode/OpenCodeRuntime.h"
#include "opencode/OpenCodeSession.h"
#include "opencode/OpenCodeTranslator.h"
#include "support/CodexRecording.h"
#include "support/SourceTree.h"

// The OpenCode translator fed a recorded `opencode serve` stream (tests/fixtures/opencode/): one tool-using turn
// of OpenCode 1.18.33 against the project's Chat Completions mock, with a permission asked and allowed. The
// recording sink is the generic one the Codex tests also use (its lines name no agent).

namespace opencode_translator_tests {

using nlohmann::json;
using switchboard::adapters::opencode::OpenCodeTranslator;
using switchboard::testing::CodexRecordingSink;

// The payloads of the recorded /global/event stream ("data: {directory, project, payload}" lines).
std::vector<json> recorded(const std::string& name) {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/opencode/") + name);
  REQUIRE(in.good());
  std::vector<json> payloads;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("data: ", 0) != 0) continue;
    payloads.push_back(json::parse(line.substr(6)).at("payload"));
  }
  return payloads;
}

json event(const std::string& type, json properties) { return json{{"type", type}, {"properties", std::move(properties)}}; }

TEST_CASE("opencode translator: a recorded tool turn with a permission becomes our events, in order", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.turn_started();
  for (const auto& payload : recorded("permission-turn.global.sse")) translator.feed(payload);

  std::vector<std::string> without_deltas;
  std::string streamed;
  for (const auto& line : sink.lines) {
    if (line.rfind("delta ", 0) == 0) {
      streamed += json::parse(line.substr(line.find(" \"") + 1)).get<std::string>();
    } else {
      without_deltas.push_back(line);
    }
  }
  INFO(json(sink.lines).dump(1));
  REQUIRE(without_deltas.size() == 7);
  CHECK(without_deltas[0] == R"(tool_started call_mock_0001 bash {"command":"echo hi","description":"say hi"})");
  CHECK(without_deltas[1].rfind("message prt_", 0) == 0);
  CHECK(without_deltas[1].find(R"(text "Running it.")") != std::string::npos);
  CHECK(without_deltas[2] == R"(permission per_2325222dd00134heutlRCnLrn2 bash "echo hi")");
  CHECK(without_deltas[3] == R"(tool_output call_mock_0001 "hi\n")");
  CHECK(without_deltas[4] == R"(tool_completed call_mock_0001 ok "hi\n")");
  CHECK(without_deltas[5].find(R"(text "Done: hi")") != std::string::npos);
  CHECK(without_deltas[6].rfind(R"(turn_end end_turn "Done: hi")", 0) == 0);
  CHECK(streamed == "Running it.Done: hi");  // the user's own prompt part is not echoed
  REQUIRE(sink.permissions.size() == 1);
  const auto& ask = sink.permissions[0].second;
  CHECK(ask.input == json{{"command", "echo hi"}});
  REQUIRE(ask.suggested_rule);
  CHECK(ask.suggested_rule->tool == "bash");
  CHECK(ask.suggested_rule->pattern == "echo *");
  REQUIRE(sink.turns.size() == 1);
  REQUIRE(sink.turns[0].usage);
  CHECK(sink.turns[0].usage->output_tokens.value_or(0) > 0);
  CHECK(translator.stats().malformed == 0);
  CHECK(translator.stats().unknown == 0);
  CHECK_FALSE(translator.turn_running());
}

TEST_CASE("opencode translator: a command's permission request shows the command as it runs, not OpenCode's parse of it", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.turn_started();
  // What OpenCode 1.18 sends for a compound command: its patterns are the command's parts.
  translator.feed(event("permission.asked", {{"id", "per_1"}, {"sessionID", "ses_1"}, {"permission", "bash"},
                                             {"patterns", {"touch a", "echo b"}}, {"metadata", {{"command", "touch a && echo b"}}},
                                             {"always", {"touch *", "echo *"}}}));
  // Another permission has no command: its patterns say what it is about.
  translator.feed(event("permission.asked", {{"id", "per_2"}, {"sessionID", "ses_1"}, {"permission", "external_directory"},
                                             {"patterns", {"/elsewhere/*"}}, {"metadata", json::object()}}));
  REQUIRE(sink.permissions.size() == 2);
  const auto& command = sink.permissions[0].second;
  CHECK(command.description == "Run: touch a && echo b");
  CHECK(command.subject == "touch a && echo b");
  CHECK(command.input == json{{"command", "touch a && echo b"}});
  CHECK(sink.permissions[1].second.description == "OpenCode asks to use external_directory: /elsewhere/*");
}

TEST_CASE("opencode translator: an abort ends the turn cancelled once, though OpenCode reports an error and two idles", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.turn_started();
  translator.feed(event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", "busy"}}}}));
  translator.abort_sent();
  translator.feed(event("session.error", {{"sessionID", "ses_1"}, {"error", {{"name", "MessageAbortedError"}, {"data", {{"message", "Aborted"}}}}}}));
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));
  CHECK(sink.lines == std::vector<std::string>{"turn_end cancelled"});
}

TEST_CASE("opencode translator: a provider error ends the turn as an error and says why, and idles without a turn are nothing", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));  // a session loaded or created: no turn of ours
  translator.turn_started();
  translator.feed(event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", "busy"}}}}));
  translator.feed(event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", "retry"}, {"attempt", 1}, {"message", "Cannot connect"}}}}));
  translator.feed(event("session.error", {{"sessionID", "ses_1"}, {"error", {{"name", "APIError"}, {"data", {{"message", "Cannot connect to API"}}}}}}));
  translator.feed(event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", "idle"}}}}));
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));
  CHECK(sink.lines == std::vector<std::string>{R"(status retrying "Cannot connect")", R"(error recoverable "OpenCode: Cannot connect to API")",
                                               R"(turn_end error error="Cannot connect to API")"});
  REQUIRE(sink.statuses.size() == 1);
  CHECK(sink.statuses[0].attempt == 1);
}

TEST_CASE("opencode translator: a late idle of the turn before does not end the next one, which ends at its own", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  const auto status = [](const char* type) { return event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", type}}}}); };
  translator.turn_started();
  translator.feed(status("busy"));
  translator.feed(status("idle"));  // the first turn ends here
  translator.turn_started();        // the engine sends the queued prompt at once
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));  // the first turn's second idle
  CHECK(translator.turn_running());
  translator.feed(status("busy"));
  translator.feed(event("session.idle", {{"sessionID", "ses_1"}}));
  CHECK_FALSE(translator.turn_running());
  CHECK(sink.lines == std::vector<std::string>{"turn_end end_turn", "turn_end end_turn"});
}

TEST_CASE("opencode translator: a running tool's output is reported as it grows, and a rejected call is an error result", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.turn_started();
  const auto tool = [](json state) {
    return event("message.part.updated", {{"part", {{"id", "prt_1"}, {"messageID", "msg_1"}, {"type", "tool"}, {"tool", "bash"},
                                                    {"callID", "call_1"}, {"state", std::move(state)}}}});
  };
  translator.feed(tool({{"status", "pending"}, {"input", json::object()}}));
  translator.feed(tool({{"status", "running"}, {"input", {{"command", "seq 2"}}}, {"metadata", {{"output", "1\n"}}}}));
  translator.feed(tool({{"status", "running"}, {"input", {{"command", "seq 2"}}}, {"metadata", {{"output", "1\n2\n"}}}}));
  translator.feed(tool({{"status", "error"}, {"input", {{"command", "seq 2"}}}, {"error", "The user rejected permission"}}));
  translator.feed(tool({{"status", "error"}, {"input", {{"command", "seq 2"}}}, {"error", "The user rejected permission"}}));
  CHECK(sink.lines == std::vector<std::string>{R"(tool_started call_1 bash {"command":"seq 2"})", R"(tool_output call_1 "1\n")",
                                               R"(tool_output call_1 "2\n")", R"(tool_completed call_1 error "The user rejected permission")"});
}

TEST_CASE("opencode translator: events it does not know are counted, malformed ones too, and nothing throws", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.feed(json{{"type", "session.next.thing"}, {"properties", json::object()}});
  translator.feed(json{{"type", 7}});
  translator.feed(json::array());
  translator.feed(event("message.part.updated", {{"part", "not an object"}}));
  translator.feed(event("message.part.updated", {{"part", {{"type", "tool"}}}}));
  CHECK(sink.lines.empty());
  CHECK(translator.stats().unknown == 1);
  CHECK(translator.stats().malformed == 4);
}

TEST_CASE("opencode translator: a question becomes our question with its header, labels and multiple choice, and bad ones are counted", "[opencode]") {
  struct QuestionSink : CodexRecordingSink {
    std::vector<switchboard::adapters::QuestionAsk> asks;
    void on_question(switchboard::adapters::QuestionAsk ask) override {
      CodexRecordingSink::on_question(ask);
      asks.push_back(std::move(ask));
    }
  } sink;
  OpenCodeTranslator translator(sink);
  const json red{{"label", "Red"}, {"description", "warm"}};
  const json blue{{"label", "Blue"}, {"description", "cool"}};
  translator.feed(event("question.asked",
                        {{"id", "que_1"},
                         {"sessionID", "ses_1"},
                         {"questions", json::array({json{{"question", "Which colour?"}, {"header", "Colour"}, {"options", {red, blue}}},
                                                    json{{"question", "Which sizes?"}, {"header", "Sizes"}, {"options", {red}}, {"multiple", true}}})},
                         {"tool", {{"messageID", "msg_1"}, {"callID", "call_1"}}}}));
  REQUIRE(sink.asks.size() == 1);
  const auto& ask = sink.asks[0];
  CHECK(ask.native_id == "que_1");
  REQUIRE(ask.questions.size() == 2);
  CHECK(ask.questions[0].question == "Which colour?");
  CHECK(ask.questions[0].header == std::optional<std::string>("Colour"));
  CHECK(ask.questions[0].options == std::optional<std::vector<std::string>>({"Red", "Blue"}));
  CHECK_FALSE(ask.questions[0].multi_select.value_or(false));
  CHECK(ask.questions[1].multi_select == std::optional<bool>(true));
  // Its answer coming back (ours or OpenCode's own UI's) is nothing to report.
  translator.feed(event("question.replied", {{"sessionID", "ses_1"}, {"requestID", "que_1"}, {"answers", json::array()}}));
  translator.feed(event("question.rejected", {{"sessionID", "ses_1"}, {"requestID", "que_1"}}));
  CHECK(sink.lines.size() == 1);
  // No id, or no question: counted, never asked.
  translator.feed(event("question.asked", {{"sessionID", "ses_1"}, {"questions", json::array({json{{"question", "Q?"}}})}}));
  translator.feed(event("question.asked", {{"id", "que_2"}, {"questions", json::array({json{{"header", "no question"}}})}}));
  CHECK(sink.asks.size() == 1);
  CHECK(translator.stats().malformed == 2);
}

// The payloads of a recorded stream, with the session id of its first session.created (the session we drove).
std::string first_session(const std::vector<json>& payloads) {
  for (const auto& payload : payloads) {
    if (payload.value("type", "") == "session.created") return payload["properties"]["sessionID"];
  }
  FAIL("no session.created");
  return {};
}

std::vector<std::string> without_deltas(const std::vector<std::string>& lines) {
  std::vector<std::string> kept;
  for (const auto& line : lines) {
    if (line.rfind("delta ", 0) != 0) kept.push_back(line);
  }
  return kept;
}

TEST_CASE("opencode translator: recorded edit and write calls carry their file changes as diffs", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  const auto payloads = recorded("edit-turn.global.sse");
  translator.set_session_id(first_session(payloads));
  translator.turn_started();
  for (const auto& payload : payloads) translator.feed(payload);
  INFO(json(sink.lines).dump(1));
  REQUIRE(sink.tools.size() == 3);
  CHECK(sink.tools[0].tool == "read");
  CHECK(sink.tools[0].diffs.empty());
  CHECK(sink.tools[1].tool == "edit");
  REQUIRE(sink.tools[1].diffs.size() == 1);
  CHECK(sink.tools[1].diffs[0].path == "<scratch>/work/notes.txt");
  CHECK(sink.tools[1].diffs[0].old_text == std::optional<std::string>("beta"));
  CHECK(sink.tools[1].diffs[0].new_text == "BETA");
  CHECK(sink.tools[2].tool == "write");
  REQUIRE(sink.tools[2].diffs.size() == 1);
  CHECK(sink.tools[2].diffs[0].path == "<scratch>/work/fresh.txt");
  CHECK_FALSE(sink.tools[2].diffs[0].old_text);
  CHECK(sink.tools[2].diffs[0].new_text == "fresh line\n");
  CHECK(sink.permissions.size() == 2);  // both edits asked
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].text == "Edited.");
  CHECK(translator.stats().malformed == 0);
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("opencode translator: a recorded task's sub-agent activity nests inside the task call and does not end the turn", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  const auto payloads = recorded("task-turn.global.sse");
  translator.set_session_id(first_session(payloads));
  translator.turn_started();
  for (const auto& payload : payloads) translator.feed(payload);
  const auto lines = without_deltas(sink.lines);
  INFO(json(sink.lines).dump(1));
  const auto at = [&](const std::string& start) {
    const auto found = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) { return line.rfind(start, 0) == 0; });
    return found == lines.end() ? std::string::npos : static_cast<std::size_t>(found - lines.begin());
  };
  const auto task = at(R"(tool_started call_mock_0001 task {"description":"say sub hello")");
  const auto child_tool = at(R"(tool_started call_mock_0002 bash {"command":"echo sub","description":"child command"} parent=call_mock_0001)");
  const auto child_permission = at(R"(permission per_2347716cb0013Een7HmXZBJGJW bash "echo sub")");
  const auto child_done = at(R"(tool_completed call_mock_0002 ok "sub\n")");
  const auto child_text = at("message ");
  const auto task_done = at("tool_completed call_mock_0001 ok ");
  const auto end = at(R"(turn_end end_turn "Parent done.")");
  REQUIRE(task != std::string::npos);
  REQUIRE(child_tool != std::string::npos);
  REQUIRE(child_permission != std::string::npos);
  REQUIRE(child_done != std::string::npos);
  REQUIRE(task_done != std::string::npos);
  REQUIRE(end != std::string::npos);
  CHECK(child_text != std::string::npos);
  CHECK(task < child_tool);
  CHECK(child_tool < child_permission);
  CHECK(child_permission < child_done);
  CHECK(child_done < task_done);
  CHECK(task_done < end);
  CHECK(end == lines.size() - 1);  // the sub-agent's idle ended nothing: one turn end, the parent's
  // The sub-agent's messages (and their deltas) are nested; the parent's are not; the answer is the parent's.
  CHECK(std::find(lines.begin(), lines.end(), R"(message prt_23477182f001JuEokkuoVWzjvk text "sub done" parent=call_mock_0001)") != lines.end());
  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) { return l.find(R"(text "Delegating.")") != std::string::npos && l.find("parent=") == std::string::npos; }));
  for (const auto& line : sink.lines) {
    if (line.rfind("delta ", 0) == 0 && line.find("sub done") != std::string::npos) CHECK(line.find(" parent=call_mock_0001") != std::string::npos);
  }
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].text == "Parent done.");
  CHECK(translator.stats().malformed == 0);
  CHECK(translator.stats().unknown == 0);
  CHECK_FALSE(translator.turn_running());
}

TEST_CASE("opencode translator: a child's events before its task call names it wait for it, and its idle is not ours", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_parent");
  translator.turn_started();
  const auto status = [](const char* session, const char* type) { return event("session.status", {{"sessionID", session}, {"status", {{"type", type}}}}); };
  const auto text = [](const char* session, const char* id, const char* words) {
    return event("message.part.updated", {{"part", {{"id", id}, {"sessionID", session}, {"messageID", "msg_x"}, {"type", "text"}, {"text", words},
                                                    {"time", {{"start", 1}, {"end", 2}}}}}});
  };
  const auto task = [](json state) {
    return event("message.part.updated", {{"part", {{"id", "prt_task"}, {"sessionID", "ses_parent"}, {"messageID", "msg_p"}, {"type", "tool"},
                                                    {"tool", "task"}, {"callID", "call_task"}, {"state", std::move(state)}}}});
  };
  translator.feed(status("ses_parent", "busy"));
  translator.feed(text("ses_child", "prt_early", "early words"));  // before the task part names the child
  CHECK(sink.lines.empty());
  translator.feed(task({{"status", "running"}, {"input", {{"description", "d"}, {"prompt", "p"}}}, {"metadata", {{"sessionId", "ses_child"}}}}));
  translator.feed(status("ses_child", "busy"));
  translator.feed(status("ses_child", "idle"));
  translator.feed(event("session.idle", {{"sessionID", "ses_child"}}));
  translator.feed(event("session.error", {{"sessionID", "ses_child"}, {"error", {{"name", "APIError"}, {"data", {{"message", "child failed"}}}}}}));
  CHECK(translator.turn_running());
  translator.feed(task({{"status", "completed"}, {"input", json::object()}, {"output", "result"}}));
  translator.feed(text("ses_parent", "prt_answer", "answer"));
  translator.feed(status("ses_parent", "idle"));
  CHECK(sink.lines == std::vector<std::string>{R"(tool_started call_task task {"description":"d","prompt":"p"})",
                                               R"(message prt_early text "early words" parent=call_task)",
                                               R"(tool_completed call_task ok "result")", R"(message prt_answer text "answer")",
                                               R"(turn_end end_turn "answer")"});
}

TEST_CASE("opencode models: GET /config/providers gives provider/model ids, the configured one the default", "[opencode]") {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/opencode/config-providers.json"));
  REQUIRE(in.good());
  const auto recorded = json::parse(in);
  const auto models = switchboard::adapters::opencode::offered_models(recorded, std::string("mock/mock-model"));
  REQUIRE(models.size() == 2);
  CHECK(models[0].id == "mock/mock-model");
  CHECK(models[0].name == "Mock");
  CHECK(models[0].description == "Mock");  // the provider's name
  CHECK(models[0].is_default == true);
  CHECK(models[1].id == "mock/other-model");
  CHECK(models[1].name == "Other Mock");
  CHECK_FALSE(models[1].is_default.has_value());
  // Without a configured model nothing is marked: the answer's per-provider `default` is not OpenCode's choice.
  for (const auto& model : switchboard::adapters::opencode::offered_models(recorded, std::nullopt)) CHECK_FALSE(model.is_default);

  // Deprecated models and entries that are not models are left out; a model without its own id takes its key.
  const auto odd = json::parse(R"({"providers": [
      {"id": "a", "models": {"old": {"id": "old", "status": "deprecated"}, "bare": {}, "x": 7}},
      {"name": "no id", "models": {"m": {"id": "m"}}},
      {"id": "b", "models": []},
      "not a provider"]})");
  const auto kept = switchboard::adapters::opencode::offered_models(odd, std::nullopt);
  REQUIRE(kept.size() == 1);
  CHECK(kept[0].id == "a/bare");
  CHECK(switchboard::adapters::opencode::offered_models(json::array(), std::nullopt).empty());
  CHECK(switchboard::adapters::opencode::offered_models(json{{"providers", 1}}, std::nullopt).empty());
}

TEST_CASE("opencode question reply: one label per question, a multiple choice's labels split at \", \"", "[opencode]") {
  using switchboard::adapters::opencode::question_reply;
  CHECK(question_reply({"Blue"}, {}) == json{{"answers", json::array({json::array({"Blue"})})}});
  CHECK(question_reply({"Red, Green", "Blue, and more"}, {true, false}) ==
        json{{"answers", json::array({json::array({"Red", "Green"}), json::array({"Blue, and more"})})}});
  CHECK(question_reply({"", "Red"}, {true, true}) == json{{"answers", json::array({json::array(), json::array({"Red"})})}});
  CHECK(question_reply({}, {true}) == json{{"answers", json::array()}});
}

TEST_CASE("opencode server permissions: bash and edit ask whatever the user's OPENCODE_PERMISSION says, the rest is kept", "[opencode]") {
  using switchboard::adapters::opencode::server_permissions;
  CHECK(json::parse(server_permissions(std::nullopt)) == json{{"bash", "ask"}, {"edit", "ask"}});
  CHECK(json::parse(server_permissions(R"({"bash":"allow","webfetch":"deny"})")) == json{{"bash", "ask"}, {"edit", "ask"}, {"webfetch", "deny"}});
  CHECK(json::parse(server_permissions("not json")) == json{{"bash", "ask"}, {"edit", "ask"}});
}

TEST_CASE("opencode translator: an apply_patch call carries each file's change as diffs", "[opencode]") {
  CodexRecordingSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_1");
  translator.turn_started();
  const std::string patch = "*** Begin Patch\n"
                            "*** Add File: /w/new.txt\n"
                            "+first\n"
                            "+second\n"
                            "*** Update File: /w/old.py\n"
                            "*** Move to: /w/renamed.py\n"
                            "@@ def f():\n"
                            " a\n"
                            "-b\n"
                            "+B\n"
                            "@@ def g():\n"
                            "-c\n"
                            "+C\n"
                            "*** End of File\n"
                            "*** Delete File: /w/gone.txt\n"
                            "*** End Patch\n";
  translator.feed(event("session.status", {{"sessionID", "ses_1"}, {"status", {{"type", "busy"}}}}));
  translator.feed(event("message.part.updated",
                        {{"part", {{"id", "prt_patch"}, {"sessionID", "ses_1"}, {"messageID", "msg_1"}, {"type", "tool"}, {"tool", "apply_patch"},
                                   {"callID", "call_patch"}, {"state", {{"status", "running"}, {"input", {{"patchText", patch}}}}}}}}));
  INFO(json(sink.lines).dump(1));
  REQUIRE(sink.tools.size() == 1);
  const auto& diffs = sink.tools[0].diffs;
  REQUIRE(diffs.size() == 3);
  CHECK(diffs[0].path == "/w/new.txt");
  CHECK_FALSE(diffs[0].old_text);
  CHECK(diffs[0].new_text == "first\nsecond\n");
  CHECK(diffs[1].path == "/w/old.py");
  CHECK(diffs[1].old_text == std::optional<std::string>("a\nb\n"));
  CHECK(diffs[1].new_text == "a\nB\n");
  CHECK(diffs[2].path == "/w/old.py");
  CHECK(diffs[2].old_text == std::optional<std::string>("c\n"));
  CHECK(diffs[2].new_text == "C\n");
  // No patch text, or a patch of deletes only: no diffs.
  CHECK(switchboard::adapters::patch_diffs("*** Begin Patch\n*** Delete File: /w/x\n*** End Patch\n").empty());
  CHECK(switchboard::adapters::patch_diffs("").empty());
  // A header without a path names no file; a first chunk without "@@" keeps lines that look like file headers.
  CHECK(switchboard::adapters::patch_diffs("*** Begin Patch\n*** Add File:  \n+x\n*** End Patch\n").empty());
  const auto sql = switchboard::adapters::patch_diffs("*** Begin Patch\n*** Update File: /w/q.sql\n--- old comment\n+++ new comment\n select 1;\n*** End Patch\n");
  REQUIRE(sql.size() == 1);
  CHECK(sql[0].old_text == std::optional<std::string>("-- old comment\nselect 1;\n"));
  CHECK(sql[0].new_text == "++ new comment\nselect 1;\n");
  // CRLF line ends are read like LF ones.
  const auto crlf = switchboard::adapters::patch_diffs("*** Begin Patch\r\n*** Add File: /w/c\r\n+x\r\n*** End Patch\r\n");
  REQUIRE(crlf.size() == 1);
  CHECK(crlf[0].path == "/w/c");
  CHECK(crlf[0].new_text == "x\n");
}

TEST_CASE("file diffs: a unified diff's hunks, headers skipped, a bare hunk without @@ read whole", "[opencode]") {
  using switchboard::adapters::hunks;
  // OpenCode's own patch text for an edit (metadata.diff), as recorded.
  const auto recorded = hunks("/w/notes.txt", "Index: /w/notes.txt\n===================================================================\n"
                                              "--- /w/notes.txt\n+++ /w/notes.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n");
  REQUIRE(recorded.size() == 1);
  CHECK(recorded[0].old_text == std::optional<std::string>("alpha\nbeta\ngamma\n"));
  CHECK(recorded[0].new_text == "alpha\nBETA\ngamma\n");
  const auto bare = hunks("/w/a", "-x\n+y\n\\ No newline at end of file\n");
  REQUIRE(bare.size() == 1);
  CHECK(bare[0].old_text == std::optional<std::string>("x\n"));
  CHECK(bare[0].new_text == "y\n");
  CHECK(hunks("/w/a", "").empty());
  // apply_patch lets a file's first chunk leave its "@@" out, and later ones have it: both are hunks.
  const auto patch = hunks("/w/p.py", " a\n-b\n+B\n@@ def f():\n c\n-d\n+D\n");
  REQUIRE(patch.size() == 2);
  CHECK(patch[0].old_text == std::optional<std::string>("a\nb\n"));
  CHECK(patch[0].new_text == "a\nB\n");
  CHECK(patch[1].old_text == std::optional<std::string>("c\nd\n"));
  CHECK(patch[1].new_text == "c\nD\n");
  // A git diff's header lines are no hunk.
  const auto git = hunks("/w/g", "diff --git a/g b/g\nindex 1..2 100644\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-x\n+y\n");
  REQUIRE(git.size() == 1);
  CHECK(git[0].old_text == std::optional<std::string>("x\n"));
}

}  // namespace opencode_translator_tests

namespace opencode_controls_tests {

using nlohmann::json;
using switchboard::adapters::opencode::OpenCodeTranslator;
namespace adapters = switchboard::adapters;
namespace protocol = switchboard::protocol;

// The recording sink, keeping what the controls report too.
struct ControlsSink : switchboard::testing::CodexRecordingSink {
  std::vector<adapters::PlanUpdate> plans;
  std::vector<adapters::UsageUpdate> usages;
  void on_plan(adapters::PlanUpdate update) override { plans.push_back(std::move(update)); }
  void on_usage(adapters::UsageUpdate update) override { usages.push_back(std::move(update)); }
};

json event(const std::string& type, json properties) { return json{{"type", type}, {"properties", std::move(properties)}}; }
json busy(const std::string& session) { return event("session.status", {{"sessionID", session}, {"status", {{"type", "busy"}}}}); }
json idle(const std::string& session) { return event("session.idle", {{"sessionID", session}}); }
json user_message(const std::string& session, const std::string& id) {
  return event("message.updated", {{"sessionID", session}, {"info", {{"id", id}, {"sessionID", session}, {"role", "user"}}}});
}
json step_finish(const std::string& session, json tokens, double cost) {
  return event("message.part.updated", {{"part", {{"id", "prt_step"}, {"sessionID", session}, {"messageID", "msg_a"}, {"type", "step-finish"},
                                                  {"tokens", std::move(tokens)}, {"cost", cost}}}});
}

TEST_CASE("opencode translator: todo.updated is the whole plan each time, statuses and priorities mapped, a sub-agent's list not", "[opencode][controls]") {
  ControlsSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_a");
  translator.turn_started();
  translator.feed(busy("ses_a"));
  translator.feed(event("todo.updated", {{"sessionID", "ses_a"},
                                         {"todos", json::array({json{{"content", "one"}, {"status", "pending"}, {"priority", "high"}},
                                                                json{{"content", "two"}, {"status", "in_progress"}, {"priority", "low"}},
                                                                json{{"content", "three"}, {"status", "cancelled"}, {"priority", "medium"}},
                                                                json{{"content", "odd"}, {"status", "blocked"}, {"priority", "low"}},
                                                                json{{"content", ""}, {"status", "pending"}}})}}));
  translator.feed(event("todo.updated", {{"sessionID", "ses_a"}, {"todos", json::array()}}));
  translator.feed(event("todo.updated", {{"sessionID", "ses_a"}}));  // malformed: no list
  REQUIRE(sink.plans.size() == 2);
  const auto& entries = sink.plans[0].entries;
  REQUIRE(entries.size() == 3);  // an unknown status and an empty content are left out
  CHECK(entries[0].content == "one");
  CHECK(entries[0].status == protocol::PlanEntryStatus::Pending);
  CHECK(entries[0].priority == protocol::PlanEntryPriority::High);
  CHECK(entries[1].status == protocol::PlanEntryStatus::InProgress);
  CHECK(entries[2].status == protocol::PlanEntryStatus::Completed);
  CHECK(entries[2].priority == protocol::PlanEntryPriority::Medium);
  CHECK(sink.plans[1].entries.empty());  // cleared
  CHECK(translator.stats().malformed == 1);
}

TEST_CASE("opencode translator: each step of ours reports the context it used against the window, with running totals from the seed", "[opencode][controls]") {
  ControlsSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_a");
  translator.set_context_window(32000);
  translator.seed_totals(1000, 10, 5, 0.5);
  translator.turn_started();
  translator.feed(busy("ses_a"));
  translator.feed(step_finish("ses_a", {{"total", 8217}, {"input", 8178}, {"output", 39}, {"reasoning", 0}, {"cache", {{"read", 0}, {"write", 0}}}}, 0.25));
  // Without `total`: its parts summed.
  translator.feed(step_finish("ses_a", {{"input", 9000}, {"output", 20}, {"reasoning", 5}, {"cache", {{"read", 100}, {"write", 7}}}}, 0.25));
  REQUIRE(sink.usages.size() == 2);
  CHECK(sink.usages[0].usage.used_tokens == 8217);
  CHECK(sink.usages[0].usage.window_tokens == 32000);
  CHECK(sink.usages[0].usage.cost_usd == Approx(0.75));
  CHECK(sink.usages[0].usage.input_tokens == 9178);
  CHECK(sink.usages[1].usage.used_tokens == 9000 + 20 + 5 + 100 + 7);
  CHECK(sink.usages[1].usage.input_tokens == 18178);
  CHECK(sink.usages[1].usage.output_tokens == 69);
  CHECK(sink.usages[1].usage.cache_read_tokens == 105);
  CHECK(sink.usages[1].usage.cost_usd == Approx(1.0));
  translator.feed(idle("ses_a"));
  REQUIRE(sink.turns.size() == 1);
  REQUIRE(sink.turns[0].usage);
  CHECK(sink.turns[0].usage->input_tokens == 17178);  // the turn's own sum
}

TEST_CASE("opencode translator: the turn's reference is its own prompt's message, not a sub-agent's nor one before the prompt", "[opencode][controls]") {
  ControlsSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_a");
  translator.feed(user_message("ses_a", "msg_before"));  // no turn running: not this turn's
  translator.turn_started();
  translator.feed(busy("ses_a"));
  translator.feed(user_message("ses_a", "msg_prompt"));
  translator.feed(user_message("ses_a", "msg_later"));
  translator.feed(idle("ses_a"));
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].native_turn_ref == "msg_prompt");
  translator.turn_started();
  translator.feed(busy("ses_a"));
  translator.feed(user_message("ses_a", "msg_prompt"));  // the previous prompt updated late: not this turn's
  translator.feed(idle("ses_a"));
  REQUIRE(sink.turns.size() == 2);
  CHECK_FALSE(sink.turns[1].native_turn_ref);  // none announced: none named
  translator.turn_started();
  translator.feed(busy("ses_a"));
  translator.feed(user_message("ses_a", "msg_prompt"));
  translator.feed(user_message("ses_a", "msg_third"));
  translator.feed(idle("ses_a"));
  REQUIRE(sink.turns.size() == 3);
  CHECK(sink.turns[2].native_turn_ref == "msg_third");
}

TEST_CASE("opencode translator: while OpenCode summarizes for us, its summary, busy and idle are nobody's turn", "[opencode][controls]") {
  ControlsSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_a");
  translator.set_compacting(true);
  translator.feed(busy("ses_a"));
  translator.feed(event("message.part.updated", {{"part", {{"id", "prt_s"}, {"sessionID", "ses_a"}, {"messageID", "msg_s"}, {"type", "text"},
                                                           {"text", "SUMMARY"}, {"time", {{"start", 1}, {"end", 2}}}}}}));
  translator.feed(idle("ses_a"));
  translator.set_compacting(false);
  CHECK(sink.lines.empty());
  CHECK(sink.turns.empty());
}

TEST_CASE("opencode translator: a summary whose request was answered before its end came is still nobody's turn", "[opencode][controls]") {
  ControlsSink sink;
  OpenCodeTranslator translator(sink);
  translator.set_session_id("ses_a");
  translator.set_compacting(true);
  translator.feed(busy("ses_a"));
  // The answer to POST /summarize overtook the stream: the summary's message and idle come after it.
  translator.set_compacting(false);
  translator.feed(event("message.updated", {{"info", {{"id", "msg_s"}, {"sessionID", "ses_a"}, {"role", "assistant"}, {"summary", true}}}}));
  translator.feed(event("message.part.updated", {{"part", {{"id", "prt_s"}, {"sessionID", "ses_a"}, {"messageID", "msg_s"}, {"type", "text"},
                                                           {"text", "SUMMARY"}, {"time", {{"start", 1}, {"end", 2}}}}}}));
  translator.turn_started();  // the next prompt went out meanwhile; OpenCode runs it after the summary
  translator.feed(idle("ses_a"));
  CHECK(sink.turns.empty());
  // The turn's own events then make it, and its answer is its own.
  translator.feed(busy("ses_a"));
  translator.feed(user_message("ses_a", "msg_next"));
  translator.feed(event("message.part.updated", {{"part", {{"id", "prt_a"}, {"sessionID", "ses_a"}, {"messageID", "msg_a"}, {"type", "text"},
                                                           {"text", "After compact."}, {"time", {{"start", 3}, {"end", 4}}}}}}));
  translator.feed(idle("ses_a"));
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].text == "After compact.");
}

TEST_CASE("opencode commands: GET /command gives names, descriptions and readable argument hints", "[opencode][controls]") {
  const json answer = json::array({json{{"name", "init"}, {"description", "guided AGENTS.md setup"}, {"source", "command"}, {"template", "x"},
                                        {"hints", json::array({"$ARGUMENTS"})}},
                                   json{{"name", "deploy"}, {"template", "$1 to $2"}, {"hints", json::array({"$1", "$2"})}},
                                   json{{"name", "skill-x"}, {"description", ""}, {"source", "skill"}, {"template", "y"}, {"hints", json::array()}},
                                   json{{"description", "no name"}}, json("junk")});
  const auto commands = switchboard::adapters::opencode::offered_commands(answer);
  REQUIRE(commands.size() == 3);
  CHECK(commands[0].name == "init");
  CHECK(commands[0].description == "guided AGENTS.md setup");
  CHECK(commands[0].argument_hint == "<arguments>");
  CHECK(commands[1].argument_hint == "<arg1> <arg2>");
  CHECK_FALSE(commands[1].description);
  CHECK_FALSE(commands[2].description);
  CHECK_FALSE(commands[2].argument_hint);
}

TEST_CASE("opencode effort: `default` first, then the variants from least to most effort, unknown names last", "[opencode][controls]") {
  using switchboard::adapters::opencode::effort_values;
  CHECK(effort_values({"high", "low", "medium"}) == std::vector<std::string>{"default", "low", "medium", "high"});
  CHECK(effort_values({"max", "turbo", "minimal", "default"}) == std::vector<std::string>{"default", "minimal", "max", "turbo"});
  CHECK(effort_values({}) == std::vector<std::string>{"default"});
}

TEST_CASE("opencode fork and rewind points: a turn is its user message, a fork stops before the next prompt, a rewind deletes from it", "[opencode][controls]") {
  using switchboard::adapters::opencode::fork_boundary;
  using switchboard::adapters::opencode::messages_from;
  auto message = [](const std::string& id, const std::string& role) { return json{{"info", {{"id", id}, {"role", role}}}, {"parts", json::array()}}; };
  const json messages = json::array({message("msg_1", "user"), message("msg_2", "assistant"), message("msg_3", "user"),
                                     message("msg_4", "assistant"), message("msg_5", "assistant"), message("msg_6", "user"),
                                     message("msg_7", "assistant")});
  CHECK(fork_boundary(messages, "msg_1") == "msg_3");
  CHECK(fork_boundary(messages, "msg_3") == "msg_6");
  CHECK(fork_boundary(messages, "msg_6") == "");  // the last turn: keep everything
  CHECK_FALSE(fork_boundary(messages, "msg_2"));   // an answer is no turn
  CHECK_FALSE(fork_boundary(messages, "msg_9"));
  CHECK(messages_from(messages, "msg_3") == std::vector<std::string>{"msg_7", "msg_6", "msg_5", "msg_4", "msg_3"});
  CHECK(messages_from(messages, "msg_6") == std::vector<std::string>{"msg_7", "msg_6"});
  CHECK_FALSE(messages_from(messages, "msg_4"));
  CHECK_FALSE(messages_from(json::object(), "msg_1"));
}

TEST_CASE("opencode MCP: a stdio server runs without our server's password, an http one without OAuth discovery, statuses mapped", "[opencode][controls]") {
  using switchboard::adapters::opencode::mcp_config;
  using switchboard::adapters::opencode::mcp_state;
  protocol::McpServer stdio;
  stdio.name = "files";
  stdio.transport = protocol::McpTransport::Stdio;
  stdio.command = "node";
  stdio.args = std::vector<std::string>{"server.js", "--root", "."};
  stdio.env = json{{"TOKEN", "t"}};
  CHECK(mcp_config(stdio) == json{{"type", "local"},
                                  {"command", json::array({"env", "-u", "OPENCODE_SERVER_PASSWORD", "--", "node", "server.js", "--root", "."})},
                                  {"environment", {{"TOKEN", "t"}}}});
  protocol::McpServer remote;
  remote.name = "web";
  remote.transport = protocol::McpTransport::Http;
  remote.url = "http://127.0.0.1:9/mcp";
  remote.headers = json{{"Authorization", "Bearer x"}};
  CHECK(mcp_config(remote) == json{{"type", "remote"}, {"url", "http://127.0.0.1:9/mcp"}, {"oauth", false}, {"headers", {{"Authorization", "Bearer x"}}}});

  CHECK(mcp_state(stdio, json{{"status", "connected"}}).status == protocol::McpServerStatusKind::Connected);
  const auto failed = mcp_state(stdio, json{{"status", "failed"}, {"error", "ENOENT: no such file"}});
  CHECK(failed.status == protocol::McpServerStatusKind::Failed);
  CHECK(failed.error == "ENOENT: no such file");
  CHECK(mcp_state(remote, json{{"status", "needs_auth"}}).status == protocol::McpServerStatusKind::Failed);
  CHECK(mcp_state(remote, json()).error.value_or("").find("no status") != std::string::npos);
  CHECK(mcp_state(remote, json{{"status", "connected"}}).transport == protocol::McpTransport::Http);
}

}  // namespace opencode_controls_tests

namespace opencode_history_plan_tests {

using nlohmann::json;
using switchboard::adapters::opencode::OpenCodeTranslator;

struct PlanSink : switchboard::testing::CodexRecordingSink {
  std::vector<switchboard::adapters::PlanUpdate> plans;
  void on_plan(switchboard::adapters::PlanUpdate update) override { plans.push_back(std::move(update)); }
};

json todowrite_part(const std::string& session, const std::string& call, const std::string& status, const std::string& content) {
  return json{{"type", "message.part.updated"},
              {"properties", {{"part", {{"id", "prt_" + call}, {"sessionID", session}, {"messageID", "msg_a"}, {"type", "tool"}, {"tool", "todowrite"},
                                        {"callID", call},
                                        {"state", {{"status", status},
                                                   {"input", {{"todos", json::array({json{{"content", content}, {"status", "pending"}, {"priority", "high"}}})}}},
                                                   {"output", "ok"}}}}}}}};
}

TEST_CASE("opencode history: a replayed todowrite call is the plan then, live, only todo.updated is", "[opencode][controls]") {
  PlanSink replayed;
  OpenCodeTranslator history(replayed);
  history.set_session_id("ses_a");
  history.set_plans_from_todowrite(true);
  history.turn_started();
  history.feed(todowrite_part("ses_a", "call_1", "completed", "first"));
  history.feed(todowrite_part("ses_a", "call_2", "error", "refused"));     // it set nothing
  history.feed(todowrite_part("ses_child", "call_3", "completed", "sub"));  // no task names it: waits, never placed
  REQUIRE(replayed.plans.size() == 1);
  REQUIRE(replayed.plans[0].entries.size() == 1);
  CHECK(replayed.plans[0].entries[0].content == "first");

  PlanSink live;
  OpenCodeTranslator translator(live);
  translator.set_session_id("ses_a");
  translator.turn_started();
  translator.feed(todowrite_part("ses_a", "call_1", "completed", "first"));
  CHECK(live.plans.empty());
}

}  // namespace opencode_history_plan_tests
