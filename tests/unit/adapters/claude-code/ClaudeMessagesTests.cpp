#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeAttachments.h"
#include "claude-code/ClaudeLaunch.h"
#include "claude-code/ClaudeMessages.h"
#include "common/VersionProbe.h"
#include "support/ClaudeFixtures.h"
#include "support/TempDir.h"

namespace claude_messages_tests {

using namespace switchboard;
using namespace switchboard::adapters::claude;
namespace fs = std::filesystem;

ToolRequest bash_request() {
  ToolRequest request;
  request.request_id = "req-7";
  request.kind = ToolRequestKind::Permission;
  request.tool = "Bash";
  request.input = {{"command", "make"}, {"description", "Build"}};
  request.tool_use_id = "toolu_7";
  return request;
}

// Writes `bytes` to the file `name` in `dir` and returns the file's path.
std::string write_file(const testing::TempDir& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir.path() / name, std::ios::binary) << bytes;
  return (dir.path() / name).string();
}

// ---- stdin lines ---------------------------------------------------------------------------------------------------

TEST_CASE("claude messages: a prompt is one stream-json user line", "[claude][messages]") {
  CHECK(to_line(user_message("hello")) ==
        R"({"message":{"content":[{"text":"hello","type":"text"}],"role":"user"},"parent_tool_use_id":null,"session_id":"","type":"user"})"
        "\n");
}

TEST_CASE("claude messages: images are inlined before the prompt and other files are named after it", "[claude][messages]") {
  PreparedAttachment image;
  image.path = "/tmp/shot.png";
  image.media_type = "image/png";
  image.base64_data = "iVBORw0KGgo=";
  PreparedAttachment notes;
  notes.path = "/srv/repo/notes.md";
  PreparedAttachment huge;
  huge.path = "/srv/repo/huge.png";
  huge.note = "the image is too large to inline";
  const auto message = user_message("look", {notes, image, huge});
  const nlohmann::json expected_content = nlohmann::json::parse(R"x([
    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
    {"type":"text","text":"look"},
    {"type":"text","text":"Attached files (read them as needed):\n- /srv/repo/notes.md\n- /srv/repo/huge.png (the image is too large to inline)"}
  ])x");
  CHECK(message["message"]["content"] == expected_content);
}

TEST_CASE("claude messages: an empty prompt sends no empty text block", "[claude][messages]") {
  PreparedAttachment image;
  image.path = "/tmp/a.gif";
  image.media_type = "image/gif";
  image.base64_data = "R0lG";
  CHECK(user_message("", {image})["message"]["content"].size() == 1);
  CHECK(user_message("")["message"]["content"] == nlohmann::json::parse(R"([{"type":"text","text":" "}])"));
}

TEST_CASE("claude messages: permission answers echo the input or carry a reason", "[claude][messages]") {
  const auto request = bash_request();
  CHECK(to_line(permission_response(request, adapters::PermissionAnswer{true, std::nullopt})) ==
        R"({"response":{"request_id":"req-7","response":{"behavior":"allow","updatedInput":{"command":"make","description":"Build"}},"subtype":"success"},"type":"control_response"})"
        "\n");
  CHECK(permission_response(request, adapters::PermissionAnswer{false, std::string("not now")}) ==
        nlohmann::json::parse(R"({"type":"control_response","response":{"subtype":"success","request_id":"req-7",
                                  "response":{"behavior":"deny","message":"not now"}}})"));
  CHECK(permission_response(request, adapters::PermissionAnswer{false, std::nullopt})["response"]["response"]["message"] ==
        "The user denied permission to use Bash.");
  ToolRequest plan;
  plan.request_id = "plan-1";
  plan.kind = ToolRequestKind::PlanApproval;
  plan.tool = "ExitPlanMode";
  plan.input = {{"plan", "do it"}};
  CHECK(permission_response(plan, adapters::PermissionAnswer{false, std::nullopt})["response"]["response"]["message"] ==
        "The user did not approve the plan. Stay in plan mode and revise it.");
  CHECK(permission_response(plan, adapters::PermissionAnswer{true, std::nullopt})["response"]["response"] ==
        nlohmann::json::parse(R"({"behavior":"allow","updatedInput":{"plan":"do it"}})"));
}

