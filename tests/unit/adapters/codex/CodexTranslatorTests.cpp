#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codex/CodexMessages.h"
#include "codex/CodexPermissions.h"
#include "codex/CodexTranslator.h"
#include "support/CodexRecording.h"

namespace codex_translator_tests {

using namespace switchboard;
using namespace switchboard::adapters::codex;
using adapters::JsonRpcEndpoint;
using testing::CodexRecordingSink;
using Lines = std::vector<std::string>;

// The translator on an endpoint wired the way the adapter wires it; what is written is kept, and the answers to
// our requests are handed on as the adapter hands them (kept too, by method).
struct Harness {
  CodexRecordingSink sink;
  CodexTranslator translator{sink};
  std::vector<nlohmann::json> written;
  std::vector<std::pair<std::string, JsonRpcEndpoint::Outcome>> answers;
  JsonRpcEndpoint endpoint{[this](std::string line) {
                             written.push_back(nlohmann::json::parse(line));
                             return true;
                           },
                           translator.handlers(), kRpcOptions};

  void feed(const nlohmann::json& message) { endpoint.feed_line(message.dump()); }
  void send(const std::string& method, nlohmann::json params) {
    if (method == "turn/start") translator.turn_requested();
    endpoint.request(method, std::move(params), [this, method](JsonRpcEndpoint::Outcome outcome) {
      if (method == "turn/start") translator.on_turn_start_answer(outcome);
      const auto* result = std::get_if<nlohmann::json>(&outcome);
      if (result != nullptr && method.starts_with("thread/")) translator.on_thread_opened(*result);
      answers.emplace_back(method, std::move(outcome));
    });
  }
  std::uint64_t malformed() const { return translator.stats().malformed + endpoint.stats().malformed; }
  std::uint64_t unknown() const { return translator.stats().unknown + endpoint.stats().unknown_responses; }
  bool answered_ok(std::size_t index) const { return std::holds_alternative<nlohmann::json>(answers.at(index).second); }
  const JsonRpcEndpoint::Error* answer_error(const std::string& method) const {
    for (const auto& [sent, outcome] : answers) {
      if (sent == method) return std::get_if<JsonRpcEndpoint::Error>(&outcome);
    }
    FAIL("no answer to " << method);
    return nullptr;
  }
};

ApprovalDecision decision_of(const std::string& decision) {
  if (decision == "accept") return ApprovalDecision::Accept;
  if (decision == "acceptForSession") return ApprovalDecision::AcceptForSession;
  if (decision == "cancel") return ApprovalDecision::Cancel;
  return ApprovalDecision::Decline;
}

// Replays a recorded scenario: what Codex printed is fed line by line, the way the adapter feeds it. What the
// recording driver wrote is sent again through the endpoint in the order the driver could have sent it (one
// request in flight; a turn/start only once the previous turn has ended), and each approval is answered with the
// decision the driver wrote. At the end, what our endpoint wrote is the recorded stdin, line for line: our ids,
// Codex's ids in the replies, no "jsonrpc" member, and our encoding of each decision.
void replay(Harness& h, const std::string& name) {
  std::vector<nlohmann::json> sent;
  for (const auto& line : testing::codex_fixture_lines(name + ".stdin.ndjson")) sent.push_back(nlohmann::json::parse(line));
  std::size_t next = 0;
  std::size_t answered = 0;
  bool awaiting = false;
  const auto announce = [&] {
    while (next < sent.size()) {
      const auto& message = sent[next];
      if (message.contains("result")) return;  // an approval answer: written when its request arrives
      if (!message.contains("id")) {
        h.endpoint.notify(message.at("method"), message.at("params"));
        ++next;
        continue;
      }
      const std::string method = message.at("method");
      if (awaiting || (method == "turn/start" && h.translator.turn_active())) return;
      const auto& params = message.at("params");
      if (method == "turn/start") CHECK(turn_input(params.at("input").at(0).at("text").get<std::string>(), {}) == params.at("input"));
      awaiting = true;
      h.send(method, params);
      ++next;
    }
  };
  announce();
  for (const auto& line : testing::codex_fixture_lines(name + ".ndjson")) {
    const auto before = h.answers.size();
    h.endpoint.feed_line(line);
    if (h.answers.size() > before) awaiting = false;
    while (answered < h.sink.permissions.size()) {
      REQUIRE(next < sent.size());
      const auto& answer = sent[next++];
      const auto reply = h.translator.take_approval(h.sink.permissions[answered++].first);
      REQUIRE(reply);
      (*reply)(approval_result(decision_of(answer.at("result").at("decision"))));
    }
    announce();
  }
  CHECK(next == sent.size());
  CHECK(h.written == sent);
}

void check_clean(const Harness& h) {
  CHECK(h.malformed() == 0);
  CHECK(h.unknown() == 0);
}

Lines without_prefix(const Lines& lines, const std::string& prefix) {
  Lines out;
  for (const auto& line : lines) {
    if (line.rfind(prefix, 0) != 0) out.push_back(line);
  }
  return out;
}

std::size_t count_prefix(const Lines& lines, const std::string& prefix) {
  std::size_t n = 0;
  for (const auto& line : lines) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

const std::string kThread = "01a22a74-5d6a-77c2-8dfe-b90b72088a7a";

TEST_CASE("Codex text turn: reasoning and answer deltas then messages and usage", "[codex]") {
  Harness h;
  replay(h, "text");
  check_clean(h);
  CHECK(h.sink.lines == Lines{
                            "provider_session " + kThread,
                            "delta rs_mock_0001 thinking \"The user wants a greeting.\"",
                            "message rs_mock_0001 thinking \"The user wants a greeting.\"",
                            "delta msg_mock_0001 text \"Hello f\"",
                            "delta msg_mock_0001 text \"rom the\"",
                            "delta msg_mock_0001 text \" mock.\"",
                            "message msg_mock_0001 text \"Hello from the mock.\"",
                            "turn_end end_turn \"Hello from the mock.\" in=100 out=7 cached=20",
                        });
  REQUIRE(h.answers.size() == 3);
  CHECK(h.answers[0].first == "initialize");
  CHECK(h.answers[1].first == "thread/start");
  CHECK(h.answers[2].first == "turn/start");
  CHECK(h.answered_ok(2));
  CHECK(h.translator.thread_id() == kThread);
  CHECK_FALSE(h.translator.turn_active());
  CHECK(h.translator.turn_id().empty());
}

TEST_CASE("Codex command item: shell tool with streamed output and the whole output at the end", "[codex]") {
  Harness h;
  replay(h, "command");
  check_clean(h);
  const auto lines = without_prefix(h.sink.lines, "delta ");
  REQUIRE(lines.size() == 7);
  CHECK(lines[1] == "message msg_mock_0001 text \"Running it.\"");
  CHECK(lines[2] == "tool_started call_mock_0001 shell {\"command\":\"echo hi; sleep 0.5; echo bye\",\"cwd\":\"<scratch>/work\"}");
  CHECK(lines[3] == "tool_output call_mock_0001 \"bye\\n\"");
  CHECK(lines[4] == "tool_completed call_mock_0001 ok \"hi\\nbye\\n\"");
  CHECK(lines[5] == "message msg_mock_0002 text \"It printed hi.\"");
  CHECK(lines[6].rfind("turn_end end_turn \"It printed hi.\" in=", 0) == 0);
}

TEST_CASE("Codex approvals: accept runs the command and decline completes it as declined", "[codex]") {
  Harness h;
  replay(h, "approval");
  check_clean(h);
  REQUIRE(h.sink.permissions.size() == 2);
  const auto& [first_id, first] = h.sink.permissions[0];
  CHECK(first_id == "0");
  CHECK(first.tool == "shell");
  CHECK(first.subject == "touch accepted.txt && echo created");
  CHECK(first.description == "Run: touch accepted.txt && echo created");
  CHECK(first.input == nlohmann::json{{"command", "touch accepted.txt && echo created"}, {"cwd", "<scratch>/work"}});
  REQUIRE(first.suggested_rule);
  CHECK(first.suggested_rule->tool == "shell");
  CHECK(first.suggested_rule->pattern == "touch accepted.txt && echo created");
  CHECK(first.reason == "Codex's approval policy asks before running this command");
  CHECK(h.sink.permissions[1].first == "1");

  const auto lines = without_prefix(h.sink.lines, "delta ");
  CHECK(std::find(lines.begin(), lines.end(), "tool_completed call_mock_0001 ok \"created\\n\"") != lines.end());
  CHECK(std::find(lines.begin(), lines.end(), "tool_completed call_mock_0002 error \"declined by the user\"") != lines.end());
  CHECK(count_prefix(lines, "turn_end end_turn") == 2);
  // Each request was answered once; nothing is left to answer.
  CHECK_FALSE(h.translator.take_approval("0"));
  CHECK_FALSE(h.translator.take_approval("1"));
}

TEST_CASE("Codex acceptForSession: the second identical command is not asked about", "[codex]") {
  Harness h;
  replay(h, "accept_for_session");
  check_clean(h);
  CHECK(h.sink.permissions.size() == 1);
  CHECK(count_prefix(h.sink.lines, "tool_completed") == 2);
  CHECK(count_prefix(h.sink.lines, "turn_end end_turn") == 2);
}

TEST_CASE("Codex file change approval names the file from the started item", "[codex]") {
  Harness h;
  replay(h, "patch");
  check_clean(h);
  REQUIRE(h.sink.permissions.size() == 1);
  const auto& ask = h.sink.permissions[0].second;
  CHECK(ask.tool == "apply_patch");
  CHECK(ask.subject == "<scratch>/work/hello.txt");
  CHECK(ask.description == "Edit <scratch>/work/hello.txt");
  CHECK(ask.input["changes"][0]["kind"] == "add");
  CHECK(ask.input["changes"][0]["diff"] == "hello from mock\n");
  REQUIRE(ask.suggested_rule);
  CHECK(ask.suggested_rule->pattern == "<scratch>/work/hello.txt");
  const auto lines = without_prefix(h.sink.lines, "delta ");
  CHECK(std::find(lines.begin(), lines.end(), "tool_completed call_mock_0001 ok \"add <scratch>/work/hello.txt\"") != lines.end());
  // The added file as a diff: its whole content, nothing before it.
  REQUIRE(h.sink.tools.size() == 1);
  REQUIRE(h.sink.tools[0].diffs.size() == 1);
  CHECK(h.sink.tools[0].diffs[0].path == "<scratch>/work/hello.txt");
  CHECK_FALSE(h.sink.tools[0].diffs[0].old_text);
  CHECK(h.sink.tools[0].diffs[0].new_text == "hello from mock\n");
}

TEST_CASE("Codex file changes: an update's unified diff gives one diff per hunk, a deletion its old text", "[codex]") {
  const auto input = file_change_input(nlohmann::json::array(
      {{{"path", "/p/a.txt"}, {"kind", {{"type", "update"}}},
        {"diff", "--- a/p/a.txt\n+++ b/p/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n@@ -9,2 +9,2 @@\n-nine\n+NINE\n ten\n"}},
       {{"path", "/p/gone.txt"}, {"kind", {{"type", "delete"}}}, {"diff", "bye\n"}}}));
  const auto diffs = file_change_diffs(input);
  REQUIRE(diffs.size() == 3);
  CHECK(diffs[0].path == "/p/a.txt");
  CHECK(diffs[0].old_text == std::optional<std::string>("one\ntwo\nthree\n"));
  CHECK(diffs[0].new_text == "one\nTWO\nthree\n");
  CHECK(diffs[1].old_text == std::optional<std::string>("nine\nten\n"));
  CHECK(diffs[1].new_text == "NINE\nten\n");
  CHECK(diffs[2].path == "/p/gone.txt");
  CHECK(diffs[2].old_text == std::optional<std::string>("bye\n"));
  CHECK(diffs[2].new_text.empty());
}

TEST_CASE("Codex interrupt ends the turn cancelled with the command left open and the next turn works", "[codex]") {
  Harness h;
  replay(h, "interrupt");
  check_clean(h);
  const auto lines = without_prefix(h.sink.lines, "delta ");
  REQUIRE(lines.size() == 5);
  CHECK(lines[1].rfind("tool_started call_mock_0001 shell {\"command\":\"sleep 30; echo never\"", 0) == 0);
  CHECK(lines[2].rfind("turn_end cancelled", 0) == 0);
  CHECK(lines[3] == "message msg_mock_0001 text \"Back after the interrupt.\"");
  CHECK(lines[4].rfind("turn_end end_turn \"Back after the interrupt.\"", 0) == 0);
  CHECK(h.answer_error("turn/interrupt") == nullptr);
}

TEST_CASE("Codex resume reports the same thread and a normal turn", "[codex]") {
  Harness first;
  replay(first, "resume.1");
  check_clean(first);
  Harness second;
  replay(second, "resume.2");
  check_clean(second);
  REQUIRE_FALSE(first.sink.lines.empty());
  CHECK(second.sink.lines.front() == first.sink.lines.front());  // provider_session <same thread>
  CHECK(second.sink.lines.back().rfind("turn_end end_turn \"It was PINEAPPLE.\"", 0) == 0);
}

TEST_CASE("Codex refuses to resume a thread open elsewhere and a fork reports its own thread", "[codex]") {
  Harness h;
  replay(h, "fork.2");
  check_clean(h);
  const auto* refused = h.answer_error("thread/resume");
  REQUIRE(refused != nullptr);
  CHECK(refused->message.find("already has an active writer") != std::string::npos);
  REQUIRE_FALSE(h.sink.lines.empty());
  CHECK(h.sink.lines.front() == "provider_session 01a22b17-33af-7351-bc4c-72f7dd656369");  // the fork, not the refused thread
  CHECK(h.translator.thread_id() == "01a22b17-33af-7351-bc4c-72f7dd656369");
  CHECK(h.sink.lines.back().rfind("turn_end end_turn \"It was teal.\"", 0) == 0);
}

TEST_CASE("Codex model error fails the turn once with the provider's message", "[codex]") {
  Harness h;
  replay(h, "api_error");
  check_clean(h);
  const auto lines = without_prefix(h.sink.lines, "delta ");
  REQUIRE(lines.size() == 5);
  CHECK(lines[1] == "error recoverable \"mock: bad request\"");
  CHECK(lines[2] == "turn_end error error=\"mock: bad request\"");
  CHECK(lines[4].rfind("turn_end end_turn \"Recovered.\"", 0) == 0);
}

TEST_CASE("Codex translator survives malformed and unknown lines", "[codex]") {
  // Lines that are no message at all are the endpoint's to count, the rest the translator's; the two add up.
  Harness h;
  h.endpoint.feed_line("not json");
  h.endpoint.feed_line("[1,2]");
  h.endpoint.feed_line("{}");
  h.endpoint.feed_line("{\"method\":\"item/agentMessage/delta\",\"params\":{\"itemId\":5}}");
  h.endpoint.feed_line("{\"method\":\"item/started\",\"params\":{\"item\":\"x\"}}");
  h.endpoint.feed_line("{\"method\":\"item/completed\",\"params\":{\"item\":{\"type\":\"agentMessage\"}}}");
  h.endpoint.feed_line("{\"method\":\"turn/completed\",\"params\":{}}");
  h.endpoint.feed_line("{\"id\":7,\"result\":{}}");
  h.endpoint.feed_line("{\"id\":\"x\",\"result\":{}}");
  h.endpoint.feed_line("{\"method\":\"no/such/thing\",\"params\":{}}");
  h.endpoint.feed_line(std::string(2000, '[') + std::string(2000, ']'));
  h.endpoint.feed_line("   ");
  CHECK(h.sink.lines.empty());
  CHECK(h.written.empty());
  CHECK(h.malformed() == 8);
  CHECK(h.translator.stats().malformed == 4);
  CHECK(h.unknown() == 3);
}

TEST_CASE("Codex translator never throws on recorded lines with values of another type or cut short", "[codex]") {
  // One translator for everything (its malformed-line warnings quiet down after the first few); a turn is open
  // so that turn-scoped handlers run too.
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  const std::vector<nlohmann::json> replacements{nullptr, 7, -1.5, "s", true, nlohmann::json::array(), nlohmann::json::object()};
  std::size_t fed = 0;
  for (const auto* name : {"text.ndjson", "command.ndjson", "approval.ndjson", "patch.ndjson", "interrupt.ndjson", "api_error.ndjson"}) {
    for (const auto& line : testing::codex_fixture_lines(name)) {
      // Thread responses are hundreds of values the translator only passes on; mutating each costs seconds.
      if (line.size() > 4096) continue;
      const auto original = nlohmann::json::parse(line);
      const auto flat = original.flatten();  // kept alive: items() refers to it
      for (const auto& entry : flat.items()) {
        const nlohmann::json::json_pointer pointer(entry.key());
        for (const auto& replacement : replacements) {
          auto changed = original;
          changed[pointer] = replacement;
          REQUIRE_NOTHROW(h.feed(changed));
          ++fed;
        }
      }
      for (std::size_t cut = 1; cut < line.size(); cut += 1 + line.size() / 8) REQUIRE_NOTHROW(h.endpoint.feed_line(line.substr(0, cut)));
    }
  }
  CHECK(fed > 1000);
}

TEST_CASE("Codex requests the adapter cannot answer are refused as method not found", "[codex]") {
  Harness h;
  h.feed({{"method", "item/tool/requestUserInput"}, {"id", 4}, {"params", {{"threadId", "t"}}}});
  h.feed({{"method", "item/commandExecution/requestApproval"}, {"id", 5}});
  CHECK(h.written == std::vector<nlohmann::json>{
                         nlohmann::json::parse(R"({"id":4,"error":{"code":-32601,"message":"switchboard does not serve 'item/tool/requestUserInput' requests"}})"),
                         nlohmann::json::parse(R"({"id":5,"error":{"code":-32601,"message":"switchboard does not serve 'item/commandExecution/requestApproval' requests"}})"),
                     });
  CHECK(h.sink.lines.empty());
  CHECK(h.translator.stats().unknown == 1);
  CHECK(h.translator.stats().malformed == 1);
}

TEST_CASE("Codex refused turn start ends the turn with an error", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  CHECK(h.translator.turn_active());
  h.feed({{"id", 1}, {"error", {{"code", -32600}, {"message", "thread not found"}}}});
  CHECK(h.sink.lines == Lines{"error recoverable \"Codex refused the turn: thread not found\"",
                              "turn_end error error=\"Codex refused the turn: thread not found\""});
  CHECK_FALSE(h.translator.turn_active());
  REQUIRE(h.answers.size() == 1);
  CHECK(h.answer_error("turn/start")->message == "thread not found");
}

TEST_CASE("Codex turn start left unanswered by a process that went away ends no turn itself", "[codex]") {
  // The adapter reports the agent unavailable, which ends the turn: a second end here would be one too many.
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  h.endpoint.close("codex exited (1)");
  CHECK(h.sink.lines.empty());
  CHECK(h.answer_error("turn/start")->code == JsonRpcEndpoint::kAgentGone);
}

TEST_CASE("Codex approval resolved by Codex is forgotten and the turn end forgets the rest", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  const nlohmann::json ask = {{"method", "item/commandExecution/requestApproval"},
                              {"params", {{"threadId", "t"}, {"turnId", "u"}, {"itemId", "c1"}, {"command", "rm -rf x"},
                                          {"reason", "needs write access"}}}};
  auto first = ask;
  first["id"] = 0;
  auto second = ask;
  second["id"] = "req-b";
  h.feed(first);
  h.feed(second);
  REQUIRE(h.sink.permissions.size() == 2);
  CHECK(h.sink.permissions[0].second.description == "Run: rm -rf x — needs write access");
  CHECK(h.sink.permissions[0].second.reason == "needs write access");
  CHECK(h.sink.permissions[1].first == "\"req-b\"");
  h.feed({{"method", "serverRequest/resolved"}, {"params", {{"threadId", "t"}, {"requestId", 0}}}});
  CHECK_FALSE(h.translator.take_approval("0"));
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "u"}, {"status", "interrupted"}}}}}});
  CHECK_FALSE(h.translator.take_approval("\"req-b\""));
  CHECK(h.sink.lines.back() == "turn_end cancelled");
}

