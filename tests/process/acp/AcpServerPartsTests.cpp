#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "acp/AcpErrors.h"
#include "acp/AcpPermissions.h"
#include "acp/AcpPrompt.h"
#include "acp/AcpUpdates.h"
#include "support/AcpSchemaValidator.h"
#include "switchboard/json/DecodeContext.h"
#include "switchboard/protocol/generated/Types.h"
#include "support/AcpSdk.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// The parts of `switchboard acp` that do no I/O of their own (but for writing a prompt's binary blocks to
// files): our events as session/update payloads, an ACP prompt as session.send's text and attachments, the
// permission options and their decisions, and the error mapping. The whole command runs in
// tests/e2e/AcpScenarios.cpp.

namespace acp_server_parts_tests {

using nlohmann::json;
using namespace switchboard::acp;

// A value of a schema type, from its JSON (the test's own: it must decode).
template <class T>
T decoded(const json& text) {
  T value{};
  switchboard::json::DecodeContext context;
  const bool ok = switchboard::protocol::decode(text, value, context);
  INFO(context.error().pointer << ": expected " << context.error().expected);
  REQUIRE(ok);
  return value;
}

switchboard::protocol::SessionInfo session_info(json fields) {
  json info{{"sessionId", "s-1"}, {"agent", "claude"}, {"cwd", "/w"}, {"archived", false}, {"state", "idle"},
            {"live", false}, {"createdAt", 1}, {"updatedAt", 2}};
  info.update(fields);
  return decoded<switchboard::protocol::SessionInfo>(info);
}

json event(const std::string& type, json data) { return json{{"seq", 7}, {"type", type}, {"ts", 1}, {"sessionId", "s-1"}, {"data", std::move(data)}}; }

TEST_CASE("acp updates: a delta is a chunk live and the completed message is the text in a replay", "[acp-server]") {
  ShownDiffs shown;
  const auto delta = event("message.delta", {{"turnId", "t"}, {"messageId", "m"}, {"kind", "text"}, {"text", "Hel"}});
  const auto live = updates_for_event(delta, UpdateReading::Live, shown);
  REQUIRE(live.size() == 1);
  CHECK(live[0] == json{{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "Hel"}}}});
  CHECK(updates_for_event(delta, UpdateReading::Replay, shown).empty());  // compacted away, maybe: the completed one counts

  const auto thinking = event("message.delta", {{"turnId", "t"}, {"messageId", "m"}, {"kind", "thinking"}, {"text", "hmm"}});
  CHECK(updates_for_event(thinking, UpdateReading::Live, shown)[0]["sessionUpdate"] == "agent_thought_chunk");

  const auto completed = event("message.completed", {{"turnId", "t"}, {"messageId", "m"}, {"role", "assistant"}, {"kind", "text"}, {"text", "Hello"}});
  CHECK(updates_for_event(completed, UpdateReading::Live, shown).empty());  // the chunks carried it
  CHECK(updates_for_event(completed, UpdateReading::Replay, shown)[0]["content"]["text"] == "Hello");

  const auto started = event("turn.started", {{"turnId", "t"}, {"text", "hi there"}});
  CHECK(updates_for_event(started, UpdateReading::Live, shown).empty());
  const auto replayed = updates_for_event(started, UpdateReading::Replay, shown);
  REQUIRE(replayed.size() == 1);
  CHECK(replayed[0]["sessionUpdate"] == "user_message_chunk");
  CHECK(replayed[0]["content"]["text"] == "hi there");
}

