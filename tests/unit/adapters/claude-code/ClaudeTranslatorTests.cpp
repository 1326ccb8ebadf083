#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeContent.h"
#include "claude-code/ClaudeMessages.h"
#include "claude-code/ClaudeTranslator.h"
#include "support/ClaudeFixtures.h"
#include "support/ClaudeRecordingSink.h"

namespace claude_translator_tests {

using namespace switchboard;
using namespace switchboard::adapters::claude;
using testing::ClaudeRecordingControl;
using testing::ClaudeRecordingSink;
using Lines = std::vector<std::string>;
namespace p = protocol;

struct Harness {
  ClaudeRecordingSink sink;
  ClaudeRecordingControl control;
  ClaudeTranslator translator{sink, control};

  void feed(std::string_view line) { translator.feed_line(line); }
  void feed_json(const nlohmann::json& message) { translator.feed_line(message.dump()); }
};

std::optional<ControlRequestKind> kind_of(const std::string& subtype) {
  if (subtype == "initialize") return ControlRequestKind::Initialize;
  if (subtype == "interrupt") return ControlRequestKind::Interrupt;
  if (subtype == "set_permission_mode") return ControlRequestKind::SetPermissionMode;
  if (subtype == "set_model") return ControlRequestKind::SetModel;
  return std::nullopt;
}

// Replays a recorded exchange (the capture format: {"dir","t","msg"} per line). What the CLI wrote is fed as
// lines, the way the adapter will feed them. What the recording driver wrote is checked against our encoders
// (prompts and permission answers must come out byte for byte the same JSON) and its control requests are
// announced to the translator, as the adapter will do when it writes them.
void replay_exchange(Harness& h, const std::string& fixture) {
  for (const auto& text : testing::claude_fixture_lines(fixture)) {
    const auto record = nlohmann::json::parse(text);
    const auto& message = record.at("msg");
    if (record.at("dir") == "from_cli") {
      h.feed_json(message);
      continue;
    }
    if (record.at("dir") != "to_cli") continue;
    const std::string type = message.at("type");
    if (type == "user") {
      CHECK(user_message(message.at("message").at("content").at(0).at("text").get<std::string>()) == message);
    } else if (type == "control_request") {
      if (auto kind = kind_of(message.at("request").at("subtype"))) {
        h.translator.expect_control_response(message.at("request_id"), *kind);
      }
    } else if (type == "control_response") {
      const auto& response = message.at("response");
      const auto request = h.translator.take_tool_request(response.at("request_id"));
      REQUIRE(request);
      const auto& decision = response.at("response");
      adapters::PermissionAnswer answer;
      answer.allow = decision.at("behavior") == "allow";
      if (decision.contains("message")) answer.message = decision.at("message").get<std::string>();
      CHECK(permission_response(*request, answer) == message);
    }
  }
}

void replay_stdout(Harness& h, const std::string& fixture) {
  for (const auto& line : testing::claude_fixture_lines(fixture)) h.feed(line);
}

void check_clean(const Harness& h) {
  CHECK(h.translator.stats().malformed == 0);
  CHECK(h.translator.stats().unknown == 0);
}

const std::string kInit =
    R"({"type":"system","subtype":"init","cwd":"/srv/repo/project","session_id":"sess-1","tools":["Task","Bash","Read"],)"
    R"("mcp_servers":[],"model":"claude-opus-4-8[1m]","permissionMode":"default","claude_code_version":"2.1.197","uuid":"u0"})";

std::string stream(const std::string& event, const std::string& parent = "null") {
  return R"({"type":"stream_event","event":)" + event + R"(,"session_id":"sess-1","parent_tool_use_id":)" + parent + "}";
}

std::string assistant(const std::string& id, const std::string& content, const std::string& parent = "null") {
  return R"({"type":"assistant","message":{"id":")" + id + R"(","type":"message","role":"assistant","model":"claude-opus-4-8","content":)" +
         content + R"(,"stop_reason":null},"parent_tool_use_id":)" + parent + R"(,"session_id":"sess-1"})";
}

std::string tool_result(const std::string& tool_use_id, const std::string& content, bool is_error,
                        const std::string& parent = "null") {
  return R"({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":")" + tool_use_id +
         R"(","content":)" + content + R"(,"is_error":)" + (is_error ? "true" : "false") +
         R"(}]},"parent_tool_use_id":)" + parent + R"(,"session_id":"sess-1"})";
}

std::string can_use_tool(const std::string& request_id, const std::string& request_body) {
  return R"({"type":"control_request","request_id":")" + request_id + R"(","request":{"subtype":"can_use_tool",)" + request_body + "}}";
}

const std::string kSuccess =
    R"({"type":"result","subtype":"success","is_error":false,"result":"done","stop_reason":"end_turn","session_id":"sess-1",)"
    R"("total_cost_usd":0.5,"usage":{"input_tokens":100,"cache_creation_input_tokens":20,"cache_read_input_tokens":300,"output_tokens":7}})";

// ---- full recorded turns -------------------------------------------------------------------------------------------

