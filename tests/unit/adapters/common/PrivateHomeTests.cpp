#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/PrivateHome.h"
#include "support/TempDir.h"

// The private agent home (adapters/common/PrivateHome.h) that Codex's and Grok Build's adapters write when the
// daemon names their model provider, and its safety check: the user's own home is never written.

namespace private_home_tests {

namespace fs = std::filesystem;
using switchboard::adapters::PrivateHome;
using switchboard::adapters::same_place;
using switchboard::adapters::write_private_home;
using switchboard::testing::TempDir;

std::string read(const fs::path& file) {
  std::ifstream in(file);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

PrivateHome home_at(fs::path dir) { return PrivateHome{std::move(dir), "Agent", "AGENT_HOME", ".agent", ".switchboard-agent-home"}; }

TEST_CASE("private home: one directory named two ways is the same place, existing or not yet", "[private-home]") {
  TempDir tmp{"private-home"};
  const auto dir = tmp.path() / "dir";
  fs::create_directories(dir);
  fs::create_symlink(dir, tmp.path() / "link");
  CHECK(same_place(dir, tmp.path() / "link"));
  CHECK(same_place(dir, tmp.path() / "dir/"));
  CHECK(same_place(dir, tmp.path() / "other" / ".." / "dir"));
  CHECK_FALSE(same_place(dir, tmp.path() / "elsewhere"));
  // A directory that does not exist yet (a user's ~/.agent before the agent first ran), named with a trailing
  // slash or through a symlinked parent: still the same place. (One of the two copies this replaced compared
  // such paths as they were written, and took "x/.agent/" for another directory than "x/.agent".)
  CHECK(same_place(tmp.path() / "missing", tmp.path() / "missing/"));
  CHECK(same_place(tmp.path() / "dir" / "missing", tmp.path() / "link" / "missing/"));
  CHECK_FALSE(same_place(tmp.path() / "missing", tmp.path() / "missing2"));
}

TEST_CASE("private home: the user's own home of the agent and the inherited one are refused, however named", "[private-home]") {
  TempDir tmp{"private-home"};
  const auto user = tmp.path() / "user";
  fs::create_directories(user);  // $HOME exists, its .agent not yet
  const auto refused_user = write_private_home(home_at(user / ".agent/"), "# ours\n", user.string(), std::nullopt);
  REQUIRE(refused_user);
  CHECK(refused_user->find("the user's own Agent home") != std::string::npos);
  CHECK_FALSE(fs::exists(user / ".agent"));

  const auto refused_inherited = write_private_home(home_at(tmp.path() / "inherited"), "# ours\n", user.string(),
                                                    (tmp.path() / "inherited/").string());
  REQUIRE(refused_inherited);
  CHECK(refused_inherited->find("the daemon's AGENT_HOME") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp.path() / "inherited"));

  const auto unset = write_private_home(home_at({}), "# ours\n", user.string(), std::nullopt);
  REQUIRE(unset);
  CHECK(*unset == "no private AGENT_HOME configured");
}

TEST_CASE("private home: written and rewritten when it is switchboard's, a foreign directory left alone", "[private-home]") {
  TempDir tmp{"private-home"};
  const auto dir = tmp.path() / "private";
  CHECK_FALSE(write_private_home(home_at(dir), "# ours\nkey = 1\n", std::nullopt, std::nullopt));
  CHECK(read(dir / "config.toml") == "# ours\nkey = 1\n");
  CHECK(fs::exists(dir / ".switchboard-agent-home"));
  CHECK_FALSE(fs::exists(dir / "config.toml.switchboard-tmp"));
  // The agent wrote files of its own (and even rewrote the config): the mark keeps the directory switchboard's.
  std::ofstream(dir / "config.toml") << "rewritten by the agent\n";
  std::ofstream(dir / "sessions.db") << "x";
  CHECK_FALSE(write_private_home(home_at(dir), "# ours\nkey = 2\n", std::nullopt, std::nullopt));
  CHECK(read(dir / "config.toml") == "# ours\nkey = 2\n");

  // Somebody else's directory: files, no mark, a config.toml switchboard did not write.
  const auto theirs = tmp.path() / "theirs";
  fs::create_directories(theirs);
  std::ofstream(theirs / "config.toml") << "model = \"o3\"\n";
  const auto refused = write_private_home(home_at(theirs), "# ours\n", std::nullopt, std::nullopt);
  REQUIRE(refused);
  CHECK(refused->find("did not write") != std::string::npos);
  CHECK(read(theirs / "config.toml") == "model = \"o3\"\n");
  CHECK_FALSE(fs::exists(theirs / ".switchboard-agent-home"));

  // An empty directory is taken; so is one whose config.toml switchboard wrote before the mark existed.
  fs::create_directories(tmp.path() / "empty");
  CHECK_FALSE(write_private_home(home_at(tmp.path() / "empty"), "# ours\n", std::nullopt, std::nullopt));
  const auto earlier = tmp.path() / "earlier";
  fs::create_directories(earlier);
  std::ofstream(earlier / "config.toml") << "# ours\nold = true\n";
  std::ofstream(earlier / "history.jsonl") << "{}\n";
  CHECK_FALSE(write_private_home(home_at(earlier), "# ours\nnew = true\n", std::nullopt, std::nullopt));
  CHECK(read(earlier / "config.toml") == "# ours\nnew = true\n");
  CHECK(fs::exists(earlier / ".switchboard-agent-home"));
}

}  // namespace private_home_tests