TEST_CASE("claude messages: question answers are keyed by question text, missing answers are left out, rejection denies", "[claude][messages]") {
  ToolRequest request;
  request.request_id = "q-1";
  request.kind = ToolRequestKind::Question;
  request.tool = "AskUserQuestion";
  request.input = nlohmann::json::parse(R"({"questions":[{"question":"A?"},{"header":"skipped: no text"},{"question":"B?"},{"question":"C?"}]})");
  const auto answered = question_response(request, adapters::QuestionAnswer{false, {"yes", "no"}});
  CHECK(answered["response"]["response"]["behavior"] == "allow");
  CHECK(answered["response"]["response"]["updatedInput"]["answers"] == nlohmann::json{{"A?", "yes"}, {"B?", "no"}});
  CHECK(answered["response"]["response"]["updatedInput"]["questions"] == request.input["questions"]);
  CHECK(to_line(question_response(request, adapters::QuestionAnswer{true, {}})) ==
        R"({"response":{"request_id":"q-1","response":{"behavior":"deny","message":"The user declined to answer."},"subtype":"success"},"type":"control_response"})"
        "\n");
}

TEST_CASE("claude messages: control requests and the error reply have the exact wire shape", "[claude][messages]") {
  CHECK(to_line(initialize_request("init-1")) == R"({"request":{"subtype":"initialize"},"request_id":"init-1","type":"control_request"})" "\n");
  CHECK(to_line(interrupt_request("intr-1")) == R"({"request":{"subtype":"interrupt"},"request_id":"intr-1","type":"control_request"})" "\n");
  CHECK(to_line(set_permission_mode_request("ctl-1", "acceptEdits")) ==
        R"({"request":{"mode":"acceptEdits","subtype":"set_permission_mode"},"request_id":"ctl-1","type":"control_request"})" "\n");
  CHECK(to_line(set_model_request("ctl-2", "claude-sonnet-mock")) ==
        R"({"request":{"model":"claude-sonnet-mock","subtype":"set_model"},"request_id":"ctl-2","type":"control_request"})" "\n");
  CHECK(to_line(control_error("hook-1", "hooks are not supported")) ==
        R"({"response":{"error":"hooks are not supported","request_id":"hook-1","subtype":"error"},"type":"control_response"})" "\n");
}

TEST_CASE("claude messages: lines never throw on invalid UTF-8", "[claude][messages]") {
  const std::string line = to_line(user_message(std::string("bad \xff byte")));
  CHECK(line.find("bad \xEF\xBF\xBD byte") != std::string::npos);
}

TEST_CASE("claude messages: permission modes are Claude's five", "[claude][messages]") {
  for (const char* mode : {"default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"}) CHECK(is_permission_mode(mode));
  CHECK_FALSE(is_permission_mode("yolo"));
  CHECK_FALSE(is_permission_mode(""));
}

// ---- attachments ---------------------------------------------------------------------------------------------------

TEST_CASE("claude attachments: base64 follows RFC 4648", "[claude][messages]") {
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob") == "Zm9vYg==");
  CHECK(base64_encode("fooba") == "Zm9vYmE=");
  CHECK(base64_encode("foobar") == "Zm9vYmFy");
  CHECK(base64_encode(std::string("\xff\xfe\x00", 3)) == "//4A");
}

TEST_CASE("claude attachments: images are recognized by their first bytes", "[claude][messages]") {
  CHECK(sniff_image_type(std::string("\x89PNG\r\n\x1a\n....", 12)) == std::optional<std::string>("image/png"));
  CHECK(sniff_image_type("\xff\xd8\xff\xe0") == std::optional<std::string>("image/jpeg"));
  CHECK(sniff_image_type("GIF89a") == std::optional<std::string>("image/gif"));
  CHECK(sniff_image_type("RIFF\x10\x00\x00\x00WEBP") == std::nullopt);  // "\x00" ends the C string: too short
  CHECK(sniff_image_type(std::string("RIFF\x10\x00\x00\x00WEBP", 12)) == std::optional<std::string>("image/webp"));
  CHECK(sniff_image_type("%PDF-1.7") == std::nullopt);
  CHECK(sniff_image_type("") == std::nullopt);
}