TEST_CASE("claude translator: a recorded permission turn and a second turn give the exact normalized sequence", "[claude][translator]") {
  Harness h;
  replay_exchange(h, "recorded-exchange-stdio-permission.ndjson");
  const Lines expected{
      "provider_session 7584fa35-b0cd-4230-bd5d-2e432322c9c7",
      R"(delta msg_mock_0001:0 text "Mock ")",
      R"(delta msg_mock_0001:0 text "model: ")",
      R"(delta msg_mock_0001:0 text "calling ")",
      R"(delta msg_mock_0001:0 text "Bash.")",
      R"(message msg_mock_0001:0 text "Mock model: calling Bash.")",
      R"x(tool_started toolu_mock_0001 Bash {"command":"touch created_by_tool.txt && echo made","description":"Run a shell command (mock)"})x",
      "permission bd49cc89-160f-48df-8d27-7db57a82fad1 Bash",
      R"(tool_completed toolu_mock_0001 ok "made")",
      R"(delta msg_mock_0003:0 text "Mock ")",
      R"(delta msg_mock_0003:0 text "model: ")",
      R"(delta msg_mock_0003:0 text "the ")",
      R"(delta msg_mock_0003:0 text "tool ")",
      R"(delta msg_mock_0003:0 text "returned: ")",
      R"(delta msg_mock_0003:0 text "made")",
      R"(message msg_mock_0003:0 text "Mock model: the tool returned: made")",
      R"(turn_end end_turn "Mock model: the tool returned: made" in=44669 out=72 cached=0)",
      R"(delta msg_mock_0005:0 text "second ")",
      R"(delta msg_mock_0005:0 text "turn ")",
      R"(delta msg_mock_0005:0 text "ok")",
      R"(message msg_mock_0005:0 text "second turn ok")",
      R"(turn_end end_turn "second turn ok" in=22434 out=11 cached=0)",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);

  // The CLI reports the process's running cost; each turn gets its own share.
  REQUIRE(h.sink.turns.size() == 2);
  CHECK(h.sink.turns[0].usage->cost_usd.value() == Approx(0.225145));
  CHECK(h.sink.turns[1].usage->cost_usd.value() == Approx(0.112445));

  // The permission ask, field by field.
  REQUIRE(h.sink.permissions.size() == 1);
  const auto& ask = h.sink.permissions[0];
  CHECK(ask.tool == "Bash");
  CHECK(ask.input == nlohmann::json{{"command", "touch created_by_tool.txt && echo made"}, {"description", "Run a shell command (mock)"}});
  CHECK(ask.description == "Run: touch created_by_tool.txt && echo made — Run a shell command (mock)");
  CHECK(ask.subject == "touch created_by_tool.txt && echo made");
  REQUIRE(ask.suggested_rule);
  CHECK(ask.suggested_rule->tool == "Bash");
  CHECK(ask.suggested_rule->pattern == std::optional<std::string>("touch created_by_tool.txt && echo made"));
  CHECK(ask.reason == "Claude Code's default permission mode asks before using Bash");

  // The initialize answer and both inits reached the adapter.
  REQUIRE(h.control.results.size() == 1);
  CHECK(h.control.results[0].kind == ControlRequestKind::Initialize);
  CHECK(h.control.results[0].ok);
  CHECK(h.control.results[0].response.contains("commands"));
  REQUIRE(h.control.inits.size() == 2);
  CHECK(h.control.inits[0].model == "claude-opus-4-8[1m]");
  CHECK(h.control.inits[0].permission_mode == "default");
  CHECK(h.control.inits[0].version == "2.1.197");
  CHECK(h.control.inits[0].cwd == "<scratch>/capture/scratch/work");
  CHECK(h.control.inits[0].tools.size() == 27);
}

TEST_CASE("claude translator: a recorded denial ends in an error tool result and a normal turn end", "[claude][translator]") {
  Harness h;
  replay_exchange(h, "recorded-exchange-stdio-deny.ndjson");
  const Lines expected{
      "provider_session d43b99c6-5a19-4765-9e83-e2e66836f7c7",
      R"(message msg_mock_0001:0 text "Mock model: calling Bash.")",
      R"x(tool_started toolu_mock_0001 Bash {"command":"touch created_deny.txt","description":"Run a shell command (mock)"})x",
      "permission aaae8a0e-ed53-4d5e-b9d3-0aca6ebee893 Bash",
      R"x(tool_completed toolu_mock_0001 error "Denied by drive_claude.py (test)")x",
      R"x(message msg_mock_0003:0 text "Mock model: the tool returned (tool reported an error): Denied by drive_claude.py (test)")x",
      R"x(turn_end end_turn "Mock model: the tool returned (tool reported an error): Denied by drive_claude.py (test)" in=44657 out=81 cached=0)x",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);
}

TEST_CASE("claude translator: an interrupted stream ends the turn cancelled and the next turn works", "[claude][translator]") {
  Harness h;
  replay_exchange(h, "recorded-exchange-interrupt.ndjson");
  const Lines expected{
      "provider_session e2c6adee-b9f1-4c40-b333-d4c58edaa59d",
      R"(delta msg_mock_0001:0 text "slow ")",
      R"(delta msg_mock_0001:0 text "slow ")",
      R"(delta msg_mock_0001:0 text "slow ")",
      R"(delta msg_mock_0001:0 text "slow ")",
      R"(message msg_mock_0001:0 text "slow slow slow slow ")",
      "turn_end cancelled in=0 out=0 cached=0",
      R"(delta msg_mock_0003:0 text "still ")",
      R"(delta msg_mock_0003:0 text "alive")",
      R"(message msg_mock_0003:0 text "still alive")",
      R"(turn_end end_turn "still alive" in=22336 out=10 cached=0)",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);
  REQUIRE(h.control.results.size() == 1);
  CHECK(h.control.results[0].kind == ControlRequestKind::Interrupt);
  CHECK(h.control.results[0].ok);
}

