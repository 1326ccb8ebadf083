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

TEST_CASE("Codex requests carry our ids from 1 and no jsonrpc member", "[codex]") {
  CodexRequests requests;
  const auto init = requests.initialize("switchboard", "0.1.0");
  CHECK(init.id == 1);
  CHECK(init.kind == RequestKind::Initialize);
  CHECK(init.message == Json::parse(R"({"method":"initialize","id":1,"params":{"clientInfo":{"name":"switchboard","version":"0.1.0"},
                                        "capabilities":{"experimentalApi":false}}})"));
  CHECK_FALSE(init.message.contains("jsonrpc"));
  CHECK(initialized_notification() == Json::parse(R"({"method":"initialized","params":{}})"));

  ThreadOptions options;
  options.cwd = "/work";
  options.policy = *policy_for_mode("untrusted");
  const auto start = requests.thread_start(options);
  CHECK(start.id == 2);
  CHECK(start.message == Json::parse(R"({"method":"thread/start","id":2,"params":{"cwd":"/work","approvalPolicy":"untrusted","sandbox":"workspace-write"}})"));

  options.model = "gpt-5.5";
  const auto resume = requests.thread_resume("thr", options);
  CHECK(resume.kind == RequestKind::ThreadResume);
  CHECK(resume.message["params"] == Json::parse(R"({"threadId":"thr","excludeTurns":true,"cwd":"/work","approvalPolicy":"untrusted",
                                                   "sandbox":"workspace-write","model":"gpt-5.5"})"));

  const auto turn = requests.turn_start("thr", "hi", {}, std::nullopt, std::nullopt);
  CHECK(turn.message == Json::parse(R"({"method":"turn/start","id":4,"params":{"threadId":"thr","input":[{"type":"text","text":"hi"}]}})"));
  const auto switched = requests.turn_start("thr", "go", {}, policy_for_mode("read-only"), std::string("o3"));
  CHECK(switched.message["params"]["approvalPolicy"] == "on-request");
  CHECK(switched.message["params"]["sandboxPolicy"] == Json{{"type", "readOnly"}});
  CHECK(switched.message["params"]["model"] == "o3");

  const auto interrupt = requests.turn_interrupt("thr", "turn-1");
  CHECK(interrupt.message == Json::parse(R"({"method":"turn/interrupt","id":6,"params":{"threadId":"thr","turnId":"turn-1"}})"));

  const auto fork = requests.thread_fork("thr", options);
  CHECK(fork.kind == RequestKind::ThreadFork);
  CHECK(fork.message == Json::parse(R"({"method":"thread/fork","id":7,"params":{"threadId":"thr","excludeTurns":true,"cwd":"/work",
                                        "approvalPolicy":"untrusted","sandbox":"workspace-write","model":"gpt-5.5"}})"));
  CHECK(requests.last_id() == 7);
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

TEST_CASE("Codex approval answers echo Codex's id", "[codex]") {
  CHECK(approval_response(0, ApprovalDecision::Accept) == Json::parse(R"({"id":0,"result":{"decision":"accept"}})"));
  CHECK(approval_response("a", ApprovalDecision::AcceptForSession) ==
        Json::parse(R"({"id":"a","result":{"decision":"acceptForSession"}})"));
  CHECK(approval_response(3, ApprovalDecision::Decline)["result"]["decision"] == "decline");
  CHECK(approval_response(3, ApprovalDecision::Cancel)["result"]["decision"] == "cancel");
  CHECK(to_line(approval_response(0, ApprovalDecision::Accept)) == "{\"id\":0,\"result\":{\"decision\":\"accept\"}}\n");
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
  CHECK(toml.rfind(std::string(kConfigMarker) + "\n", 0) == 0);
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
  CHECK(escape_glob("a*b?[c]\\") == "a\\*b\\?\\[c\\]\\\\");
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

}  // namespace codex_messages_tests