TEST_CASE("acp updates: tools are tool_call and tool_call_update and the plan is ACP's plan", "[acp-server]") {
  ShownDiffs shown;
  const auto started = updates_for_event(event("tool.started", {{"turnId", "t"}, {"toolCallId", "c1"}, {"tool", "Bash"}, {"input", {{"command", "ls -la"}}}}),
                                         UpdateReading::Live, shown);
  REQUIRE(started.size() == 1);
  CHECK(started[0]["sessionUpdate"] == "tool_call");
  CHECK(started[0]["toolCallId"] == "c1");
  CHECK(started[0]["kind"] == "execute");
  CHECK(started[0]["title"] == "Bash: ls -la");
  CHECK(started[0]["status"] == "in_progress");
  CHECK(started[0]["rawInput"]["command"] == "ls -la");

  const auto failed = updates_for_event(event("tool.completed", {{"turnId", "t"}, {"toolCallId", "c1"}, {"output", "denied"}, {"isError", true}}),
                                        UpdateReading::Replay, shown);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]["status"] == "failed");
  CHECK(failed[0]["content"][0]["content"]["text"] == "denied");

  // A to-do tool is a tool call like any other: the plan itself comes whole as plan.updated, replayed too.
  const json todos{{"todos", json::array({json{{"content", "write it"}, {"status", "in_progress"}}})}};
  const auto todo = updates_for_event(event("tool.started", {{"turnId", "t"}, {"toolCallId", "c2"}, {"tool", "TodoWrite"}, {"input", todos}}),
                                      UpdateReading::Live, shown);
  REQUIRE(todo.size() == 1);
  CHECK(todo[0]["sessionUpdate"] == "tool_call");
  const auto planned = updates_for_event(event("plan.updated", {{"turnId", "t"}, {"entries", json::array({json{{"content", "write it"}, {"status", "in_progress"}}})}}),
                                         UpdateReading::Replay, shown);
  REQUIRE(planned.size() == 1);
  CHECK(planned[0] == json{{"sessionUpdate", "plan"}, {"entries", json::array({json{{"content", "write it"}, {"priority", "medium"}, {"status", "in_progress"}}})}});

  CHECK_FALSE(started[0].contains("content"));  // no diffs: no content

  // A tool call's diffs are ACP diff content, a new file's oldText null; such a call is an edit whatever its name.
  const json diffs = json::array({json{{"path", "/w/a.txt"}, {"oldText", "beta"}, {"newText", "BETA"}}, json{{"path", "/w/new.txt"}, {"newText", "fresh\n"}}});
  const auto edited = updates_for_event(
      event("tool.started", {{"turnId", "t"}, {"toolCallId", "c3"}, {"tool", "some_editor"}, {"input", json::object()}, {"diffs", diffs}}),
      UpdateReading::Replay, shown);
  REQUIRE(edited.size() == 1);
  CHECK(edited[0]["kind"] == "edit");
  CHECK(edited[0]["content"] == json::array({json{{"type", "diff"}, {"path", "/w/a.txt"}, {"oldText", "beta"}, {"newText", "BETA"}},
                                             json{{"type", "diff"}, {"path", "/w/new.txt"}, {"oldText", nullptr}, {"newText", "fresh\n"}}}));
  // ACP's tool_call_update replaces the content: the completion keeps the diffs, then the output; once.
  const auto finished = updates_for_event(event("tool.completed", {{"turnId", "t"}, {"toolCallId", "c3"}, {"output", "updated"}}), UpdateReading::Replay, shown);
  REQUIRE(finished.size() == 1);
  REQUIRE(finished[0]["content"].size() == 3);
  CHECK(finished[0]["content"][0] == edited[0]["content"][0]);
  CHECK(finished[0]["content"][1] == edited[0]["content"][1]);
  CHECK(finished[0]["content"][2]["content"]["text"] == "updated");
  CHECK(shown.empty());

  CHECK(tool_kind_of("Read") == "read");
  CHECK(tool_kind_of("apply_patch") == "edit");
  CHECK(tool_kind_of("Grep") == "search");
  CHECK(tool_kind_of("mcp__thing") == "other");
  CHECK(tool_title_of("Read", json{{"file_path", "/a/b.txt"}}) == "Read: /a/b.txt");
  CHECK(tool_title_of("shell", json{{"command", json::array({"bash", "-lc", "ls"})}}) == "shell: bash -lc ls");
  CHECK(tool_title_of("Think", json::object()) == "Think");
}

TEST_CASE("acp updates: events an editor has no use for give nothing and odd data does not throw", "[acp-server]") {
  ShownDiffs shown;
  CHECK(updates_for_event(event("session.state", {{"state", "running"}}), UpdateReading::Live, shown).empty());
  CHECK(updates_for_event(event("turn.stopped", {{"turnId", "t"}, {"stopReason", "end_turn"}}), UpdateReading::Live, shown).empty());
  CHECK(updates_for_event(json::array(), UpdateReading::Live, shown).empty());
  CHECK(updates_for_event(event("tool.started", {{"tool", 5}, {"input", "no"}}), UpdateReading::Live, shown).size() == 1);
  const auto mode = updates_for_event(event("session.updated", {{"session", {{"mode", "plan"}}}}), UpdateReading::Live, shown);
  REQUIRE(mode.size() == 1);
  CHECK(mode[0] == json{{"sessionUpdate", "current_mode_update"}, {"currentModeId", "plan"}});
}