TEST_CASE("claude translator: interrupting a running tool completes it as an error and cancels the turn", "[claude][translator]") {
  Harness h;
  replay_exchange(h, "recorded-exchange-interrupt-tool.ndjson");
  REQUIRE(h.sink.lines.size() == 7);
  CHECK(h.sink.lines[2] == R"x(tool_started toolu_mock_0001 Bash {"command":"sleep 30; echo done","description":"Run a shell command (mock)"})x");
  CHECK(h.sink.lines[3].starts_with(R"(tool_completed toolu_mock_0001 error "The user doesn't want to proceed with this tool use.)"));
  CHECK(h.sink.lines[4] == "turn_end cancelled in=22278 out=52 cached=0");
  CHECK(h.sink.lines[6].starts_with("turn_end end_turn"));
  check_clean(h);
}

TEST_CASE("claude translator: control acknowledgements and a refused request reach the adapter", "[claude][translator]") {
  Harness h;
  replay_exchange(h, "recorded-exchange-controls.ndjson");
  // The set_model ack carries no payload; set_permission_mode echoes the mode; the bogus request was never
  // announced (no kind for it), so its error answer is counted as unknown and otherwise ignored.
  REQUIRE(h.control.results.size() == 3);
  CHECK(h.control.results[1].kind == ControlRequestKind::SetPermissionMode);
  CHECK(h.control.results[1].response == nlohmann::json{{"mode", "acceptEdits"}});
  CHECK(h.control.results[2].kind == ControlRequestKind::SetModel);
  CHECK(h.control.results[2].ok);
  CHECK(h.control.modes == std::vector<std::string>{"acceptEdits"});
  CHECK(h.translator.permission_mode() == "acceptEdits");
  CHECK(h.translator.stats().unknown == 1);
  CHECK(h.translator.stats().malformed == 0);
  // Replayed prompts and the local command output are user text: dropped.
  const Lines expected{
      "provider_session d3594e09-4875-4b49-93b9-430d68516f17",
      R"(message msg_mock_0001:0 text "ctl ok")",
      R"(turn_end end_turn "ctl ok" in=32121 out=9 cached=0)",
  };
  CHECK(h.sink.lines == expected);
}

TEST_CASE("claude translator: recorded Write and Edit calls carry their file changes as diffs", "[claude][translator]") {
  Harness h;
  replay_stdout(h, "file_edits.ndjson");
  INFO(nlohmann::json(h.sink.lines).dump(1));
  REQUIRE(h.sink.tools.size() == 2);
  const auto& write = h.sink.tools[0];
  CHECK(write.tool == "Write");
  REQUIRE(write.diffs.size() == 1);
  CHECK(write.diffs[0].path == "<scratch>/work/notes.txt");
  CHECK_FALSE(write.diffs[0].old_text);  // a whole file written: what was there is not known
  CHECK(write.diffs[0].new_text == "alpha\nbeta\ngamma\n");
  const auto& edit = h.sink.tools[1];
  CHECK(edit.tool == "Edit");
  REQUIRE(edit.diffs.size() == 1);
  CHECK(edit.diffs[0].path == "<scratch>/work/notes.txt");
  CHECK(edit.diffs[0].old_text == std::optional<std::string>("beta"));
  CHECK(edit.diffs[0].new_text == "BETA");
  REQUIRE(h.sink.turns.size() == 1);
  CHECK(h.sink.turns[0].text == "Edited.");
  check_clean(h);
}

TEST_CASE("claude translator: a MultiEdit gives one diff per edit and other tools none", "[claude][translator]") {
  const auto multi = edit_diffs("MultiEdit", {{"file_path", "/p/a.txt"},
                                              {"edits", nlohmann::json::array({{{"old_string", "a"}, {"new_string", "b"}},
                                                                               {{"old_string", "c"}, {"new_string", ""}}})}});
  REQUIRE(multi.size() == 2);
  CHECK(multi[0].old_text == std::optional<std::string>("a"));
  CHECK(multi[0].new_text == "b");
  CHECK(multi[1].old_text == std::optional<std::string>("c"));
  CHECK(multi[1].new_text.empty());
  CHECK(edit_diffs("Bash", {{"command", "ls"}}).empty());
  CHECK(edit_diffs("Edit", {{"old_string", "a"}, {"new_string", "b"}}).empty());  // no file: nothing to show
}

TEST_CASE("claude translator: recorded retries become statuses and an API error ends the turn with an error", "[claude][translator]") {
  Harness h;
  replay_stdout(h, "recorded-stdout-http529.ndjson");
  const std::string error = "API Error: 529 mock HTTP 529. This is a server-side issue, usually temporary — try again in a moment. "
                            "If it persists, check your inference gateway (127.0.0.1:8765).";
  const Lines expected{
      "provider_session ba94fd2b-b967-4ceb-a0ea-7ff60b3d4dde",
      R"(status retrying "the model request failed (HTTP 529: overloaded); retrying")",
      R"(status retrying "the model request failed (HTTP 529: overloaded); retrying")",
      "error recoverable " + ClaudeRecordingSink::quoted(error),
      "turn_end error error=" + ClaudeRecordingSink::quoted(error) + " in=0 out=0 cached=0",
  };
  CHECK(h.sink.lines == expected);
  REQUIRE(h.sink.statuses.size() == 2);
  CHECK(h.sink.statuses[1].attempt == std::optional<std::int64_t>(2));
  CHECK(h.sink.statuses[1].max_attempts == std::optional<std::int64_t>(2));
  CHECK(h.sink.statuses[1].retry_delay_ms == std::optional<std::int64_t>(1058));
  check_clean(h);
  CHECK(h.translator.stats().dropped == 1);  // the synthetic assistant message
}

TEST_CASE("claude translator: recorded one-shot runs (bare and default-denied) translate cleanly", "[claude][translator]") {
  SECTION("bare") {
    Harness h;
    replay_stdout(h, "recorded-stdout-bare.ndjson");
    CHECK(h.sink.lines.back() == R"(turn_end end_turn "Mock model: the tool returned: bare" in=1928 out=65 cached=0)");
    check_clean(h);
  }
  SECTION("default mode denies without asking") {
    Harness h;
    replay_stdout(h, "recorded-stdout-default-denied.ndjson");
    REQUIRE(h.sink.lines.size() == 6);
    CHECK(h.sink.lines[3].starts_with(R"(tool_completed toolu_mock_0001 error "touch in '<scratch>/capture/scratch/work/created_default.txt' was blocked.)"));
    CHECK(h.sink.permissions.empty());
    check_clean(h);
  }
}

// ---- system lines -----------------------------------------------------------------------------------------------

TEST_CASE("claude translator: system/init reports a provider session once and the init to the adapter every time", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(kInit);
  CHECK(h.sink.lines == Lines{"provider_session sess-1"});
  REQUIRE(h.control.inits.size() == 2);
  CHECK(h.control.inits[0].tools == std::vector<std::string>{"Task", "Bash", "Read"});
  REQUIRE(h.translator.init());
  CHECK(h.translator.init()->session_id == "sess-1");
  check_clean(h);
}

TEST_CASE("claude translator: compaction and retries are statuses that the next request clears", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(R"({"type":"system","subtype":"status","status":"requesting","session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"status","status":"compacting","session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"status","status":null,"session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"compact_boundary","compact_metadata":{"trigger":"auto","pre_tokens":155000},"session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":512.6,"error_status":500,"error":"api_error","session_id":"sess-1"})");
  h.feed(stream(R"({"type":"message_start","message":{"id":"msg_1","content":[]}})"));
  h.feed(stream(R"({"type":"message_stop"})"));
  const Lines expected{
      "provider_session sess-1",
      R"(status compacting "compacting the conversation")",
      "status working",
      R"x(status compacted "compacted the conversation (auto, 155000 tokens before)")x",
      R"(status retrying "the model request failed (HTTP 500: api_error); retrying")",
      "status working",
  };
  CHECK(h.sink.lines == expected);
  CHECK(h.sink.statuses[3].retry_delay_ms == std::optional<std::int64_t>(513));
  CHECK(h.sink.statuses[3].max_attempts == std::optional<std::int64_t>(10));
  check_clean(h);
}

TEST_CASE("claude translator: a status line with a new permission mode tells the adapter once", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(R"({"type":"system","subtype":"status","status":null,"permissionMode":"plan","session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"status","status":null,"permissionMode":"plan","session_id":"sess-1"})");
  CHECK(h.control.modes == std::vector<std::string>{"plan"});
  CHECK(h.sink.lines == Lines{"provider_session sess-1"});
}

TEST_CASE("claude translator: hook and task system lines are dropped, unknown subtypes are counted", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"system","subtype":"hook_response","hook_name":"x","session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"task_notification","session_id":"sess-1"})");
  h.feed(R"({"type":"system","subtype":"something_new","session_id":"sess-1"})");
  CHECK(h.sink.lines.empty());
  CHECK(h.translator.stats().dropped == 2);
  CHECK(h.translator.stats().unknown == 1);
}