TEST_CASE("claude attachments: images are read and encoded, other and unreadable files are referenced by path", "[claude][messages]") {
  testing::TempDir dir{"claude-messages"};
  const std::string png_bytes = std::string("\x89PNG\r\n\x1a\n", 8) + "pixels";
  const std::string png = write_file(dir, "shot.dat", png_bytes);  // the name does not matter, the bytes do
  const std::string text = write_file(dir, "notes.png", "just text");
  const std::string big = write_file(dir, "big.gif", "GIF89a" + std::string(100, 'x'));
  const std::string missing = (dir.path() / "missing.png").string();
  const auto prepared = prepare_attachments({{png, std::nullopt}, {text, std::string("image/png")}, {big, std::nullopt}, {missing, std::nullopt}},
                                            /*max_image_bytes=*/64);
  REQUIRE(prepared.size() == 4);
  CHECK(prepared[0].media_type == std::optional<std::string>("image/png"));
  CHECK(prepared[0].base64_data == base64_encode(png_bytes));
  CHECK_FALSE(prepared[1].media_type);
  CHECK_FALSE(prepared[1].note);
  CHECK_FALSE(prepared[2].media_type);
  CHECK(prepared[2].note == std::optional<std::string>("the image is too large to inline"));
  CHECK(prepared[3].path == missing);
  CHECK_FALSE(prepared[3].media_type);
}

// ---- launching ---------------------------------------------------------------------------------------------------

