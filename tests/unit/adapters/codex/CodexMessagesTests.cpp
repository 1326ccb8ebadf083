#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "codex/CodexLaunch.h"
#include "codex/CodexMessages.h"
#include "codex/CodexPermissions.h"
#include "common/VersionProbe.h"

namespace codex_messages_tests {

using namespace switchboard;
using namespace switchboard::adapters::codex;
using Json = nlohmann::json;

TEST_CASE("Codex request params are always objects and carry the thread's policy", "[codex]") {
  // The ids and the envelope are the endpoint's (kRpcOptions); the recorded scenarios check them line for line.
  CHECK(initialize_params("switchboard", "0.1.0") ==
        Json::parse(R"({"clientInfo":{"name":"switchboard","version":"0.1.0"},"capabilities":{"experimentalApi":false}})"));
  CHECK_FALSE(kRpcOptions.send_jsonrpc_member);

  ThreadOptions options;
  options.cwd = "/srv/repo";
  options.policy = *policy_for_mode("untrusted");
  CHECK(thread_params(options) == Json::parse(R"({"cwd":"/srv/repo","approvalPolicy":"untrusted","sandbox":"workspace-write",
                                                   "config":{"tools":{"update_plan":{"enabled":true}}}})"));
  CHECK(thread_params(ThreadOptions{}).is_object());

  options.model = "gpt-5.5";
  CHECK(reopen_thread_params("thr", options) == Json::parse(R"({"threadId":"thr","excludeTurns":true,"cwd":"/srv/repo","approvalPolicy":"untrusted",
                                                                "sandbox":"workspace-write","model":"gpt-5.5","config":{"tools":{"update_plan":{"enabled":true}}}})"));
  CHECK(fork_thread_params("thr", options, std::nullopt) == reopen_thread_params("thr", options));
  CHECK(fork_thread_params("thr", options, std::string("turn-2"))["lastTurnId"] == "turn-2");

  CHECK(turn_start_params("thr", "hi", {}, TurnChanges{}) == Json::parse(R"({"threadId":"thr","input":[{"type":"text","text":"hi"}]})"));
  const auto switched = turn_start_params("thr", "go", {}, TurnChanges{policy_for_mode("read-only"), std::string("o3"), std::string("high")});
  CHECK(switched["approvalPolicy"] == "on-request");
  CHECK(switched["sandboxPolicy"] == Json{{"type", "readOnly"}});
  CHECK(switched["model"] == "o3");
  CHECK(switched["effort"] == "high");

  CHECK(turn_interrupt_params("thr", "turn-1") == Json::parse(R"({"threadId":"thr","turnId":"turn-1"})"));
  CHECK(thread_revert_params("thr", "turn-1") == Json::parse(R"({"threadId":"thr","beforeTurnId":"turn-1"})"));
}

TEST_CASE("Codex MCP servers go into the thread's config in Codex's own form", "[codex]") {
  protocol::McpServer stdio;
  stdio.name = "echo";
  stdio.transport = protocol::McpTransport::Stdio;
  stdio.command = "python3";
  stdio.args = std::vector<std::string>{"server.py", "--flag"};
  stdio.env = Json{{"TOKEN", "t"}};
  protocol::McpServer http;
  http.name = "remote";
  http.transport = protocol::McpTransport::Http;
  http.url = "http://127.0.0.1:9/mcp";
  http.headers = Json{{"Authorization", "Bearer x"}};
  CHECK(thread_config({stdio, http}) == Json::parse(R"({"tools":{"update_plan":{"enabled":true}},"mcp_servers":{
      "echo":{"command":"python3","args":["server.py","--flag"],"env":{"SWITCHBOARD_CODEX_API_KEY":"","TOKEN":"t"}},
      "remote":{"url":"http://127.0.0.1:9/mcp","http_headers":{"Authorization":"Bearer x"}}},
      "mcp_optional_startup_grace_ms":30000})"));
}