// ---- streaming and whole messages ------------------------------------------------------------------------------

TEST_CASE("claude translator: thinking streams as thinking deltas, signatures and tool input deltas are not text", "[claude][translator]") {
  Harness h;
  h.feed(stream(R"({"type":"message_start","message":{"id":"msg_t","content":[]}})"));
  h.feed(stream(R"({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think"}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}})"));
  h.feed(stream(R"({"type":"content_block_stop","index":0})"));
  h.feed(stream(R"({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Answer"}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":""}})"));
  h.feed(stream(R"({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"Read","input":{}}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"file_path\""}})"));
  h.feed(stream(R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}})"));
  h.feed(stream(R"({"type":"message_stop"})"));
  const Lines expected{
      R"(delta msg_t:0 thinking "Let me think")",
      R"(delta msg_t:1 text "Answer")",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);
}

TEST_CASE("claude translator: an assistant line with several blocks numbers them, empty thinking and redacted thinking report nothing", "[claude][translator]") {
  Harness h;
  h.feed(assistant("msg_a", R"([{"type":"thinking","thinking":"","signature":"s"},{"type":"redacted_thinking","data":"x"},)"
                            R"({"type":"thinking","thinking":"considering","signature":"s"},{"type":"text","text":"Hello"}])"));
  h.feed(assistant("msg_a", R"([{"type":"tool_use","id":"toolu_a","name":"Grep","input":{"pattern":"main","path":"src"}}])"));
  const Lines expected{
      R"(message msg_a:2 thinking "considering")",
      R"(message msg_a:3 text "Hello")",
      R"(tool_started toolu_a Grep {"path":"src","pattern":"main"})",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);
}

TEST_CASE("claude translator: an assistant message whose content is a plain string is one text block", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"assistant","message":{"id":"msg_s","role":"assistant","content":"plain"},"session_id":"sess-1"})");
  CHECK(h.sink.lines == Lines{R"(message msg_s:0 text "plain")"});
  check_clean(h);
}

TEST_CASE("claude translator: a sub-agent's stream and messages and tools carry its Task as parent", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(assistant("msg_main", R"([{"type":"tool_use","id":"toolu_task","name":"Task","input":{"description":"Survey","prompt":"Look around","subagent_type":"Explore"}}])"));
  h.feed(R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":"Look around"}]},"parent_tool_use_id":"toolu_task","session_id":"sess-1"})");
  h.feed(stream(R"({"type":"message_start","message":{"id":"msg_sub","content":[]}})", R"("toolu_task")"));
  h.feed(stream(R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})", R"("toolu_task")"));
  h.feed(stream(R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Found"}})", R"("toolu_task")"));
  // The main agent's stream is separate: a sub-agent's message_start does not replace it.
  h.feed(stream(R"({"type":"message_start","message":{"id":"msg_main2","content":[]}})"));
  h.feed(stream(R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" it"}})", R"("toolu_task")"));
  h.feed(assistant("msg_sub", R"([{"type":"text","text":"Found it"}])", R"("toolu_task")"));
  h.feed(assistant("msg_sub", R"([{"type":"tool_use","id":"toolu_ls","name":"Bash","input":{"command":"ls"}}])", R"("toolu_task")"));
  h.feed(tool_result("toolu_ls", R"("a\nb")", false, R"("toolu_task")"));
  h.feed(tool_result("toolu_task", R"([{"type":"text","text":"Survey done"}])", false));
  const Lines expected{
      "provider_session sess-1",
      R"(tool_started toolu_task Task {"description":"Survey","prompt":"Look around","subagent_type":"Explore"})",
      R"(delta msg_sub:0 text "Found" parent=toolu_task)",
      R"(delta msg_sub:0 text " it" parent=toolu_task)",
      R"(message msg_sub:0 text "Found it" parent=toolu_task)",
      R"(tool_started toolu_ls Bash {"command":"ls"} parent=toolu_task)",
      R"(tool_completed toolu_ls ok "a\nb")",
      R"(tool_completed toolu_task ok "Survey done")",
  };
  CHECK(h.sink.lines == expected);
  check_clean(h);
}

TEST_CASE("claude translator: tool output is flattened from content arrays, replays and markers are dropped", "[claude][translator]") {
  Harness h;
  h.feed(tool_result("toolu_r", R"([{"type":"text","text":"line 1"},{"type":"image","source":{"type":"base64","data":"AA=="}},{"type":"text","text":"line 2"}])", true));
  h.feed(tool_result("toolu_s", "null", false));
  h.feed(R"({"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user]"}]},"session_id":"sess-1"})");
  h.feed(R"({"type":"user","message":{"role":"user","content":"hello"},"isReplay":true,"session_id":"sess-1"})");
  h.feed(R"({"type":"user","message":{"role":"user","content":"This session is being continued from a previous conversation…"},"session_id":"sess-1"})");
  const Lines expected{
      R"(tool_completed toolu_r error "line 1\n[image]\nline 2")",
      R"(tool_completed toolu_s ok "")",
  };
  CHECK(h.sink.lines == expected);
  CHECK(h.translator.stats().dropped == 3);
  check_clean(h);
}