TEST_CASE("Codex usage sums the turn's requests and leaves out cached input", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  h.feed({{"method", "turn/started"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "u"}, {"status", "inProgress"}}}}}});
  const auto usage = [](int input, int cached, int output, const char* turn) {
    return nlohmann::json{{"method", "thread/tokenUsage/updated"},
                          {"params", {{"threadId", "t"}, {"turnId", turn},
                                      {"tokenUsage", {{"last", {{"inputTokens", input}, {"cachedInputTokens", cached},
                                                                {"outputTokens", output}, {"reasoningOutputTokens", 0},
                                                                {"totalTokens", input + output}}},
                                                      {"total", nlohmann::json::object()}}}}}};
  };
  h.feed(usage(100, 40, 10, "u"));
  h.feed(usage(200, 150, 5, "u"));
  h.feed(usage(999, 0, 999, "other"));
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "u"}, {"status", "completed"}}}}}});
  CHECK(h.sink.lines == Lines{"turn_end end_turn in=110 out=15 cached=190"});
}

TEST_CASE("Codex plan updates report the whole plan each time, with its steps' statuses", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  const auto plan = [](nlohmann::json steps) {
    return nlohmann::json{{"method", "turn/plan/updated"},
                          {"params", {{"threadId", "t"}, {"turnId", "u"}, {"explanation", "Two steps"}, {"plan", std::move(steps)}}}};
  };
  h.feed(plan({{{"step", "Read"}, {"status", "inProgress"}}, {{"step", "Write"}, {"status", "pending"}}}));
  h.feed(plan({{{"step", "Read"}, {"status", "completed"}}, {{"step", "Write"}, {"status", "inProgress"}}}));
  h.feed(plan(nlohmann::json::array()));
  CHECK(h.sink.lines.empty());  // no tool call: the plan is session state
  REQUIRE(h.sink.plans.size() == 3);
  REQUIRE(h.sink.plans[0].entries.size() == 2);
  CHECK(h.sink.plans[0].entries[0].content == "Read");
  CHECK(h.sink.plans[0].entries[0].status == protocol::PlanEntryStatus::InProgress);
  CHECK(h.sink.plans[0].entries[1].status == protocol::PlanEntryStatus::Pending);
  CHECK(h.sink.plans[1].entries[0].status == protocol::PlanEntryStatus::Completed);
  CHECK(h.sink.plans[1].entries[1].status == protocol::PlanEntryStatus::InProgress);
  CHECK(h.sink.plans[2].entries.empty());  // cleared
  // A status this adapter does not know is not guessed at.
  h.feed(plan({{{"step", "Odd"}, {"status", "blocked"}}}));
  CHECK(h.sink.plans.size() == 3);
  CHECK(h.malformed() == 1);
}

