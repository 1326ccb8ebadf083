#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/RunProcess.h"
#include "support/SchemaValidator.h"
#include "support/SourceTree.h"
#include "support/TempDir.h"
#include "support/TextFile.h"

// `switchboard export` as a script runs it: a session a `switchboard run` stored, written as Markdown or as
// the JSON document, with run's exit codes.

namespace export_command_tests {

namespace fs = std::filesystem;
using nlohmann::json;
using switchboard::testing::RunProcess;
using switchboard::testing::TempDir;

struct World {
  TempDir tmp{"export"};
  fs::path data = tmp.path() / "data";
  fs::path work = tmp.path() / "work";

  World() { fs::create_directories(work); }

  std::vector<std::string> env(const json& steps) const {
    return {"SWITCHBOARD_CLAUDE_BIN=" + switchboard::testing::source_path("tests/fake_agents/scripted_claude.py"),
            "FAKE_TURN=" + steps.dump(), "SWITCHBOARD_HEADLESS_POLICY=", "SWITCHBOARD_LOG_LEVEL=", "NO_COLOR="};
  }

  RunProcess::Outcome switchboard(const std::vector<std::string>& args, const json& steps = json::array()) {
    std::vector<std::string> all{"--data-dir", data.string()};
    all.insert(all.end(), args.begin(), args.end());
    RunProcess process(tmp.path(), all, env(steps));
    REQUIRE(process.started());
    return process.wait();
  }

  // A stored session with a tool call and an answer, made by `switchboard run`; its id.
  std::string stored_session() {
    const auto run = switchboard({"run", "--cwd", work.string(), "--output", "json", "--allow", "Bash", "find the kiwi"},
                                 json::array({json{{"tool", "ls"}, {"output", "kiwi.txt"}}, json{{"text", "the mango answer"}}}));
    REQUIRE(run.exit == 0);
    const auto result = json::parse(run.out);
    return result.at("sessionId");
  }
};

TEST_CASE("switchboard export writes a stored session as Markdown to standard output", "[export][process]") {
  World world;
  const auto session = world.stored_session();
  const auto exported = world.switchboard({"export", session});
  INFO(exported.err);
  REQUIRE(exported.exit == 0);
  for (const char* part : {"find the kiwi", "Tool call: Bash", "kiwi.txt", "the mango answer", "Turn ended"}) {
    INFO(part);
    CHECK(exported.out.find(part) != std::string::npos);
  }
}

TEST_CASE("switchboard export --format json -o FILE writes the SessionExport document", "[export][process]") {
  World world;
  const auto session = world.stored_session();
  const auto file = world.tmp.path() / "session.json";
  const auto exported = world.switchboard({"export", session, "--format", "json", "-o", file.string()});
  INFO(exported.err);
  REQUIRE(exported.exit == 0);
  CHECK(exported.out.empty());
  const auto document = json::parse(switchboard::testing::read_text_file(file));
  switchboard::testing::SchemaValidator validator;
  CHECK(validator.validate_type("SessionExport", document).empty());
  CHECK(document.at("session").at("sessionId") == session);
  std::vector<std::string> types;
  for (const auto& event : document.at("events")) types.push_back(event.at("type"));
  CHECK(std::find(types.begin(), types.end(), "turn.started") != types.end());
  CHECK(std::find(types.begin(), types.end(), "tool.completed") != types.end());
  CHECK(std::find(types.begin(), types.end(), "turn.stopped") != types.end());
}

TEST_CASE("switchboard export of an unknown session exits 2 and says why", "[export][process]") {
  World world;
  const auto exported = world.switchboard({"export", "s-nope"});
  CHECK(exported.exit == 2);
  CHECK(exported.out.empty());
  CHECK(exported.err.find("s-nope") != std::string::npos);
  CHECK(world.switchboard({"export", "s-nope", "--format", "pdf"}).exit == 2);
}

}  // namespace export_command_tests