TEST_CASE("claude translator: server-side tools start and complete inside the assistant message", "[claude][translator]") {
  Harness h;
  h.feed(assistant("msg_w", R"([{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"boost asio"}},)"
                            R"({"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"web_search_tool_result_error","error_code":"unavailable"}}])"));
  const Lines expected{
      R"(tool_started srvtoolu_1 web_search {"query":"boost asio"})",
      R"(tool_completed srvtoolu_1 error "{\"error_code\":\"unavailable\",\"type\":\"web_search_tool_result_error\"}")",
  };
  CHECK(h.sink.lines == expected);
}

// ---- results -----------------------------------------------------------------------------------------------------

TEST_CASE("claude translator: a successful result ends the turn with its text and usage in our terms", "[claude][translator]") {
  Harness h;
  h.feed(kSuccess);
  CHECK(h.sink.lines == Lines{R"(turn_end end_turn "done" in=120 out=7 cached=300)"});
  CHECK(h.sink.turns[0].usage->cost_usd.value() == Approx(0.5));
}

TEST_CASE("claude translator: stop reasons map, a later result is charged only its own cost", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"result","subtype":"success","is_error":false,"result":"cut","stop_reason":"max_tokens","total_cost_usd":0.25})");
  h.feed(R"({"type":"result","subtype":"success","is_error":false,"result":"no","stop_reason":"refusal","total_cost_usd":0.75})");
  h.feed(R"({"type":"result","subtype":"success","is_error":false,"result":"ok","stop_reason":"end_turn"})");
  const Lines expected{
      R"(turn_end max_tokens "cut" in=- out=- cached=-)",
      R"(turn_end refusal "no" in=- out=- cached=-)",
      R"(turn_end end_turn "ok")",
  };
  CHECK(h.sink.lines == expected);
  CHECK(h.sink.turns[0].usage->cost_usd.value() == Approx(0.25));
  CHECK(h.sink.turns[1].usage->cost_usd.value() == Approx(0.5));
  CHECK_FALSE(h.sink.turns[2].usage);
}

TEST_CASE("claude translator: error results become an error event and an error turn end, credentials errors are fatal", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3})");
  h.feed(R"({"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"completed","errors":["tool crashed","then more"]})");
  h.feed(R"({"type":"result","subtype":"error_max_budget_usd","is_error":true})");
  h.feed(R"({"type":"result","subtype":"success","is_error":true,"api_error_status":null,"result":"Not logged in · Please run /login"})");
  h.feed(R"({"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"API Error: 401"})");
  const Lines expected{
      R"x(error recoverable "the agent stopped after reaching its turn limit (3 turns)")x",
      R"x(turn_end error error="the agent stopped after reaching its turn limit (3 turns)")x",
      R"(error recoverable "tool crashed; then more")",
      R"(turn_end error error="tool crashed; then more")",
      R"(error recoverable "the agent stopped after reaching its cost budget")",
      R"(turn_end error error="the agent stopped after reaching its cost budget")",
      R"(error fatal "Not logged in · Please run /login")",
      R"(turn_end error error="Not logged in · Please run /login")",
      R"(error fatal "API Error: 401")",
      R"(turn_end error error="API Error: 401")",
  };
  CHECK(h.sink.lines == expected);
}

TEST_CASE("claude translator: error_during_execution is a cancel only after an interrupt or when aborted", "[claude][translator]") {
  const std::string aborted = R"({"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"aborted_streaming"})";
  const std::string failed = R"({"type":"result","subtype":"error_during_execution","is_error":true,"terminal_reason":"completed"})";
  Harness h;
  h.feed(kInit);
  h.translator.expect_control_response("intr-1", ControlRequestKind::Interrupt);
  h.feed(R"({"type":"control_response","response":{"subtype":"success","request_id":"intr-1"}})");
  h.feed(failed);  // interrupted while running: cancelled whatever the terminal reason says
  h.feed(failed);  // the interrupt belonged to the previous turn
  h.feed(aborted);
  // An interrupt acknowledged between turns interrupted nothing.
  h.translator.expect_control_response("intr-2", ControlRequestKind::Interrupt);
  h.feed(R"({"type":"control_response","response":{"subtype":"success","request_id":"intr-2"}})");
  h.feed(failed);
  const Lines expected{
      "provider_session sess-1",
      "turn_end cancelled",
      R"x(error recoverable "the agent failed (error_during_execution)")x",
      R"x(turn_end error error="the agent failed (error_during_execution)")x",
      "turn_end cancelled",
      R"x(error recoverable "the agent failed (error_during_execution)")x",
      R"x(turn_end error error="the agent failed (error_during_execution)")x",
  };
  CHECK(h.sink.lines == expected);
}

// ---- the control protocol ----------------------------------------------------------------------------------------

TEST_CASE("claude translator: a can_use_tool request is open until taken once, the result closes it", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  const std::string request = can_use_tool("req-1", R"("tool_name":"Bash","input":{"command":"rm -rf build"},"tool_use_id":"toolu_x")");
  h.feed(request);
  auto taken = h.translator.take_tool_request("req-1");
  REQUIRE(taken);
  CHECK(taken->kind == ToolRequestKind::Permission);
  CHECK(taken->tool == "Bash");
  CHECK(taken->tool_use_id == "toolu_x");
  CHECK(taken->input == nlohmann::json{{"command", "rm -rf build"}});
  CHECK_FALSE(h.translator.take_tool_request("req-1"));
  CHECK_FALSE(h.translator.take_tool_request("never-asked"));

  h.feed(can_use_tool("req-2", R"("tool_name":"Bash","input":{"command":"ls"})"));
  h.feed(kSuccess);
  CHECK_FALSE(h.translator.take_tool_request("req-2"));

  h.feed(can_use_tool("req-3", R"("tool_name":"Bash","input":{"command":"ls"})"));
  h.feed(R"({"type":"control_cancel_request","request_id":"req-3"})");
  CHECK_FALSE(h.translator.take_tool_request("req-3"));
  check_clean(h);
}

