#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/StdioTestDaemon.h"
#include "support/TempDir.h"

// File checkpoints through the real daemon (the tests' daemon, whose `controls` agent writes files as a tool call
// and can take its time): the store is under the data directory, session.diff shows what a turn's tool and a
// shell command changed, session.rewind with files undoes it, refused while a turn runs, and the checkpoints
// outlive a daemon restart.

namespace checkpoint_daemon_tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Daemon = switchboard::testing::StdioTestDaemon;
using switchboard::testing::TempDir;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> paths_of(const Json& result) {
  std::vector<std::string> paths;
  for (const auto& file : result.at("files")) paths.push_back(file.at("path").get<std::string>());
  return paths;
}

TEST_CASE("checkpoints through the daemon: a tool's and a shell's changes are diffed and rewound, and survive a "
          "restart",
          "[checkpoint][daemon]") {
  TempDir data("checkpoint-daemon-data");
  TempDir tree("checkpoint-daemon-tree");
  std::ofstream(tree.path() / "kept.txt") << "as the user left it\n";
  std::string session;
  std::string first;
  std::string second;
  {
    Daemon d(data.path());
    session = d.result("session.create", {{"agent", "controls"}, {"cwd", tree.path().string()}})
                  .at("session")
                  .at("sessionId")
                  .get<std::string>();
    first = d.result("session.send", {{"sessionId", session}, {"text", "write notes.txt hello"}})
                .at("turnId")
                .get<std::string>();
    CHECK(read(tree.path() / "notes.txt") == "hello\n");
    CHECK(paths_of(d.result("session.diff", {{"sessionId", session}, {"turnId", first}})) ==
          std::vector<std::string>{"notes.txt"});

    // A slow turn, while a shell changes the tree beside the agent: a files rewind is refused meanwhile.
    std::size_t from = d.client.events().size();
    const auto sent = d.client.send("session.send", {{"sessionId", session}, {"text", "slow write notes.txt bye"}});
    // Once the agent's tool has run, the turn's checkpoint was taken (before the prompt reached the agent).
    const auto wrote = d.client.wait_event("tool.completed", from);
    REQUIRE_FALSE(wrote.is_null());
    const std::string shell = "cd '" + tree.path().string() + "' && echo made by a shell > shell.txt && rm kept.txt";
    REQUIRE(std::system(shell.c_str()) == 0);
    CHECK(d.error("session.rewind", {{"sessionId", session}, {"turnId", first}, {"conversation", false}, {"files", true}}).at("code") ==
          -32022);
    const auto done = d.client.response(sent);
    REQUIRE(done.contains("result"));
    second = done.at("result").at("turnId").get<std::string>();
  }
  CHECK(fs::exists(data.path() / "checkpoints" / "logs" / (session + ".log")));

  Daemon d(data.path());
  // The second turn's changes: its tool's and the shell's; the whole session's: both turns'.
  CHECK(paths_of(d.result("session.diff", {{"sessionId", session}, {"turnId", second}})) ==
        std::vector<std::string>{"kept.txt", "notes.txt", "shell.txt"});
  CHECK(paths_of(d.result("session.diff", {{"sessionId", session}})) ==
        std::vector<std::string>{"kept.txt", "notes.txt", "shell.txt"});
  const auto whole = d.result("session.diff", {{"sessionId", session}});
  for (const auto& file : whole.at("files")) {
    if (file.at("path") == "kept.txt") CHECK(file.at("status") == "deleted");
    if (file.at("path") == "shell.txt") CHECK(file.at("status") == "added");
  }

  const auto rewound =
      d.result("session.rewind", {{"sessionId", session}, {"turnId", second}, {"conversation", false}, {"files", true}});
  CHECK(rewound.at("rewoundTurnIds") == Json::array({second}));
  CHECK(rewound.at("checkpointId").is_string());
  CHECK(paths_of(rewound) == std::vector<std::string>{"kept.txt", "notes.txt", "shell.txt"});
  CHECK(read(tree.path() / "notes.txt") == "hello\n");
  CHECK(read(tree.path() / "kept.txt") == "as the user left it\n");
  CHECK_FALSE(fs::exists(tree.path() / "shell.txt"));

  CHECK(d.error("session.diff", {{"sessionId", session}, {"turnId", "t-unknown"}}).at("code") == -32023);
}

}  // namespace checkpoint_daemon_tests
