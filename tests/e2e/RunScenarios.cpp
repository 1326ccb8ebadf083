#include "e2e/RunScenarios.h"

#include <catch2/catch.hpp>

#include <set>
#include <sstream>

#include "support/RawHttpClient.h"
#include "support/RunProcess.h"
#include "support/RuntimeFile.h"
#include "support/SchemaValidator.h"

namespace switchboard::testing::e2e {
namespace run_scenarios_detail {

// A whole turn of a real CLI, on a shared machine: generous.
constexpr auto kRunPatience = std::chrono::seconds(120);

std::vector<std::string> run_args(const AgentWorld& world, std::vector<std::string> extra) {
  std::vector<std::string> args{"--log-level", "info", "--data-dir", (world.tmp.path() / "data").string(), "run",
                                "--agent", world.profile.agent, "--cwd", world.work.string(),
                                "--mode", world.profile.asking_mode, "--timeout", "100s"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> environment(const AgentWorld& world) {
  return world.profile.environment(world.tmp.path() / "home", world.mock->base_url(), world.binary);
}

}  // namespace run_scenarios_detail

void scenario_run_calls_tool_and_prints_final_text(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("echo run-e2e-marker > from_the_tool.txt"),
                                         profile.after_tool_output("The tool wrote the file.")}));
  if (!world.ready()) return;
  RunProcess run(world.tmp.path(), run_scenarios_detail::run_args(world, {"--on-ask", "allow", "write the file"}), run_scenarios_detail::environment(world));
  REQUIRE(run.started());
  const auto outcome = run.wait(run_scenarios_detail::kRunPatience);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit == 0);
  CHECK(outcome.out == "The tool wrote the file.\n");  // the final message, alone
  CHECK(outcome.err.find("▸ " + profile.shell_tool) != std::string::npos);  // the tool call, in the progress
  CHECK(read_text_file(world.work / "from_the_tool.txt") == "run-e2e-marker\n");
  // The run hosted its own daemon: nothing it started is left.
  CHECK(eventually([&] { return processes_working_in(world.work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
}

void scenario_run_attached_to_serve_delegates_its_permission(const AgentProfile& profile) {
  AgentWorld world(profile, Json::array({profile.run_command("touch delegated.txt && echo made"),
                                         profile.after_tool_output("Made it.")}));
  if (!world.ready()) return;
  const auto serve = world.spawn_serve();
  const auto runtime = wait_for_runtime_file(world.tmp.path() / "data");
  REQUIRE(runtime.contains("port"));
  const auto port = runtime.at("port").get<std::uint16_t>();
  const std::string authorization = "Authorization: Bearer " + runtime.at("token").get<std::string>();
  RawHttpClient sse(port, 60000);
  REQUIRE(sse.send_request("GET", "/events", {authorization}));
  RawHttpClient::Response head;
  REQUIRE(sse.read_head(head));
  REQUIRE(sse.read_frame());  // the retry hint

  RunProcess run(world.tmp.path(), run_scenarios_detail::run_args(world, {"--on-ask", "delegate", "--output", "ndjson", "make the file"}),
                 run_scenarios_detail::environment(world));
  REQUIRE(run.started());
  // The browser sees the run's ask and answers it.
  std::vector<std::string> seen;  // SSE data, in order
  std::string request_id;
  while (request_id.empty()) {
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto at = frame->find("data: ");
    if (at == std::string::npos) continue;
    seen.push_back(frame->substr(at + 6));
    const auto event = Json::parse(seen.back(), nullptr, false);
    if (event.value("type", "") == "permission.requested") request_id = event["data"]["request"]["requestId"];
  }
  RawHttpClient browser(port);
  const auto answered = browser.request("POST", "/rpc", {authorization, "Content-Type: application/json"},
                                        Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "permission.respond"},
                                             {"params", {{"requestId", request_id}, {"decision", "allow_once"}}}}.dump());
  REQUIRE(answered.complete);
  CHECK(Json::parse(answered.body).contains("result"));

  const auto outcome = run.wait(run_scenarios_detail::kRunPatience);
  INFO("stderr: " << outcome.err);
  CHECK(outcome.exit == 0);
  std::vector<std::string> lines;
  std::istringstream in(outcome.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() >= 2);
  const auto result = Json::parse(lines.back());
  REQUIRE(result.value("type", "") == "run.result");
  CHECK(result["data"]["attached"] == true);
  CHECK(result["data"]["text"] == "Made it.");
  REQUIRE(result["data"]["permissions"].size() == 1);
  CHECK(result["data"]["permissions"][0]["resolvedBy"] == "client");
  CHECK(result["data"]["permissions"][0]["outcome"] == "allowed");
  CHECK(fs::exists(world.work / "delegated.txt"));

  // Every event line of the run is an SSE frame's data, byte for byte (so the seqs are the same).
  const auto last_seq = Json::parse(lines[lines.size() - 2])["seq"].get<std::int64_t>();
  for (;;) {
    const auto event = Json::parse(seen.back(), nullptr, false);
    if (event.is_object() && event.value("seq", std::int64_t{0}) >= last_seq) break;
    const auto frame = sse.read_frame();
    REQUIRE(frame);
    const auto at = frame->find("data: ");
    if (at != std::string::npos) seen.push_back(frame->substr(at + 6));
  }
  const std::set<std::string> frames(seen.begin(), seen.end());
  static const SchemaValidator validator;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK(frames.count(lines[i]) == 1);
    CHECK(validator.validate_event(Json::parse(lines[i])).empty());
  }
}

}  // namespace switchboard::testing::e2e