TEST_CASE("claude translator: a control_cancel_request withdraws the open request once, other ids withdraw nothing", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(can_use_tool("req-1", R"("tool_name":"Bash","input":{"command":"make"})"));
  h.feed(can_use_tool("q-1", R"("tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which?","header":"H","options":[{"label":"a"}],"multiSelect":false}]})"));
  h.feed(R"({"type":"control_cancel_request","request_id":"req-1"})");
  h.feed(R"({"type":"control_cancel_request","request_id":"req-1"})");       // twice: withdrawn already
  h.feed(R"({"type":"control_cancel_request","request_id":"never-asked"})");
  h.feed(R"({"type":"control_cancel_request","request_id":"q-1"})");         // a question is withdrawn the same way
  CHECK(h.sink.lines == Lines{"provider_session sess-1", "permission req-1 Bash", "question q-1 1", "withdrawn req-1", "withdrawn q-1"});
  CHECK_FALSE(h.translator.take_tool_request("req-1"));
  CHECK_FALSE(h.translator.take_tool_request("q-1"));
  // An answered request is not open any more: its cancel withdraws nothing.
  h.feed(can_use_tool("req-2", R"("tool_name":"Bash","input":{"command":"ls"})"));
  REQUIRE(h.translator.take_tool_request("req-2"));
  h.feed(R"({"type":"control_cancel_request","request_id":"req-2"})");
  CHECK(h.sink.lines.back() == "permission req-2 Bash");
  check_clean(h);
}

TEST_CASE("claude translator: a listener may answer a request from inside the callback that asks it", "[claude][translator]") {
  // As the engine does when a remembered rule or the headless policy decides at once.
  struct AnsweringSink : ClaudeRecordingSink {
    ClaudeTranslator* translator = nullptr;
    std::vector<nlohmann::json> written;
    void on_permission_request(adapters::PermissionAsk ask) override {
      const std::string native_id = ask.native_id;
      ClaudeRecordingSink::on_permission_request(std::move(ask));
      const auto request = translator->take_tool_request(native_id);
      REQUIRE(request);
      written.push_back(permission_response(*request, adapters::PermissionAnswer{false, std::string("headless")}));
    }
  };
  AnsweringSink sink;
  ClaudeRecordingControl control;
  ClaudeTranslator translator(sink, control);
  sink.translator = &translator;
  translator.feed_line(can_use_tool("req-9", R"("tool_name":"Bash","input":{"command":"ls"})"));
  REQUIRE(sink.written.size() == 1);
  CHECK(sink.written[0]["response"]["response"] == nlohmann::json{{"behavior", "deny"}, {"message", "headless"}});
  CHECK_FALSE(translator.take_tool_request("req-9"));
}