TEST_CASE("acp prompt: text and file links and embedded text and images become text and attachments with nothing dropped", "[acp-server]") {
  switchboard::testing::TempDir dir{"acp-prompt"};
  const json blocks = json::array({
      json{{"type", "text"}, {"text", "look at these"}},
      json{{"type", "resource_link"}, {"uri", "file:///home/u/My%20File.md"}, {"name", "My File.md"}, {"mimeType", "text/markdown"}},
      json{{"type", "resource_link"}, {"uri", "https://example.com/x"}, {"name", "x"}},
      json{{"type", "resource"}, {"resource", {{"uri", "file:///a/b.py"}, {"text", "print(1)"}}}},
      json{{"type", "image"}, {"mimeType", "image/png"}, {"data", "aGVsbG8="}},
  });
  const auto read = prompt_for_send(blocks, dir.path());
  REQUIRE(std::holds_alternative<PromptForSend>(read));
  const auto& prompt = std::get<PromptForSend>(read);
  CHECK(prompt.text == "look at these\n\n[x](https://example.com/x)\n\nContent of file:///a/b.py:\n```\nprint(1)\n```");
  REQUIRE(prompt.attachments.size() == 2);
  CHECK(prompt.attachments[0] == json{{"path", "/home/u/My File.md"}, {"mimeType", "text/markdown"}});
  CHECK(prompt.attachments[1]["mimeType"] == "image/png");
  CHECK(switchboard::testing::read_text_file(prompt.attachments[1]["path"].get<std::string>()) == "hello");

  CHECK(std::holds_alternative<std::string>(prompt_for_send(json::array({json{{"type", "video"}}}), dir.path())));
  CHECK(std::holds_alternative<std::string>(prompt_for_send(json::array({json{{"type", "image"}, {"data", "%%%"}}}), dir.path())));
  CHECK(std::holds_alternative<std::string>(prompt_for_send(json{{"type", "text"}}, dir.path())));
  CHECK(path_of_file_uri("file://localhost/etc/hosts") == "/etc/hosts");
  CHECK(path_of_file_uri("file://otherhost/etc/hosts").empty());
  CHECK(path_of_file_uri("untitled:1").empty());
}

TEST_CASE("acp permissions: three options and each answer is its decision", "[acp-server]") {
  const json request_json{{"requestId", "r-1"}, {"sessionId", "s-1"}, {"turnId", "t"}, {"tool", "Bash"}, {"input", {{"command", "rm x"}}},
                          {"description", "Run rm x"}, {"reason", "mode"}, {"state", "open"}, {"openedAt", 1},
                          {"suggestedRule", {{"tool", "Bash"}, {"pattern", "rm *"}}}};
  const auto request = decoded<switchboard::protocol::PermissionRequest>(request_json);
  const auto params = permission_request_params(request, "c1");
  CHECK(params["sessionId"] == "s-1");
  CHECK(params["toolCall"]["toolCallId"] == "c1");
  CHECK(params["toolCall"]["title"] == "Run rm x");
  CHECK(params["toolCall"]["kind"] == "execute");
  REQUIRE(params["options"].size() == 3);

  const auto selected = [](const char* option) { return json{{"outcome", {{"outcome", "selected"}, {"optionId", option}}}}; };
  CHECK(permission_respond_params(request, selected("allow_once")) == json{{"requestId", "r-1"}, {"decision", "allow_once"}});
  const auto always = permission_respond_params(request, selected("allow_always"));
  CHECK(always["decision"] == "allow_session");
  CHECK(always["rule"] == request_json["suggestedRule"]);
  CHECK(permission_respond_params(request, selected("reject_once"))["decision"] == "deny");
  CHECK(permission_respond_params(request, json{{"outcome", {{"outcome", "cancelled"}}}})["decision"] == "deny");
  CHECK(permission_respond_params(request, selected("made_up"))["decision"] == "deny");
  CHECK(permission_respond_params(request, nullptr)["decision"] == "deny");
}

TEST_CASE("acp errors: our codes map to ACP codes and our message is kept with what was being done", "[acp-server]") {
  const json unknown{{"error", {{"code", -32010}, {"message", "no session s-9"}}}};
  const auto mapped = acp_error_of(unknown, "session/load");
  CHECK(mapped["code"] == -32002);
  CHECK(mapped["message"] == "session/load: no session s-9");
  CHECK(mapped["data"]["switchboardCode"] == -32010);
  CHECK(acp_error_of(json{{"error", {{"code", -32014}, {"message", "bad cwd"}}}}, "session/new")["code"] == -32602);
  CHECK(acp_error_of(json{{"error", {{"code", -32013}, {"message", "not installed"}}}}, "session/new")["code"] == -32603);
  CHECK(acp_error_of(json::object(), "x")["message"] == "x: the daemon gave no reason");
}