TEST_CASE("Codex token usage reports the context as of the latest request and the model's window", "[codex]") {
  Harness h;
  h.send("thread/start", nlohmann::json::object());
  h.feed({{"id", 1}, {"result", {{"thread", {{"id", "t"}}}}}});
  const auto usage = [](const char* thread, int last_input, int last_output, int total_input) {
    return nlohmann::json{
        {"method", "thread/tokenUsage/updated"},
        {"params", {{"threadId", thread}, {"turnId", "u"},
                    {"tokenUsage", {{"last", {{"inputTokens", last_input}, {"cachedInputTokens", 0}, {"outputTokens", last_output},
                                              {"reasoningOutputTokens", 0}, {"totalTokens", last_input + last_output}}},
                                    {"total", {{"inputTokens", total_input}, {"cachedInputTokens", 7}, {"outputTokens", 60},
                                               {"reasoningOutputTokens", 0}, {"totalTokens", total_input + 60}}},
                                    {"modelContextWindow", 258400}}}}}};
  };
  h.feed(usage("t", 1000, 50, 1000));
  h.feed(usage("t", 1100, 10, 2100));
  h.feed(usage("another-thread", 5, 5, 5));  // a sub-agent's thread: not this session's context
  REQUIRE(h.sink.usages.size() == 2);
  CHECK(h.sink.usages[0].usage.used_tokens == 1050);
  CHECK(h.sink.usages[1].usage.used_tokens == 1110);
  CHECK(h.sink.usages[1].usage.window_tokens == 258400);
  CHECK(h.sink.usages[1].usage.input_tokens == 2100);
  CHECK(h.sink.usages[1].usage.output_tokens == 60);
  CHECK(h.sink.usages[1].usage.cache_read_tokens == 7);
}