TEST_CASE("Codex skills become commands and a skill turn names the skill as Codex's composer does", "[codex]") {
  const auto listed = Json::parse(R"({"data":[
      {"cwd":"/a","errors":[],"skills":[
        {"name":"imagegen","description":"Make images","path":"/h/skills/imagegen/SKILL.md","scope":"system","enabled":true},
        {"name":"off","description":"Disabled","path":"/h/skills/off/SKILL.md","scope":"user","enabled":false},
        {"name":"nodesc","description":"","shortDescription":"Short","path":"/h/nodesc/SKILL.md","scope":"repo","enabled":true}]},
      {"cwd":"/b","errors":[],"skills":[
        {"name":"imagegen","description":"Again","path":"/other/SKILL.md","scope":"system","enabled":true}]}]})");
  const auto skills = offered_skills(listed);
  REQUIRE(skills.size() == 2);
  CHECK(skills[0].command.name == "imagegen");
  CHECK(skills[0].command.description == "Make images");
  CHECK(skills[0].path == "/h/skills/imagegen/SKILL.md");
  CHECK(skills[1].command.description == "Short");
  CHECK(offered_skills(Json::object()).empty());

  const auto turn = turn_start_params("thr", "$imagegen a cat", {}, TurnChanges{}, SkillRef{"imagegen", "/h/skills/imagegen/SKILL.md"});
  CHECK(turn["input"] == Json::parse(R"([{"type":"text","text":"$imagegen a cat"},
                                         {"type":"skill","name":"imagegen","path":"/h/skills/imagegen/SKILL.md"}])"));
}

TEST_CASE("Codex reasoning efforts come from the thread's model, else the default model", "[codex]") {
  const auto listed = Json::parse(R"({"data":[
      {"model":"gpt-a","isDefault":false,"defaultReasoningEffort":"low",
       "supportedReasoningEfforts":[{"reasoningEffort":"low","description":"Fast"},{"reasoningEffort":"high","description":"Deep"}]},
      {"model":"gpt-b","isDefault":true,"defaultReasoningEffort":"medium",
       "supportedReasoningEfforts":[{"reasoningEffort":"low","description":""},{"reasoningEffort":"medium","description":""},
                                    {"reasoningEffort":"xhigh","description":""}]}]})");
  const auto own = reasoning_efforts(listed, std::string("gpt-a"));
  REQUIRE(own);
  REQUIRE(own->values.size() == 2);
  CHECK(own->values[1].value == "high");
  CHECK(own->values[1].description == "Deep");
  CHECK(own->default_value == "low");
  const auto unknown = reasoning_efforts(listed, std::string("mock-model"));
  REQUIRE(unknown);
  CHECK(unknown->values.size() == 3);
  CHECK(unknown->default_value == "medium");
  CHECK_FALSE(reasoning_efforts(Json::object(), std::nullopt));

  const auto option = effort_option(*unknown, "");
  CHECK(option.id == "effort");
  CHECK(option.kind == protocol::SessionOptionKind::Select);
  CHECK(option.current_value == "medium");
  CHECK(effort_option(*unknown, "xhigh").current_value == "xhigh");
}

TEST_CASE("Codex modes map onto approval policy and sandbox", "[codex]") {
  CHECK(policy_for_mode("auto")->approval_policy == "on-request");
  CHECK(policy_for_mode("auto")->sandbox == "workspace-write");
  CHECK(policy_for_mode("full-access")->approval_policy == "never");
  CHECK(policy_for_mode("full-access")->sandbox == "danger-full-access");
  CHECK(policy_for_mode("read-only")->sandbox == "read-only");
  CHECK_FALSE(policy_for_mode("bypassPermissions"));
  CHECK(policy_for_mode(kDefaultMode));
}

TEST_CASE("Codex approval answers name the decision", "[codex]") {
  CHECK(approval_result(ApprovalDecision::Accept) == Json::parse(R"({"decision":"accept"})"));
  CHECK(approval_result(ApprovalDecision::AcceptForSession) == Json::parse(R"({"decision":"acceptForSession"})"));
  CHECK(approval_result(ApprovalDecision::Decline)["decision"] == "decline");
  CHECK(approval_result(ApprovalDecision::Cancel)["decision"] == "cancel");
}

TEST_CASE("Codex turn input puts images as local images and names other files", "[codex]") {
  std::vector<protocol::Attachment> attachments{{"/a/shot.PNG", std::nullopt}, {"/a/notes.md", std::nullopt},
                                                {"/a/blob", std::string("image/webp")}};
  CHECK(turn_input("look", attachments) == Json::parse(R"([{"type":"text","text":"look"},
      {"type":"localImage","path":"/a/shot.PNG"},{"type":"localImage","path":"/a/blob"},
      {"type":"text","text":"Attached files (read them as needed):\n- /a/notes.md"}])"));
}

