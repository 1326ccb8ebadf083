#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/SessionMarkdown.h"

// session.export's Markdown from hand-made events: what a reader of the transcript must find in it.

namespace session_markdown_tests {

using namespace switchboard;
namespace p = protocol;
using Json = nlohmann::json;

p::EventEnvelope event(std::int64_t seq, std::string type, Json data) {
  p::EventEnvelope envelope;
  envelope.seq = seq;
  envelope.type = std::move(type);
  envelope.ts = 1'765'000'000'000 + seq;
  envelope.session_id = "s-1";
  envelope.data = std::move(data);
  return envelope;
}

p::SessionInfo session_info() {
  p::SessionInfo info;
  info.session_id = "s-1";
  info.agent = "claude";
  info.cwd = "/home/dev/app";
  info.title = "Fix the login bug";
  info.model = "opus";
  return info;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST_CASE("session Markdown holds every prompt, answer, tool call, diff and permission decision, in order", "[search][export]") {
  const std::vector<p::EventEnvelope> events{
      event(1, "turn.started", {{"turnId", "t-1"}, {"text", "the login fails\nafter a restart"}}),
      event(2, "message.delta", {{"turnId", "t-1"}, {"messageId", "m-1"}, {"kind", "text"}, {"text", "streamed piece"}}),
      event(3, "message.completed", {{"turnId", "t-1"}, {"messageId", "m-0"}, {"role", "assistant"}, {"kind", "thinking"}, {"text", "check the token"}}),
      event(4, "message.completed", {{"turnId", "t-1"}, {"messageId", "m-1"}, {"role", "assistant"}, {"kind", "text"}, {"text", "I will fix the expiry check."}}),
      event(5, "tool.started",
            {{"turnId", "t-1"}, {"toolCallId", "c-1"}, {"tool", "Edit"}, {"input", {{"file_path", "/home/dev/app/auth.cpp"}}},
             {"diffs", Json::array({{{"path", "/home/dev/app/auth.cpp"}, {"oldText", "if (now > expiry)"}, {"newText", "if (now >= expiry)"}}})}}),
      event(6, "permission.requested",
            {{"request", {{"requestId", "r-1"}, {"sessionId", "s-1"}, {"turnId", "t-1"}, {"tool", "Edit"}, {"input", Json::object()},
                          {"description", "edit auth.cpp"}, {"state", "open"}, {"openedAt", 1}}}}),
      event(7, "permission.resolved", {{"requestId", "r-1"}, {"outcome", "decided"}, {"decision", "allow_once"}, {"resolvedBy", "client"}, {"resolvedAt", 2}}),
      event(8, "tool.completed", {{"turnId", "t-1"}, {"toolCallId", "c-1"}, {"output", "edited"}, {"isError", false}}),
      event(9, "turn.stopped", {{"turnId", "t-1"}, {"stopReason", "end_turn"}, {"text", "I will fix the expiry check."},
                                {"usage", {{"inputTokens", 1200}, {"outputTokens", 80}, {"costUsd", 0.0125}}}}),
      event(10, "turn.started", {{"turnId", "t-2"}, {"text", "run the tests"}}),
      event(11, "tool.started", {{"turnId", "t-2"}, {"toolCallId", "c-2"}, {"tool", "Bash"}, {"input", {{"command", "make test"}}}}),
      event(12, "permission.requested",
            {{"request", {{"requestId", "r-2"}, {"sessionId", "s-1"}, {"turnId", "t-2"}, {"tool", "Bash"}, {"input", Json::object()},
                          {"description", "run make test"}, {"state", "open"}, {"openedAt", 3}}}}),
      event(13, "permission.resolved", {{"requestId", "r-2"}, {"outcome", "decided"}, {"decision", "deny"}, {"resolvedBy", "rule"}, {"resolvedAt", 4}}),
      event(14, "tool.completed", {{"turnId", "t-2"}, {"toolCallId", "c-2"}, {"output", "denied"}, {"isError", true}}),
      event(15, "turn.stopped", {{"turnId", "t-2"}, {"stopReason", "end_turn"}, {"text", "The tests were not run."}}),
  };
  const std::string text = daemon::render_session_markdown(session_info(), events);
  INFO(text);
  const std::vector<std::string> in_order{
      "# Fix the login bug", "Agent: claude", "`/home/dev/app`", "## Turn 1", "> the login fails\n> after a restart",
      "*Thinking*", "> check the token", "I will fix the expiry check.", "**Tool call: Edit**", "\"file_path\"",
      "```diff\n--- /home/dev/app/auth.cpp\n+++ /home/dev/app/auth.cpp\n-if (now > expiry)\n+if (now >= expiry)\n```",
      "**Permission asked** for Edit: edit auth.cpp", "**Permission** for Edit: allowed once (by client)", "Output of Edit",
      "edited", "*Turn ended: end_turn; 1200 input tokens, 80 output tokens, $0.0125*", "## Turn 2", "> run the tests",
      "**Tool call: Bash**", "make test", "**Permission** for Bash: denied (by rule)", "Error of Bash", "The tests were not run.",
      "*Turn ended: end_turn*"};
  std::size_t from = 0;
  for (const auto& part : in_order) {
    INFO(part);
    const auto at = text.find(part, from);
    REQUIRE(at != std::string::npos);
    from = at + part.size();
  }
  CHECK(text.find("streamed piece") == std::string::npos);       // deltas are not repeated
  CHECK(count(text, "I will fix the expiry check.") == 1);        // the final text only once
}

TEST_CASE("session Markdown shortens long tool output and fences text that holds backticks", "[search][export]") {
  std::string output;
  for (int i = 0; i < 100; ++i) output += "line " + std::to_string(i) + "\n";
  const std::vector<p::EventEnvelope> events{
      event(1, "turn.started", {{"turnId", "t-1"}, {"text", "go"}}),
      event(2, "tool.started", {{"turnId", "t-1"}, {"toolCallId", "c"}, {"tool", "Bash"}, {"input", {{"command", "echo ```"}}}}),
      event(3, "tool.completed", {{"turnId", "t-1"}, {"toolCallId", "c"}, {"output", output}, {"isError", false}}),
  };
  const std::string text = daemon::render_session_markdown(session_info(), events);
  INFO(text);
  CHECK(text.find("line 39\n") != std::string::npos);
  CHECK(text.find("line 40\n") == std::string::npos);
  CHECK(text.find("… (") != std::string::npos);
  CHECK(text.find("60 more lines)") != std::string::npos);
  CHECK(text.find("````json\n") != std::string::npos);  // longer than the ``` inside
}

}  // namespace session_markdown_tests