TEST_CASE("Codex MCP startup reports every session server whole, failures with Codex's error", "[codex]") {
  Harness h;
  protocol::McpServer echo;
  echo.name = "echo";
  echo.transport = protocol::McpTransport::Stdio;
  protocol::McpServer web;
  web.name = "web";
  web.transport = protocol::McpTransport::Http;
  h.translator.watch_mcp_servers({echo, web});
  const auto status = [](const char* name, const char* state, nlohmann::json error) {
    return nlohmann::json{{"method", "mcpServer/startupStatus/updated"},
                          {"params", {{"threadId", "t"}, {"name", name}, {"status", state}, {"error", std::move(error)}}}};
  };
  h.feed(status("echo", "starting", nullptr));
  h.feed(status("echo", "ready", nullptr));
  h.feed(status("web", "failed", "connection refused"));
  h.feed(status("users-own", "ready", nullptr));  // from the user's config.toml: not the session's
  REQUIRE(h.sink.mcp.size() == 4);  // pending at first, then one per change of ours
  CHECK(h.sink.mcp[0].servers.size() == 2);
  CHECK(h.sink.mcp[0].servers[0].status == protocol::McpServerStatusKind::Pending);
  const auto& last = h.sink.mcp.back().servers;
  REQUIRE(last.size() == 2);
  CHECK(last[0].status == protocol::McpServerStatusKind::Connected);
  CHECK(last[1].status == protocol::McpServerStatusKind::Failed);
  CHECK(last[1].error == "connection refused");
  CHECK(last[1].transport == protocol::McpTransport::Http);

  Harness none;
  none.translator.watch_mcp_servers({});
  CHECK(none.sink.mcp.empty());  // a session without MCP servers reports none
}