TEST_CASE("Codex launch command and version probe", "[codex]") {
  CHECK(command_line("/x/codex") == std::vector<std::string>{"/x/codex", "app-server"});
  CHECK(switchboard::adapters::version_command("codex") == std::vector<std::string>{"codex", "--version"});
  CHECK(parse_version_output("codex-cli 0.171.0\n") == std::optional<std::string>("0.171.0"));
  CHECK_FALSE(parse_version_output("WARNING: something"));
  CHECK_FALSE(parse_version_output(""));
}

TEST_CASE("Codex private config names our provider and turns off outside traffic", "[codex]") {
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:9/v1";
  endpoint.api_key = "sk-test";
  endpoint.model = "mock \"model\"";
  const std::string toml = config_toml(endpoint);
  CHECK(toml.starts_with(kConfigMarker));
  CHECK(toml.substr(kConfigMarker.size(), 1) == "\n");
  CHECK(toml.find("model = \"mock \\\"model\\\"\"\n") != std::string::npos);
  CHECK(toml.find("model_provider = \"switchboard\"") != std::string::npos);
  CHECK(toml.find("base_url = \"http://127.0.0.1:9/v1\"") != std::string::npos);
  CHECK(toml.find("env_key = \"SWITCHBOARD_CODEX_API_KEY\"") != std::string::npos);
  CHECK(toml.find("wire_api = \"responses\"") != std::string::npos);
  CHECK(toml.find("check_for_update_on_startup = false") != std::string::npos);
  CHECK(toml.find("[analytics]\nenabled = false") != std::string::npos);
  CHECK(toml.find("plugins = false") != std::string::npos);
  CHECK(toml.find("unbounded_connection_retries = false") != std::string::npos);
  CHECK(toml.find("sk-test") == std::string::npos);  // the key travels in the environment only
  endpoint.api_key.reset();
  CHECK(config_toml(endpoint).find("env_key") == std::string::npos);
  CHECK(toml_string("a\\b\n\x01") == "\"a\\\\b\\n\\u0001\"");
}

TEST_CASE("Codex private home is written but never the user's own", "[codex]") {
  const auto root = std::filesystem::temp_directory_path() / ("sb-codex-home-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  ProviderEndpoint endpoint;
  endpoint.base_url = "http://127.0.0.1:9/v1";

  SECTION("the user's ~/.codex and the inherited CODEX_HOME are refused") {
    endpoint.codex_home = root / "home" / ".codex";
    CHECK(write_private_home(endpoint, (root / "home").string(), std::nullopt));
    endpoint.codex_home = root / "elsewhere";
    CHECK(write_private_home(endpoint, (root / "home").string(), (root / "elsewhere/").string()));
    CHECK_FALSE(std::filesystem::exists(root / "elsewhere" / "config.toml"));
  }
  SECTION("written, rewritten, and a foreign config.toml is left alone") {
    endpoint.codex_home = root / "private";
    CHECK_FALSE(write_private_home(endpoint, (root / "home").string(), std::nullopt));
    CHECK(std::filesystem::exists(root / "private" / "config.toml"));
    endpoint.base_url = "http://127.0.0.1:10/v1";
    CHECK_FALSE(write_private_home(endpoint, (root / "home").string(), std::nullopt));
    std::ifstream in(root / "private" / "config.toml");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("127.0.0.1:10") != std::string::npos);

    std::filesystem::create_directories(root / "theirs");
    std::ofstream(root / "theirs" / "config.toml") << "model = \"o3\"\n";
    endpoint.codex_home = root / "theirs";
    const auto refused = write_private_home(endpoint, std::nullopt, std::nullopt);
    REQUIRE(refused);
    CHECK(refused->find("did not write") != std::string::npos);
  }
  std::filesystem::remove_all(root);
}

TEST_CASE("Codex environment sets the private home and the key or removes the key", "[codex]") {
  CHECK(environment_for(std::nullopt).set == std::vector<std::pair<std::string, std::string>>{{"RUST_LOG", "warn"}});
  ProviderEndpoint endpoint;
  endpoint.codex_home = "/p/home";
  endpoint.api_key = "k";
  auto changes = environment_for(endpoint);
  CHECK(changes.set == std::vector<std::pair<std::string, std::string>>{
                           {"RUST_LOG", "warn"}, {"CODEX_HOME", "/p/home"}, {"SWITCHBOARD_CODEX_API_KEY", "k"}});
  endpoint.api_key.reset();
  changes = environment_for(endpoint);
  CHECK(changes.unset == std::vector<std::string>{"SWITCHBOARD_CODEX_API_KEY"});
}