TEST_CASE("claude launch: the command line is duplex stream-json with stdio permission prompts", "[claude][messages]") {
  CHECK(command_line(LaunchOptions{}) ==
        std::vector<std::string>{"claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                                 "--include-partial-messages", "--permission-prompt-tool", "stdio"});
  LaunchOptions options;
  options.executable = "/opt/claude/bin/claude";
  options.model = "claude-sonnet-mock";
  options.permission_mode = "plan";
  options.resume_session_id = "7584fa35-b0cd-4230-bd5d-2e432322c9c7";
  const auto argv = command_line(options);
  CHECK(argv.front() == "/opt/claude/bin/claude");
  CHECK(std::vector<std::string>(argv.begin() + 10, argv.end()) ==
        std::vector<std::string>{"--resume", "7584fa35-b0cd-4230-bd5d-2e432322c9c7", "--model", "claude-sonnet-mock",
                                 "--permission-mode", "plan"});
  // A fork of that conversation: the same resume, and the flag that gives the copy an id of its own.
  options.fork_session = true;
  const auto forked = command_line(options);
  CHECK(std::vector<std::string>(forked.begin() + 10, forked.begin() + 13) ==
        std::vector<std::string>{"--resume", "7584fa35-b0cd-4230-bd5d-2e432322c9c7", "--fork-session"});
  // Whole messages only (no client shows text as it streams): the one flag goes, nothing else changes.
  LaunchOptions whole;
  whole.partial_messages = false;
  CHECK(command_line(whole) == std::vector<std::string>{"claude", "-p", "--input-format", "stream-json", "--output-format",
                                                        "stream-json", "--verbose", "--permission-prompt-tool", "stdio"});
}

TEST_CASE("claude launch: the environment points the CLI at the provider and switches off everything else", "[claude][messages]") {
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:8765";
  endpoint.api_key = "test";
  endpoint.config_dir = "/var/lib/switchboard/claude";
  const auto changes = environment_for(endpoint);
  CHECK(changes.set == std::vector<std::pair<std::string, std::string>>{
                           {"DISABLE_AUTOUPDATER", "1"},
                           {"DISABLE_TELEMETRY", "1"},
                           {"DISABLE_ERROR_REPORTING", "1"},
                           {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"},
                           {"ANTHROPIC_BASE_URL", "http://127.0.0.1:8765"},
                           {"ANTHROPIC_API_KEY", "test"},
                           {"CLAUDE_CONFIG_DIR", "/var/lib/switchboard/claude"}});
  CHECK(changes.unset == std::vector<std::string>{"NODE_OPTIONS", "CLAUDECODE", "ANTHROPIC_AUTH_TOKEN"});

  endpoint.key_as_bearer_token = true;
  const auto bearer = environment_for(endpoint);
  CHECK(std::find(bearer.set.begin(), bearer.set.end(), std::pair<std::string, std::string>{"ANTHROPIC_AUTH_TOKEN", "test"}) != bearer.set.end());
  CHECK(bearer.unset.back() == "ANTHROPIC_API_KEY");

  // With nothing configured, the user's own login stays in charge.
  const auto own = environment_for(ProviderEndpoint{});
  CHECK(own.set.size() == 4);
  CHECK(own.unset == std::vector<std::string>{"NODE_OPTIONS", "CLAUDECODE"});
}

TEST_CASE("claude launch: applying the environment replaces and removes inherited variables and keeps the rest", "[claude][messages]") {
  const std::vector<std::string> inherited{"PATH=/usr/bin", "HOME=/root", "ANTHROPIC_API_KEY=real-key", "ANTHROPIC_AUTH_TOKEN=real-token",
                                           "NODE_OPTIONS=--inspect", "CLAUDECODE=1", "DISABLE_TELEMETRY=0", "EMPTY="};
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:1";
  endpoint.api_key = "test";
  const auto child = apply_environment(inherited, environment_for(endpoint));
  CHECK(child == std::vector<std::string>{"PATH=/usr/bin", "HOME=/root", "EMPTY=", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1",
                                          "DISABLE_ERROR_REPORTING=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                                          "ANTHROPIC_BASE_URL=http://127.0.0.1:1", "ANTHROPIC_API_KEY=test"});
}

TEST_CASE("claude launch: the version probe and its output", "[claude][messages]") {
  CHECK(switchboard::adapters::version_command("claude") == std::vector<std::string>{"claude", "--version"});
  CHECK(parse_version_output("2.1.197 (Claude Code)\n") == std::optional<std::string>("2.1.197"));
  CHECK(parse_version_output("\n2.1.332\n") == std::optional<std::string>("2.1.332"));
  CHECK(parse_version_output("Error: claude native binary not installed.") == std::nullopt);
  CHECK(parse_version_output("") == std::nullopt);
  CHECK(parse_version_output("7 (odd)") == std::nullopt);
}

TEST_CASE("claude messages: the models of the recorded initialize answer, the CLI's own default marked", "[claude][messages]") {
  const auto lines = testing::claude_fixture_lines("text.ndjson");
  REQUIRE_FALSE(lines.empty());
  const auto answer = nlohmann::json::parse(lines.front());
  REQUIRE(answer["type"] == "control_response");
  const auto models = offered_models(answer["response"]["response"]);
  REQUIRE(models.size() == 5);
  CHECK(models[0].id == "default");
  CHECK(models[0].name == "Default (recommended)");
  CHECK(models[0].is_default == true);
  CHECK(models[2].id == "sonnet");
  CHECK(models[2].name == "Sonnet");
  CHECK_FALSE(models[2].is_default.has_value());
  CHECK(models[4].id == "haiku");
  REQUIRE(models[4].description);
  CHECK(models[4].description->find("Haiku") != std::string::npos);
  // An answer without a list, or with one of another shape, offers none.
  CHECK(offered_models(nlohmann::json::object()).empty());
  CHECK(offered_models(nlohmann::json{{"models", "sonnet"}}).empty());
  CHECK(offered_models(nlohmann::json{{"models", {{{"displayName", "no value"}}, {{"value", 7}}}}}).empty());
}

}  // namespace claude_messages_tests