TEST_CASE("Codex's turn id is the turn's native reference", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  h.feed({{"method", "turn/started"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "turn-9"}, {"status", "inProgress"}}}}}});
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "turn-9"}, {"status", "completed"}}}}}});
  REQUIRE(h.sink.turns.size() == 1);
  CHECK(h.sink.turns[0].native_turn_ref == "turn-9");
}

TEST_CASE("Codex's compaction turn is not the session's: its end is reported to the adapter, not as a turn", "[codex]") {
  Harness h;
  h.send("thread/start", nlohmann::json::object());
  h.feed({{"id", 1}, {"result", {{"thread", {{"id", "t"}}}}}});
  int others = 0;
  h.translator.on_compaction_completed([&] { ++others; });
  // A turn ending that is not the compaction's (a sub-agent's, here before the compaction was asked for and while
  // it runs) completes nothing.
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "stale"}, {"status", "completed"}}}}}});
  h.translator.compaction_requested();
  h.feed({{"method", "turn/started"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "compaction"}, {"status", "inProgress"}}}}}});
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "sub-agent"}, {"status", "completed"}}}}}});
  CHECK(others == 0);
  CHECK_FALSE(h.translator.turn_active());
  h.feed({{"method", "item/started"}, {"params", {{"threadId", "t"}, {"turnId", "compaction"}, {"item", {{"type", "contextCompaction"}, {"id", "c1"}}}}}});
  h.feed({{"method", "item/completed"}, {"params", {{"threadId", "t"}, {"turnId", "compaction"}, {"item", {{"type", "contextCompaction"}, {"id", "c1"}}}}}});
  h.feed({{"method", "turn/completed"}, {"params", {{"threadId", "t"}, {"turn", {{"id", "compaction"}, {"status", "completed"}}}}}});
  CHECK(others == 1);
  CHECK(h.sink.turns.empty());
  CHECK(h.sink.lines == Lines{"provider_session t", "status compacting \"compacting the conversation\"",
                              "status compacted \"compacted the conversation\""});
}