TEST_CASE("Codex shell commands are unwrapped from the login shell", "[codex]") {
  CHECK(unwrap_shell_command("/bin/bash -lc 'echo hi'") == "echo hi");
  CHECK(unwrap_shell_command("bash -c 'it'\\''s'") == "it's");
  CHECK(unwrap_shell_command("/bin/zsh -lc 'a && b'") == "a && b");
  CHECK(unwrap_shell_command("/bin/bash -lc 'unterminated") == "/bin/bash -lc 'unterminated");
  CHECK(unwrap_shell_command("/bin/bash -lc 'a' 'b'") == "/bin/bash -lc 'a' 'b'");
  CHECK(unwrap_shell_command("ls -la") == "ls -la");
}

TEST_CASE("Codex approval asks for network access and for files with a grant", "[codex]") {
  const auto network = command_approval_ask(Json::parse(R"({"threadId":"t","turnId":"u","itemId":"i","kind":"network",
      "networkApprovalContext":{"host":"pypi.org","protocol":"https"}})"));
  CHECK(network.subject == "pypi.org");
  CHECK(network.description == "Allow network access to pypi.org");
  CHECK(network.input == Json{{"host", "pypi.org"}, {"protocol", "https"}});

  const auto changes = Json::parse(R"([{"path":"/w/a.txt","kind":{"type":"update","move_path":"/w/b.txt"},"diff":"-a\n+b\n"},
                                       {"path":"/w/c.txt","kind":{"type":"delete"},"diff":""}])");
  const auto two = file_change_approval_ask(Json::parse(R"({"itemId":"i","reason":"tidy up"})"), changes);
  CHECK(two.description == "Edit /w/a.txt, /w/c.txt");
  CHECK(two.subject.empty());
  CHECK_FALSE(two.suggested_rule);
  CHECK(two.reason == "tidy up");
  CHECK(two.input["changes"][0]["movePath"] == "/w/b.txt");

  const auto grant = file_change_approval_ask(Json::parse(R"({"itemId":"i","grantRoot":"/w"})"), Json::array({changes[0]}));
  CHECK(grant.description == "Edit /w/a.txt and allow writing under /w for the rest of the session");
  CHECK(grant.subject.empty());

  const auto unseen = file_change_approval_ask(Json::parse(R"({"itemId":"i"})"), nullptr);
  CHECK(unseen.description == "Edit files");
}

TEST_CASE("Codex error text unwraps provider bodies and knows fatal errors", "[codex]") {
  CHECK(error_text(Json::parse(R"({"message":"{\"error\": {\"message\": \"bad\"}}"})")) == "bad");
  CHECK(error_text(Json::parse(R"({"message":"plain","additionalDetails":"more"})")) == "plain (more)");
  CHECK(error_text(Json::object()) == "Codex reported an error without a message");
  CHECK(is_fatal_error(Json::parse(R"({"message":"x","codexErrorInfo":"unauthorized"})")));
  CHECK_FALSE(is_fatal_error(Json::parse(R"({"message":"x","codexErrorInfo":{"httpConnectionFailed":{}}})")));
}

TEST_CASE("Codex model/list: the shown models as turn/start names them, the catalogue's default marked", "[codex]") {
  CHECK(model_list_params() == Json{{"limit", kModelListPage}});
  // Shaped as the answer captured from codex app-server 0.171 (fields trimmed to those read, plus a hidden one).
  const auto answer = Json::parse(R"({"data":[
      {"id":"gpt-6.2-sol","model":"gpt-6.2-sol","displayName":"GPT-6.2-Sol","description":"Fast, go-to model for coding and everyday work.","hidden":false,"isDefault":true},
      {"id":"preset-2","model":"gpt-6.2-mini","displayName":"GPT-6.2-Mini","description":"Smaller.","hidden":false,"isDefault":false},
      {"id":"secret","model":"gpt-internal","displayName":"Internal","hidden":true,"isDefault":false},
      {"id":"no-model","displayName":"Broken"}],"nextCursor":null})");
  const auto models = offered_models(answer);
  REQUIRE(models.size() == 2);
  CHECK(models[0].id == "gpt-6.2-sol");
  CHECK(models[0].name == "GPT-6.2-Sol");
  CHECK(models[0].is_default == true);
  CHECK(models[1].id == "gpt-6.2-mini");
  CHECK(models[1].description == "Smaller.");
  CHECK_FALSE(models[1].is_default.has_value());
  CHECK(offered_models(Json{{"data", nullptr}}).empty());
}

}  // namespace codex_messages_tests