TEST_CASE("claude translator: permission asks describe the tool and suggest a rule in our glob terms", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(can_use_tool("r-prefix", R"("tool_name":"Bash","input":{"command":"npm run test -- --watch","description":"Run the tests"},)"
                                  R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm run test:*"}],"behavior":"allow","destination":"localSettings"}])"));
  h.feed(can_use_tool("r-glob", R"("tool_name":"Bash","input":{"command":"ls *.txt"})"));
  h.feed(can_use_tool("r-write", R"("tool_name":"Write","input":{"file_path":"/srv/repo/project/src/a.cpp","content":"x"},)"
                                 R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Write","ruleContent":"/src/**"}],"behavior":"allow","destination":"session"}])"));
  h.feed(can_use_tool("r-abs", R"("tool_name":"Read","input":{"file_path":"/tmp/notes.txt"},)"
                               R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Read","ruleContent":"//tmp/**"}],"behavior":"allow","destination":"session"}])"));
  h.feed(can_use_tool("r-home", R"("tool_name":"Read","input":{"file_path":"/root/.bashrc"},)"
                                R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Read","ruleContent":"~/**"}],"behavior":"allow","destination":"session"}])"));
  h.feed(can_use_tool("r-fetch", R"("tool_name":"WebFetch","input":{"url":"https://example.com/a","prompt":"summarize"},)"
                                 R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"WebFetch","ruleContent":"domain:example.com"}],"behavior":"allow","destination":"session"}])"));
  h.feed(can_use_tool("r-mcp", R"x("tool_name":"mcp__db__query","display_name":"query (db)","input":{"sql":"select 1"},)x"
                               R"("permission_suggestions":[{"type":"addRules","rules":[{"toolName":"mcp__db__query"}],"behavior":"allow","destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}],)"
                               R"("decision_reason":"a hook asked for confirmation")"));
  h.feed(can_use_tool("r-task", R"("tool_name":"Task","input":{"description":"Survey the code","prompt":"…","subagent_type":"Explore"})"));
  REQUIRE(h.sink.permissions.size() == 8);
  const auto& ps = h.sink.permissions;
  const auto rule = [](const adapters::PermissionAsk& ask) {
    REQUIRE(ask.suggested_rule);
    return ask.suggested_rule->tool + " " + ask.suggested_rule->pattern.value_or("<any>");
  };
  CHECK(ps[0].description == "Run: npm run test -- --watch — Run the tests");
  CHECK(rule(ps[0]) == "Bash npm run test*");
  CHECK(ps[1].description == "Run: ls *.txt");
  CHECK(rule(ps[1]) == "Bash ls \\*.txt");  // no suggestion: the exact command, glob characters escaped
  CHECK(ps[2].description == "Write /srv/repo/project/src/a.cpp");
  CHECK(ps[2].subject == "/srv/repo/project/src/a.cpp");
  CHECK(rule(ps[2]) == "Write /srv/repo/project/src/*");  // project-relative, placed under the CLI's cwd
  CHECK(rule(ps[3]) == "Read /tmp/*");
  CHECK(rule(ps[4]) == "Read /root/.bashrc");  // ~ cannot be placed without guessing: the exact path
  CHECK(ps[5].description == "Fetch https://example.com/a");
  CHECK(rule(ps[5]) == "WebFetch *://example.com/*");
  CHECK(ps[6].description == "Use query (db)");
  CHECK(ps[6].subject.empty());
  CHECK(rule(ps[6]) == "mcp__db__query <any>");
  CHECK(ps[6].reason == "a hook asked for confirmation");
  CHECK(ps[7].description == "Start a sub-agent (Explore) — Survey the code");
  check_clean(h);
}

TEST_CASE("claude translator: AskUserQuestion becomes a question whose answer is encoded into the approval", "[claude][translator]") {
  Harness h;
  h.feed(can_use_tool("q-1", R"("tool_name":"AskUserQuestion","input":{"questions":[)"
                             R"({"question":"Which database?","header":"DB","options":[{"label":"Postgres","description":"relational"},{"label":"SQLite","description":"embedded"}],"multiSelect":false},)"
                             R"({"question":"Which features?","header":"Features","options":[{"label":"Auth","description":""},{"label":"Search","description":""}],"multiSelect":true}]},"tool_use_id":"toolu_q")"));
  CHECK(h.sink.lines == Lines{"question q-1 2"});
  REQUIRE(h.sink.questions.size() == 1);
  const auto& questions = h.sink.questions[0].questions;
  CHECK(questions[0].question == "Which database?");
  CHECK(questions[0].header == std::optional<std::string>("DB"));
  CHECK(questions[0].options == std::optional<std::vector<std::string>>({"Postgres", "SQLite"}));
  CHECK(questions[0].multi_select == std::optional<bool>(false));
  CHECK(questions[1].multi_select == std::optional<bool>(true));

  const auto request = h.translator.take_tool_request("q-1");
  REQUIRE(request);
  CHECK(request->kind == ToolRequestKind::Question);
  const auto answer = question_response(*request, adapters::QuestionAnswer{false, {"SQLite", "Auth, Search"}});
  CHECK(answer["response"]["response"]["behavior"] == "allow");
  CHECK(answer["response"]["response"]["updatedInput"]["answers"] ==
        nlohmann::json{{"Which database?", "SQLite"}, {"Which features?", "Auth, Search"}});
  CHECK(answer["response"]["response"]["updatedInput"]["questions"].size() == 2);
}

TEST_CASE("claude translator: an AskUserQuestion without usable questions is asked as a permission", "[claude][translator]") {
  Harness h;
  h.feed(can_use_tool("q-2", R"("tool_name":"AskUserQuestion","input":{"questions":[{"header":"no text"}]})"));
  CHECK(h.sink.lines == Lines{"permission q-2 AskUserQuestion"});
  CHECK(h.translator.take_tool_request("q-2")->kind == ToolRequestKind::Permission);
}

TEST_CASE("claude translator: ExitPlanMode is a plan approval with the plan in the description and no rule", "[claude][translator]") {
  Harness h;
  h.feed(kInit);
  h.feed(can_use_tool("plan-1", R"("tool_name":"ExitPlanMode","input":{"plan":"1. Add tests\n2. Fix the bug"},"tool_use_id":"toolu_p")"));
  REQUIRE(h.sink.permissions.size() == 1);
  const auto& ask = h.sink.permissions[0];
  CHECK(ask.tool == "ExitPlanMode");
  CHECK(ask.description == "Leave plan mode and carry out this plan:\n\n1. Add tests\n2. Fix the bug");
  CHECK_FALSE(ask.suggested_rule);
  CHECK(ask.reason == "the agent has finished planning and needs approval to start making changes");
  const auto request = h.translator.take_tool_request("plan-1");
  REQUIRE(request);
  CHECK(request->kind == ToolRequestKind::PlanApproval);
}

TEST_CASE("claude translator: requests the adapter cannot serve are handed back for an error reply", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"control_request","request_id":"hook-1","request":{"subtype":"hook_callback","callback_id":"c","input":{}}})");
  h.feed(R"({"type":"control_request","request_id":"el-1","request":{"subtype":"elicitation"}})");
  REQUIRE(h.control.unanswerable.size() == 2);
  CHECK(h.control.unanswerable[0] == std::pair<std::string, std::string>("hook-1", "hook_callback"));
  CHECK(h.control.unanswerable[1] == std::pair<std::string, std::string>("el-1", "elicitation"));
  CHECK(h.sink.lines.empty());
}

TEST_CASE("claude translator: answers to our control requests are correlated and go to the adapter alone, refusals too", "[claude][translator]") {
  Harness h;
  h.translator.expect_control_response("m-1", ControlRequestKind::SetModel);
  h.translator.expect_control_response("p-1", ControlRequestKind::SetPermissionMode);
  h.feed(R"({"type":"control_response","response":{"subtype":"error","request_id":"m-1","error":"Unknown model: nope"}})");
  h.feed(R"({"type":"control_response","response":{"subtype":"success","request_id":"p-1","response":{"mode":"plan"}}})");
  h.feed(R"({"type":"control_response","response":{"subtype":"success","request_id":"m-1"}})");  // answered already
  // The adapter completes the set_model that is refused (or reports it, if nobody waits): no event from here.
  CHECK(h.sink.lines.empty());
  REQUIRE(h.control.results.size() == 2);
  CHECK_FALSE(h.control.results[0].ok);
  CHECK(h.control.results[0].error == "Unknown model: nope");
  CHECK(h.control.results[1].kind == ControlRequestKind::SetPermissionMode);
  CHECK(h.control.results[1].response == nlohmann::json{{"mode", "plan"}});
  CHECK(h.translator.stats().unknown == 1);
}

// ---- what must never stop the translator -----------------------------------------------------------------------

TEST_CASE("claude translator: keep_alive and progress lines are dropped, unknown types are counted", "[claude][translator]") {
  Harness h;
  h.feed(R"({"type":"keep_alive"})");
  h.feed(R"({"type":"tool_progress","tool_use_id":"t","tool_name":"Bash","elapsed_time_seconds":3})");
  h.feed(R"({"type":"brand_new_type","x":1})");
  CHECK(h.sink.lines.empty());
  CHECK(h.translator.stats().dropped == 2);
  CHECK(h.translator.stats().unknown == 1);
  CHECK(h.translator.stats().lines == 3);
}

TEST_CASE("claude translator: malformed lines are counted and skipped and the stream goes on", "[claude][translator]") {
  Harness h;
  const std::vector<std::string> bad{
      "not json at all",
      R"({"type":"assistant","message":{"id":"msg_x","content":[{"type":"text","text":"cut off)",
      "[1,2,3]",
      R"("just a string")",
      R"({"no_type":true})",
      R"({"type":42})",
      std::string(2000, '[') + std::string(2000, ']'),
      R"({"type":"assistant","message":"not an object"})",
      R"({"type":"user"})",
      R"({"type":"stream_event","event":7})",
      R"({"type":"stream_event","event":{"type":"content_block_delta","index":"zero","delta":{"type":"text_delta","text":"x"}}})",
      R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"orphan"}},"parent_tool_use_id":"toolu_nobody"})",
      R"({"type":"control_request","request":{"subtype":"can_use_tool"}})",
      R"({"type":"control_request","request_id":"r","request":{"subtype":"can_use_tool","input":{}}})",
      R"({"type":"control_response","response":{"subtype":"success"}})",
      R"({"type":"control_cancel_request"})",
      R"({"type":"system","subtype":"init"})",
  };
  for (const auto& line : bad) h.feed(line);
  CHECK(h.translator.stats().malformed == bad.size());
  CHECK(h.sink.lines.empty());

  // Fields of unexpected types inside otherwise good lines are read as absent, never thrown at.
  h.feed(R"({"type":"assistant","message":{"id":5,"content":[{"type":"text","text":7},{"type":"tool_use","id":"toolu_w","name":"Bash","input":"ls"},42]},"parent_tool_use_id":17})");
  h.feed(R"({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_w","content":{"unexpected":true},"is_error":"yes"}]}})");
  h.feed(R"({"type":"result","subtype":"success","is_error":"no","result":["x"],"usage":"many","total_cost_usd":"free"})");
  h.feed(R"({"type":"system","subtype":"api_retry","attempt":"one","retry_delay_ms":1e300})");
  const Lines expected{
      R"(tool_started toolu_w Bash {})",
      R"(tool_completed toolu_w ok "{\"unexpected\":true}")",
      "turn_end end_turn",
      R"(status retrying "the model request failed; retrying")",
  };
  CHECK(h.sink.lines == expected);

  // And a good turn after all of it still translates.
  h.feed(kInit);
  h.feed(assistant("msg_ok", R"([{"type":"text","text":"fine"}])"));
  CHECK(h.sink.lines.back() == R"(message msg_ok:0 text "fine")");
}

TEST_CASE("claude translator: blank lines and CRLF endings are tolerated", "[claude][translator]") {
  Harness h;
  h.feed(std::string(""));
  h.feed(std::string("   "));
  h.feed(kInit + "\r");
  CHECK(h.sink.lines == Lines{"provider_session sess-1"});
  CHECK(h.translator.stats().lines == 1);
  CHECK(h.translator.stats().malformed == 0);
}

void collect_pointers(const nlohmann::json& value, const nlohmann::json::json_pointer& at, std::vector<nlohmann::json::json_pointer>& out) {
  out.push_back(at);
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) collect_pointers(child, at / key, out);
  } else if (value.is_array() && !value.empty()) {
    collect_pointers(value[0], at / 0, out);  // items share a shape; the first stands for all (keeps this fast)
  }
}

// One recorded line of each shape (type, subtype, event, block): the lines to mutate.
std::vector<nlohmann::json> recorded_cli_shapes() {
  std::vector<nlohmann::json> messages;
  std::set<std::string> seen;
  const auto keep = [&](nlohmann::json message) {
    const auto at = [&](const char* pointer) {
      const auto ptr = nlohmann::json::json_pointer(pointer);
      return message.contains(ptr) ? message[ptr].dump() : std::string();
    };
    const std::string shape = at("/type") + at("/subtype") + at("/event/type") + at("/event/delta/type") +
                              at("/message/content/0/type") + at("/request/subtype") + at("/response/subtype");
    if (seen.insert(shape).second) messages.push_back(std::move(message));
  };
  for (const char* exchange : {"recorded-exchange-stdio-permission.ndjson", "recorded-exchange-stdio-deny.ndjson",
                               "recorded-exchange-interrupt.ndjson", "recorded-exchange-interrupt-tool.ndjson",
                               "recorded-exchange-controls.ndjson"}) {
    for (const auto& line : testing::claude_fixture_lines(exchange)) {
      const auto record = nlohmann::json::parse(line);
      if (record.at("dir") == "from_cli") keep(record.at("msg"));
    }
  }
  for (const char* stdout_lines : {"recorded-stdout-http529.ndjson", "recorded-stdout-default-denied.ndjson", "recorded-stdout-bare.ndjson"}) {
    for (const auto& line : testing::claude_fixture_lines(stdout_lines)) keep(nlohmann::json::parse(line));
  }
  return messages;
}

TEST_CASE("claude translator: every recorded line with any one value swapped for another type never throws", "[claude][translator]") {
  Harness h;
  h.translator.expect_control_response("intr-x", ControlRequestKind::Interrupt);
  const std::vector<nlohmann::json> replacements{nullptr, 7, 0.5, "x", nlohmann::json::array(), nlohmann::json::object(), true};
  std::size_t fed = 0;
  for (const auto& message : recorded_cli_shapes()) {
    // The initialize answer is thousands of values the translator only passes on; mutating each costs seconds.
    if (message.value("type", "") == "control_response" && message.dump().size() > 4096) continue;
    std::vector<nlohmann::json::json_pointer> pointers;
    collect_pointers(message, nlohmann::json::json_pointer(), pointers);
    for (const auto& pointer : pointers) {
      if (pointer.empty()) continue;
      for (const auto& replacement : replacements) {
        auto mutated = message;
        mutated[pointer] = replacement;
        REQUIRE_NOTHROW(h.translator.feed_line(mutated.dump()));
        ++fed;
      }
    }
    // And the line cut short at a few places.
    const std::string text = message.dump();
    for (std::size_t cut = 1; cut < text.size(); cut += 1 + text.size() / 16) REQUIRE_NOTHROW(h.translator.feed_line(text.substr(0, cut)));
  }
  CHECK(fed > 1000);
  CHECK(h.translator.stats().lines > fed);
}

}  // namespace claude_translator_tests