TEST_CASE("Codex skills/changed asks the adapter to list the skills again", "[codex]") {
  Harness h;
  int asked = 0;
  h.translator.on_skills_changed([&] { ++asked; });
  h.feed({{"method", "skills/changed"}, {"params", nlohmann::json::object()}});
  CHECK(asked == 1);
}

TEST_CASE("Codex MCP and web search items are tool calls", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  const auto item = [](const char* event, nlohmann::json body) {
    return nlohmann::json{{"method", event}, {"params", {{"threadId", "t"}, {"turnId", "u"}, {"item", std::move(body)}}}};
  };
  h.feed(item("item/started", {{"type", "mcpToolCall"}, {"id", "m1"}, {"server", "docs"}, {"tool", "search"},
                               {"arguments", {{"q", "asio"}}}, {"status", "inProgress"}}));
  h.feed({{"method", "item/mcpToolCall/progress"}, {"params", {{"threadId", "t"}, {"turnId", "u"}, {"itemId", "m1"}, {"message", "half way"}}}});
  h.feed(item("item/completed", nlohmann::json::parse(R"({"type":"mcpToolCall","id":"m1","server":"docs","tool":"search",
      "status":"completed","result":{"content":[{"type":"text","text":"found"},{"type":"image"}]}})")));
  h.feed(item("item/completed", {{"type", "mcpToolCall"}, {"id", "m2"}, {"server", "docs"}, {"tool", "get"},
                                 {"arguments", "raw"}, {"status", "failed"}, {"error", {{"message", "boom"}}}}));
  h.feed(item("item/started", {{"type", "webSearch"}, {"id", "w1"}, {"query", "asio strands"}}));
  h.feed(item("item/completed", {{"type", "webSearch"}, {"id", "w1"}, {"query", "asio strands"}}));
  check_clean(h);
  CHECK(h.sink.lines == Lines{
                            "tool_started m1 mcp__docs__search {\"q\":\"asio\"}",
                            "tool_output m1 \"half way\\n\"",
                            "tool_completed m1 ok \"found\\n[image]\"",
                            "tool_started m2 mcp__docs__get {\"arguments\":\"raw\"}",
                            "tool_completed m2 error \"boom\"",
                            "tool_started w1 web_search {\"query\":\"asio strands\"}",
                            "tool_completed w1 ok \"asio strands\"",
                        });
}

TEST_CASE("Codex retried errors and compaction are statuses", "[codex]") {
  Harness h;
  h.send("turn/start", nlohmann::json::object());
  h.feed({{"method", "error"},
          {"params", {{"threadId", "t"}, {"turnId", "u"}, {"willRetry", true},
                      {"error", {{"message", "Reconnecting... 1/5"}, {"codexErrorInfo", {{"responseStreamDisconnected", nlohmann::json::object()}}}}}}}});
  h.feed({{"method", "item/started"}, {"params", {{"item", {{"type", "agentMessage"}, {"id", "a"}, {"text", ""}}}}}});
  h.feed({{"method", "item/started"}, {"params", {{"item", {{"type", "contextCompaction"}, {"id", "c"}}}}}});
  h.feed({{"method", "item/completed"}, {"params", {{"item", {{"type", "contextCompaction"}, {"id", "c"}}}}}});
  h.feed({{"method", "error"},
          {"params", {{"threadId", "t"}, {"turnId", "u"}, {"willRetry", false},
                      {"error", {{"message", "Unauthorized"}, {"codexErrorInfo", "unauthorized"}}}}}});
  h.feed({{"method", "turn/completed"},
          {"params", {{"threadId", "t"}, {"turn", {{"id", "u"}, {"status", "failed"},
                                                   {"error", {{"message", "Unauthorized"}, {"codexErrorInfo", "unauthorized"}}}}}}}});
  check_clean(h);
  CHECK(h.sink.lines == Lines{
                            "status retrying \"Reconnecting... 1/5\"",
                            "status working",
                            "status compacting \"compacting the conversation\"",
                            "status compacted \"compacted the conversation\"",
                            "error fatal \"Unauthorized\"",
                            "turn_end error error=\"Unauthorized\"",
                        });
}

TEST_CASE("Codex escalation request carries the model's justification as the reason", "[codex]") {
  Harness h;
  replay(h, "escalate");
  check_clean(h);
  REQUIRE(h.sink.permissions.size() == 1);
  const auto& ask = h.sink.permissions[0].second;
  CHECK(ask.subject == "touch <scratch>/outside/escalated.txt && echo ok");
  CHECK(ask.description == "Run: touch <scratch>/outside/escalated.txt && echo ok — needs to write outside the workspace");
  CHECK(ask.reason == "needs to write outside the workspace");
  CHECK(ask.input["reason"] == "needs to write outside the workspace");
  CHECK(h.sink.lines.back().rfind("turn_end end_turn \"Escalated.\"", 0) == 0);
}

}  // namespace codex_translator_tests
