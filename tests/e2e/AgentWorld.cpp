#include "e2e/AgentWorld.h"

#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "support/SchemaValidator.h"
#include "support/TextFile.h"
#include "support/SourceTree.h"

namespace switchboard::testing::e2e {

namespace agent_world_detail {

std::string cmdline_of(const std::string& pid) {
  auto text = read_text_file("/proc/" + pid + "/cmdline");
  for (auto& c : text) {
    if (c == '\0') c = ' ';
  }
  return text;
}

template <class Keep>
std::vector<pid_t> processes_where(Keep keep) {
  std::vector<pid_t> found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  while (auto* entry = ::readdir(proc)) {
    const std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    if (keep(name)) found.push_back(pid);
  }
  ::closedir(proc);
  return found;
}

}  // namespace agent_world_detail

std::string installed_cli(const std::string& name) {
  const std::string command = source_path("scripts/agent-path") + " " + name + " 2>/dev/null";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  char buffer[4096];
  std::string path;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) path += buffer;
  ::pclose(pipe);
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

bool cli_missing(const AgentProfile& profile, const std::string& binary) {
  if (!binary.empty() && fs::exists(binary)) return false;
  if (std::getenv("CI") != nullptr) {
    FAIL("the " << profile.agent << " CLI is not installed (scripts/install-agents " << profile.cli_name
                << "); CI requires it");
  }
  WARN("SKIPPED: the " << profile.agent << " CLI is not installed; run scripts/install-agents " << profile.cli_name);
  return true;
}

std::vector<pid_t> processes_matching(const std::string& needle) {
  return agent_world_detail::processes_where([&](const std::string& pid) { return agent_world_detail::cmdline_of(pid).find(needle) != std::string::npos; });
}

std::vector<pid_t> processes_working_in(const fs::path& dir) {
  return agent_world_detail::processes_where([&](const std::string& pid) {
    std::error_code error;
    return fs::read_symlink("/proc/" + pid + "/cwd", error) == dir;
  });
}

AgentWorld::AgentWorld(const AgentProfile& agent_profile, const Json& turns, bool with_http, const Json& rules)
    : profile(agent_profile), binary(agent_profile.locate_cli ? agent_profile.locate_cli() : installed_cli(agent_profile.cli_name)), http(with_http) {
  fs::create_directories(tmp.path() / "home");
  fs::create_directories(work);
  auto script = profile.script(turns);
  for (const auto& rule : rules) script["rules"].push_back(rule);  // after the profile's own (its side requests)
  mock = std::make_unique<MockProvider>(tmp.path(), script, profile.mock_server);
  REQUIRE(mock->port() > 0);
}

AgentWorld::~AgentWorld() {
  if (client) validate_events();
}

bool AgentWorld::ready() const { return !cli_missing(profile, binary); }

void AgentWorld::start_daemon() {
  std::vector<std::string> args{"--log-level", "info", "stdio", "--data-dir", (tmp.path() / "data").string()};
  if (http) args.insert(args.end(), {"--http", "--port", "0"});
  client = std::make_unique<DaemonClient>(args, profile.environment(tmp.path() / "home", mock->base_url(), binary), profile.daemon_binary);
  const auto init = client->call("initialize", {{"protocolVersion", 1},
                                                {"clientInfo", {{"name", "e2e"}}},
                                                {"capabilities", {{"answersPermissions", true}}}});
  REQUIRE(init.contains("result"));
}

std::unique_ptr<SpawnedDaemon> AgentWorld::spawn_serve() const {
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  const int err = std::getenv("SWITCHBOARD_TEST_DAEMON_LOGS") ? 2 : null_fd;
  auto daemon = std::make_unique<SpawnedDaemon>(
      std::vector<std::string>{"--log-level", "info", "serve", "--data-dir", (tmp.path() / "data").string(), "--port", "0"},
      null_fd, null_fd, err, profile.environment(tmp.path() / "home", mock->base_url(), binary), profile.daemon_binary);
  ::close(null_fd);
  REQUIRE(daemon->started());
  return daemon;
}

void AgentWorld::restart() {
  validate_events();
  client->close_stdin();
  REQUIRE(client->daemon().wait(std::chrono::seconds(30)) == 0);
  client.reset();
  // No orphans: nothing the daemon started (the CLI, its tools) outlives it.
  CHECK(eventually([&] { return processes_working_in(work).empty(); }, std::chrono::seconds(10), kProcessScanInterval));
  start_daemon();
}

std::string AgentWorld::create_session(const std::string& mode) {
  Json params{{"agent", profile.agent}, {"cwd", work.string()}};
  if (!mode.empty()) params["mode"] = mode;
  const auto created = client->call("session.create", params);
  INFO(created.dump());
  REQUIRE(created.contains("result"));
  return created["result"]["session"]["sessionId"];
}

Json AgentWorld::runtime() const { return Json::parse(read_text_file(tmp.path() / "data" / "daemon.json"), nullptr, false); }

std::string AgentWorld::transcript() const {
  std::string out;
  for (const auto& event : client->events()) out += event.dump().substr(0, 400) + "\n";
  return out;
}

void AgentWorld::validate_events() const {
  if (!client) return;
  static const SchemaValidator validator;
  for (const auto& event : client->events()) {
    INFO(event.dump());
    CHECK(validator.validate_event(event).empty());
  }
}

std::vector<pid_t> AgentWorld::cli_processes() const {
  std::vector<pid_t> ours;
  for (const auto pid : processes_working_in(work)) {
    if (::getpgid(pid) != pid) continue;
    if (agent_world_detail::cmdline_of(std::to_string(pid)).find(profile.cli_marker) != std::string::npos) ours.push_back(pid);
  }
  return ours;
}

}  // namespace switchboard::testing::e2e