// The e2e scenarios trust this validator with every message: it must refuse what ACP does not allow.
TEST_CASE("acp config options: mode and model choices, the current value always one of them", "[acp-server]") {
  const std::vector<std::string> modes{"default", "plan"};
  const json models = json::parse(R"([{"id":"sonnet","name":"Sonnet","description":"routine"},{"id":"opus","isDefault":true}])");

  const auto options = config_options(session_info({{"models", models}}), modes);
  REQUIRE(options.size() == 2);
  CHECK(options[0] == json::parse(R"({"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default",
      "options":[{"value":"default","name":"default"},{"value":"plan","name":"plan"}]})"));
  // No model chosen: the agent's default is current; a model without a name is named by its id.
  CHECK(options[1] == json::parse(R"({"id":"model","name":"Model","category":"model","type":"select","currentValue":"opus",
      "options":[{"value":"sonnet","name":"Sonnet","description":"routine"},{"value":"opus","name":"opus"}]})"));

  // The session's own choices win, and a model set by a name the list lacks is offered as well.
  const auto chosen = config_options(session_info({{"mode", "plan"}, {"model", "claude-x"}, {"models", models}}), modes);
  REQUIRE(chosen.size() == 2);
  CHECK(chosen[0]["currentValue"] == "plan");
  CHECK(chosen[1]["currentValue"] == "claude-x");
  CHECK(chosen[1]["options"].size() == 3);
  CHECK(chosen[1]["options"][2] == json{{"value", "claude-x"}, {"name", "claude-x"}});

  // Nothing to choose from: no option; without a default the first model is current.
  CHECK(config_options(session_info({{"model", "m"}}), {}).empty());
  const auto first = config_options(session_info({{"models", json::parse(R"([{"id":"a"},{"id":"b"}])")}}), {});
  REQUIRE(first.size() == 1);
  CHECK(first[0]["currentValue"] == "a");
}

TEST_CASE("acp schema validator: valid messages pass and invalid ones are refused", "[acp-server]") {
  const std::filesystem::path schema = switchboard::testing::acp_schema_file();
  if (switchboard::testing::acp_sdk_modules().empty() || !std::filesystem::exists(schema)) {
    if (std::getenv("CI") != nullptr) FAIL("the ACP SDK is not installed (scripts/install-acp-sdk); CI requires it");
    WARN("SKIPPED: the ACP SDK is not installed; run scripts/install-acp-sdk");
    return;
  }
  const switchboard::testing::AcpSchemaValidator validator(schema);
  REQUIRE(validator.loaded());
  const json chunk{{"jsonrpc", "2.0"}, {"method", "session/update"},
                   {"params", {{"sessionId", "s"}, {"update", {{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "hi"}}}}}}}};
  CHECK(validator.validate(chunk, "").empty());
  auto odd_kind = chunk;
  odd_kind["params"]["update"]["sessionUpdate"] = "agent_shouting";
  CHECK_FALSE(validator.validate(odd_kind, "").empty());
  auto no_session = chunk;
  no_session["params"].erase("sessionId");
  CHECK_FALSE(validator.validate(no_session, "").empty());
  CHECK(validator.validate(json{{"jsonrpc", "2.0"}, {"id", 3}, {"result", {{"stopReason", "end_turn"}}}}, "session/prompt").empty());
  CHECK_FALSE(validator.validate(json{{"jsonrpc", "2.0"}, {"id", 3}, {"result", {{"stopReason", "error"}}}}, "session/prompt").empty());
  CHECK_FALSE(validator.validate(json{{"jsonrpc", "2.0"}, {"id", 3}, {"result", json::object()}}, "session/new").empty());
  // What session/new and session/set_config_option answer with our config options, and config_option_update.
  const json options = config_options(session_info({{"models", json::parse(R"([{"id":"a","isDefault":true}])")}}), {"default"});
  CHECK(validator.validate(json{{"jsonrpc", "2.0"}, {"id", 4}, {"result", {{"sessionId", "s"}, {"configOptions", options}}}}, "session/new").empty());
  CHECK(validator.validate(json{{"jsonrpc", "2.0"}, {"id", 5}, {"result", {{"configOptions", options}}}}, "session/set_config_option").empty());
  CHECK(validator.validate(json{{"jsonrpc", "2.0"}, {"method", "session/update"},
                                {"params", {{"sessionId", "s"}, {"update", {{"sessionUpdate", "config_option_update"}, {"configOptions", options}}}}}},
                           "").empty());
  CHECK_FALSE(validator.validate(json{{"jsonrpc", "2.0"}, {"method", "fs/read_text_file"}, {"params", json::object()}}, "").empty());
}

}  // namespace acp_server_parts_tests
