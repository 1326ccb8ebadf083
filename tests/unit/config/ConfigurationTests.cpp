#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "BuiltinAgents.h"
#include "claude-code/ClaudeCodeAdapter.h"
#include "codex/CodexAdapter.h"
#include "config/ConfigFile.h"
#include "config/Configuration.h"
#include "config/SettingTable.h"
#include "daemon/DaemonWiring.h"
#include "support/ProcessTestSupport.h"
#include "support/SourceTree.h"

namespace configuration_tests {

using namespace switchboard::config;
using switchboard::daemon::daemon_options;
using switchboard::daemon::engine_config;
using switchboard::daemon::http_options;
using switchboard::testing::TempDir;

// The table the binary runs with: the daemon's keys and every hosted agent's.
const SettingTable& table() {
  static const auto agent_settings = switchboard::adapters::settings_of(switchboard::adapters::builtin_agent_entries());
  static const SettingTable builtin(agent_settings);
  return builtin;
}

std::span<const SettingSpec> setting_specs() { return table().specs(); }

// A fake process environment and a config file in a temporary directory: what load_configuration reads.
struct World {
  TempDir dir;
  std::map<std::string, std::string> environment;
  std::map<std::string, std::vector<std::string>> flags;
  std::optional<std::string> config_flag;

  World() {
    environment["HOME"] = (dir.path() / "home").string();
    environment["XDG_CONFIG_HOME"] = (dir.path() / "xdg").string();
  }
  std::string default_file() const { return (dir.path() / "xdg" / "switchboard" / "config.toml").string(); }
  void write(const std::string& path, const std::string& text) const {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << text;
  }
  void write_default(const std::string& text) const { write(default_file(), text); }

  std::variant<Configuration, std::string> load() const {
    ConfigSources sources;
    sources.table = table();
    sources.flags = flags;
    sources.config_file = config_flag;
    sources.environment = [this](const std::string& name) -> std::optional<std::string> {
      const auto it = environment.find(name);
      return it == environment.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    return load_configuration(sources);
  }
  Configuration ok() const {
    auto loaded = load();
    if (auto* error = std::get_if<std::string>(&loaded)) FAIL("unexpected error: " << *error);
    return std::get<Configuration>(std::move(loaded));
  }
  std::string error() const {
    auto loaded = load();
    if (std::holds_alternative<Configuration>(loaded)) FAIL("expected an error");
    return std::get<std::string>(loaded);
  }
};

// Two different valid values of a setting, so each layer's value can be told apart from the one below it.
struct Sample {
  Value value;
  std::string text;  // as a flag or variable gives it (a list: comma-separated)
  std::vector<std::string> flag_texts;
};

std::string duration_text(std::int64_t millis) {
  if (millis % 1000 == 0) return std::to_string(millis / 1000) + "s";
  return std::to_string(millis) + "ms";
}

Sample sample(const SettingSpec& spec, int which) {
  const bool first = which == 0;
  switch (spec.kind) {
    case Kind::Text: {
      const std::string text = first ? "value-a" : "value-b";
      return {text, text, {text}};
    }
    case Kind::Path: {
      const std::string text = first ? "/sample/a" : "/sample/b";
      return {text, text, {text}};
    }
    case Kind::Integer: {
      const auto number = first ? spec.min : spec.max;
      return {number, std::to_string(number), {std::to_string(number)}};
    }
    case Kind::Duration: {
      const auto millis = first ? spec.min : spec.max;
      return {millis, duration_text(millis), {duration_text(millis)}};
    }
    case Kind::Boolean: return {first, first ? "true" : "false", {first ? "true" : "false"}};
    case Kind::Choice: {
      const std::string text(spec.choices[first ? 0 : 1]);
      return {text, text, {text}};
    }
    case Kind::List: {
      if (spec.check_item != nullptr) {  // items of a shape of their own (worktrees.setup)
        if (first) return {std::vector<std::string>{"/r/one=make one"}, "/r/one=make one", {"/r/one=make one"}};
        return {std::vector<std::string>{"/r/two=make two", "/r/three=make"}, "/r/two=make two, /r/three=make",
                {"/r/two=make two", "/r/three=make"}};
      }
      if (first) return {std::vector<std::string>{"one"}, "one", {"one"}};
      return {std::vector<std::string>{"two", "three"}, "two, three", {"two", "three"}};
    }
  }
  return {};
}

std::string file_line(const SettingSpec& spec, const Value& value) {
  return std::string(spec.key) + " = " + format_value(spec, value) + "\n";
}

TEST_CASE("configuration: with nothing configured every key has its default", "[config]") {
  World world;
  const auto configuration = world.ok();
  CHECK_FALSE(configuration.file_found);
  CHECK(configuration.file == world.default_file());
  CHECK(configuration.file_chosen_by == "default");
  for (const auto& spec : setting_specs()) {
    INFO(spec.key);
    CHECK(configuration.origins.at(std::string(spec.key)).layer == Origin::Layer::Default);
  }
  CHECK(configuration.settings.data_dir == (world.dir.path() / "home" / ".local" / "share" / "switchboard").string());
  CHECK(configuration.settings.agents.text("agents.codex.provider.home") == configuration.settings.data_dir + "/codex-home");
}

TEST_CASE("configuration: for every key, each layer wins over the ones below it", "[config]") {
  // The rule is flags > environment > file > defaults; checked for every key of the table, so a key added later
  // is held to it too.
  for (const auto& spec : setting_specs()) {
    INFO(spec.key);
    if (is_named_key(spec.key)) continue;  // file-only keys: their own test below
    const auto a = sample(spec, 0);
    const auto b = sample(spec, 1);
    const std::string key(spec.key);
    SECTION(key + ": the file wins over the default") {
      World world;
      world.write_default("# comment\n\n" + file_line(spec, a.value));
      const auto configuration = world.ok();
      CHECK(read(configuration.settings, spec) == a.value);
      CHECK(describe(configuration.origins.at(key)) == world.default_file() + ":3");
    }
    SECTION(key + ": the environment wins over the file") {
      World world;
      world.write_default(file_line(spec, a.value));
      world.environment[std::string(spec.env)] = b.text;
      const auto configuration = world.ok();
      CHECK(read(configuration.settings, spec) == b.value);
      CHECK(describe(configuration.origins.at(key)) == "env " + std::string(spec.env));
    }
    SECTION(key + ": an empty variable counts as unset") {
      World world;
      world.write_default(file_line(spec, a.value));
      world.environment[std::string(spec.env)] = "";
      const auto configuration = world.ok();
      CHECK(read(configuration.settings, spec) == a.value);
    }
    if (!spec.flag.empty()) {
      SECTION(key + ": the flag wins over the environment") {
        World world;
        world.write_default(file_line(spec, b.value));
        world.environment[std::string(spec.env)] = a.text;
        world.flags[key] = b.flag_texts;
        const auto configuration = world.ok();
        CHECK(read(configuration.settings, spec) == b.value);
        CHECK(describe(configuration.origins.at(key)) == "flag " + std::string(spec.flag));
      }
    }
  }
}

TEST_CASE("configuration: the file comes from --config, else SWITCHBOARD_CONFIG, else the XDG location", "[config]") {
  World world;
  const auto named = (world.dir.path() / "named.toml").string();
  const auto from_variable = (world.dir.path() / "variable.toml").string();
  world.write(named, "http.port = 1001\n");
  world.write(from_variable, "http.port = 1002\n");
  world.write_default("http.port = 1003\n");
  CHECK(world.ok().settings.http_port == 1003);
  world.environment["SWITCHBOARD_CONFIG"] = from_variable;
  CHECK(world.ok().settings.http_port == 1002);
  CHECK(world.ok().file_chosen_by == "SWITCHBOARD_CONFIG");
  world.config_flag = named;
  CHECK(world.ok().settings.http_port == 1001);
  CHECK(world.ok().file_chosen_by == "--config");

  SECTION("without XDG_CONFIG_HOME (or with a relative one), ~/.config") {
    World home_only;
    home_only.environment.erase("XDG_CONFIG_HOME");
    const auto file = (home_only.dir.path() / "home" / ".config" / "switchboard" / "config.toml").string();
    home_only.write(file, "http.port = 1004\n");
    CHECK(home_only.ok().settings.http_port == 1004);
    home_only.environment["XDG_CONFIG_HOME"] = "relative/dir";
    CHECK(home_only.ok().settings.http_port == 1004);
  }
  SECTION("a file named explicitly must exist; the default one may be absent") {
    World missing;
    missing.config_flag = (missing.dir.path() / "absent.toml").string();
    CHECK(missing.error() == *missing.config_flag + ": cannot read the config file: No such file or directory");
    missing.config_flag.reset();
    missing.environment["SWITCHBOARD_CONFIG"] = (missing.dir.path() / "absent2.toml").string();
    CHECK(missing.error() == missing.environment["SWITCHBOARD_CONFIG"] + ": cannot read the config file: No such file or directory");
  }
  SECTION("a directory is not a config file") {
    World directory;
    std::filesystem::create_directories(directory.default_file());
    CHECK(directory.error() == directory.default_file() + ": cannot read the config file: it is a directory");
  }
}

TEST_CASE("configuration: a bad config file is an error naming file:line and key", "[config]") {
  struct Case {
    const char* what;
    std::string text;
    std::string message;  // after "<file>:"
  };
  const std::vector<Case> cases{
      {"syntax error", "# ok\nhttp.port = \n", "2:"},
      {"unknown key, with the nearest one", "[http]\n\nprot = 8080\n",
       "3: http.prot: unknown key (did you mean http.port?); docs/configuration.md lists every key"},
      {"unknown key far from any", "[log]\nlevel = \"info\"\ncolour = true\n",
       "3: log.colour: unknown key; docs/configuration.md lists every key"},
      {"unknown table", "\n[htp]\nport = 1\n", "2: htp: unknown key (did you mean http?); docs/configuration.md lists every key"},
      {"unknown top-level key", "verbose = true\n", "1: verbose: unknown key; docs/configuration.md lists every key"},
      {"a table where a value belongs", "[http.port]\nvalue = 1\n", "1: http.port: expected an integer in 0..65535, got a table"},
      {"a value where a table belongs", "http = 80\n", "1: http: expected a table of settings, got an integer"},
      {"wrong type: string for integer", "[http]\nport = \"8080\"\n", "2: http.port: expected an integer in 0..65535, got a string"},
      {"wrong type: float for integer", "http.port = 80.5\n", "1: http.port: expected an integer in 0..65535, got a floating-point number"},
      {"wrong type: integer for boolean", "http.allow_remote = 1\n", "1: http.allow_remote: expected true or false, got an integer"},
      {"wrong type: string for list", "http.allowed_hosts = \"a\"\n", "1: http.allowed_hosts: expected a list of strings, got a string"},
      {"wrong type in a list", "http.allowed_origins = [\n  \"http://a\",\n  7,\n]\n",
       "3: http.allowed_origins: expected a list of strings, got an integer in it"},
      {"wrong type: integer for duration", "permissions.timeout = 30\n",
       "1: permissions.timeout: expected a duration such as \"500ms\", \"90s\", \"30m\" or \"2h\", got an integer"},
      {"out of range", "\nhttp.port = 70000\n", "2: http.port: expected an integer in 0..65535, got 70000"},
      {"below the range", "stdio.max_line_bytes = 12\n", "1: stdio.max_line_bytes: expected an integer in 1024..1073741824, got 12"},
      {"not one of the choices", "[permissions]\nheadless = \"ask\"\n",
       "2: permissions.headless: expected one of deny, allow, got \"ask\""},
      {"a log level that does not exist", "log.level = \"verbose\"\n",
       "1: log.level: expected one of trace, debug, info, warn, error, critical, off, got \"verbose\""},
      {"a duration without a unit", "permissions.timeout = \"30\"\n",
       "1: permissions.timeout: expected a duration such as \"500ms\", \"90s\", \"30m\" or \"2h\", got \"30\""},
      {"a duration out of range", "permissions.timeout = \"1ms\"\n",
       "1: permissions.timeout: expected a duration from 10ms to 720h, got 1ms"},
      {"an empty string", "agents.claude.bin = \"\"\n", "1: agents.claude.bin: expected a non-empty string, got an empty string"},
      {"a relative path", "data_dir = \"state\"\n",
       "1: data_dir: expected an absolute path or one starting with ~/, got \"state\""},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      World world;
      world.write_default(c.text);
      const auto error = world.error();
      const auto expected = world.default_file() + ":" + c.message;
      if (c.message == "2:") {
        CHECK(error.starts_with(expected));  // then the column and the parser's description
        CHECK(error.find(": syntax error: ") != std::string::npos);
      } else {
        CHECK(error == expected);
      }
    }
  }
}

TEST_CASE("configuration: paths in the file may start with ~/", "[config]") {
  World world;
  world.write_default("data_dir = \"~/state\"\nlog.file = \"/var/log/sb.log\"\n");
  const auto configuration = world.ok();
  CHECK(configuration.settings.data_dir == world.environment["HOME"] + "/state");
  CHECK(configuration.settings.log_file == "/var/log/sb.log");
  // The private Codex home follows the configured data directory.
  CHECK(configuration.settings.agents.text("agents.codex.provider.home") == world.environment["HOME"] + "/state/codex-home");
}

TEST_CASE("configuration: a bad variable or flag is an error naming it and the key", "[config]") {
  World world;
  SECTION("variable") {
    world.environment["SWITCHBOARD_HTTP_PORT"] = "eighty";
    CHECK(world.error() == "SWITCHBOARD_HTTP_PORT: http.port: expected an integer in 0..65535, got \"eighty\"");
  }
  SECTION("variable with a bad boolean") {
    world.environment["SWITCHBOARD_HTTP_ALLOW_REMOTE"] = "maybe";
    CHECK(world.error() == "SWITCHBOARD_HTTP_ALLOW_REMOTE: http.allow_remote: expected true or false, got \"maybe\"");
  }
  SECTION("flag") {
    world.flags["permissions.headless"] = {"sometimes"};
    CHECK(world.error() == "--headless-policy: permissions.headless: expected one of deny, allow, got \"sometimes\"");
  }
  SECTION("flag with a number and trailing text") {
    world.flags["stdio.max_line_bytes"] = {"2048x"};
    CHECK(world.error() == "--max-line-bytes: stdio.max_line_bytes: expected an integer in 1024..1073741824, got \"2048x\"");
  }
  SECTION("the file is checked even when a higher layer sets the same key") {
    world.write_default("http.port = \"x\"\n");
    world.flags["http.port"] = {"80"};
    CHECK(world.error() == world.default_file() + ":1: http.port: expected an integer in 0..65535, got a string");
  }
}

TEST_CASE("configuration: a worktrees.setup entry that is not \"<absolute path>=<command>\" is refused", "[config]") {
  World world;
  SECTION("no '=' in a flag") {
    world.flags["worktrees.setup"] = {"npm ci"};
    CHECK(world.error() ==
          "--worktree-setup: worktrees.setup: expected \"<repository path>=<command>\", got \"npm ci\" (no '=')");
  }
  SECTION("a relative repository in the file") {
    world.write_default("[worktrees]\nsetup = [\"/ok=make\", \"app=npm ci\"]\n");
    CHECK(world.error() == world.default_file() +
                               ":2: worktrees.setup: the repository in \"app=npm ci\" must be an absolute path (the main "
                               "checkout's top)");
  }
  SECTION("an empty command in a variable") {
    world.environment["SWITCHBOARD_WORKTREES_SETUP"] = "/srv/app= ";
    CHECK(world.error() == "SWITCHBOARD_WORKTREES_SETUP: worktrees.setup: the command in \"/srv/app=\" is empty");
  }
  SECTION("well-formed entries are kept as written") {
    world.flags["worktrees.setup"] = {"/srv/app=npm ci && npm run build"};
    CHECK(world.ok().settings.worktrees_setup == std::vector<std::string>{"/srv/app=npm ci && npm run build"});
  }
}

TEST_CASE("configuration: lists come from repeated flags, comma-separated variables and arrays", "[config]") {
  World world;
  world.write_default("http.allowed_hosts = [\"file.example\"]\n");
  CHECK(world.ok().settings.http_allowed_hosts == std::vector<std::string>{"file.example"});
  world.environment["SWITCHBOARD_HTTP_ALLOWED_HOSTS"] = "a.example, b.example,,";
  CHECK(world.ok().settings.http_allowed_hosts == std::vector<std::string>{"a.example", "b.example"});
  world.flags["http.allowed_hosts"] = {"c.example", "d.example"};
  CHECK(world.ok().settings.http_allowed_hosts == std::vector<std::string>{"c.example", "d.example"});
}

TEST_CASE("configuration: durations take ms, s, m and h", "[config]") {
  World world;
  for (const auto& [text, millis] : std::vector<std::pair<std::string, std::int64_t>>{
           {"250ms", 250}, {"90s", 90'000}, {"30m", 1'800'000}, {"2h", 7'200'000}}) {
    world.environment["SWITCHBOARD_REQUEST_TIMEOUT"] = text;
    CHECK(world.ok().settings.permissions_timeout_ms == millis);
  }
}

TEST_CASE("configuration: relative paths from a flag or variable are made absolute", "[config]") {
  World world;
  world.flags["data_dir"] = {"relative/state"};
  CHECK(world.ok().settings.data_dir == (std::filesystem::current_path() / "relative" / "state").string());
}

TEST_CASE("configuration: `switchboard config` shows every key, its value and its origin, never a secret", "[config]") {
  World world;
  world.write_default("[permissions]\nheadless = \"allow\"\n[agents.codex.provider]\napi_key = \"sk-very-secret\"\n");
  world.environment["SWITCHBOARD_LOG_LEVEL"] = "debug";
  world.flags["http.port"] = {"9000"};
  const auto text = render(world.ok());
  CHECK(text.find("sk-very-secret") == std::string::npos);
  std::istringstream lines(text);
  std::map<std::string, std::string> by_key;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# switchboard") || line.starts_with("# config file")) continue;
    const auto key_end = line.find_first_of(" ", line.starts_with("# ") ? 2 : 0);
    by_key[line.substr(line.starts_with("# ") ? 2 : 0, key_end - (line.starts_with("# ") ? 2 : 0))] = line;
  }
  for (const auto& spec : setting_specs()) CHECK(by_key.count(std::string(spec.key)) == 1);
  const auto squeezed = [&](const std::string& key) {
    std::string line = by_key[key];
    std::string out;
    for (const char c : line) {
      if (!(c == ' ' && !out.empty() && out.back() == ' ')) out += c;
    }
    return out;
  };
  CHECK(squeezed("http.port") == "http.port = 9000 # flag --port");
  CHECK(squeezed("log.level") == "log.level = \"debug\" # env SWITCHBOARD_LOG_LEVEL");
  CHECK(squeezed("permissions.headless") == "permissions.headless = \"allow\" # " + world.default_file() + ":2");
  CHECK(squeezed("agents.codex.provider.api_key") == "agents.codex.provider.api_key = <hidden> # " + world.default_file() + ":4");
  CHECK(squeezed("permissions.timeout") == "permissions.timeout = \"30m\" # default");
  CHECK(squeezed("agents.claude.default_model") == "# agents.claude.default_model is not set # default");
  CHECK(text.find("# config file: " + world.default_file() + " (default location)\n") != std::string::npos);
}

TEST_CASE("configuration: the settings' defaults are the daemon's defaults", "[config]") {
  // Settings repeats the defaults of the option structs it fills; they must not drift apart.
  const Settings defaults;
  const auto options = daemon_options(defaults);
  const auto http = http_options(defaults);
  const switchboard::daemon::DaemonOptions daemon_defaults;
  const switchboard::daemon::HttpOptions http_defaults;
  const switchboard::engine::EngineConfig engine_defaults;
  CHECK(options.max_line_bytes == daemon_defaults.max_line_bytes);
  CHECK(options.store.event_log.max_events == daemon_defaults.store.event_log.max_events);
  CHECK(options.engine.request_timeout == engine_defaults.request_timeout);
  CHECK(options.engine.headless_policy == engine_defaults.headless_policy);
  CHECK(options.engine.default_models.empty());
  CHECK(http.server.host == http_defaults.server.host);
  CHECK(http.server.port == http_defaults.server.port);
  CHECK(http.server.allow_remote == http_defaults.server.allow_remote);
  CHECK(http.max_body_bytes == http_defaults.max_body_bytes);
  CHECK(http.sse.heartbeat == http_defaults.sse.heartbeat);
  CHECK(http.sse.replay_events == http_defaults.sse.replay_events);
  // The adapters' declared defaults are their configurations' defaults.
  const auto agents = table().defaults().agents;
  CHECK(agents.text("agents.claude.bin") == switchboard::adapters::claude::ClaudeCodeConfig{}.executable);
  CHECK(agents.text("agents.codex.bin") == switchboard::adapters::codex::CodexConfig{}.executable);
  CHECK(agents.text("agents.codex.provider.model") == switchboard::adapters::codex::ProviderEndpoint{}.model);
  CHECK_FALSE(switchboard::adapters::codex::codex_config(agents).endpoint);
}

TEST_CASE("configuration: the agents' keys are declared by their adapters, not by src/config", "[config]") {
  const SettingTable daemon_only;  // named: the loop must not iterate a destroyed temporary's keys
  for (const auto& spec : daemon_only.specs()) {
    INFO(spec.key);
    CHECK_FALSE(spec.key.starts_with("agents."));
  }
  std::set<std::string_view> from_registry;
  for (const auto& agent : switchboard::adapters::builtin_agent_entries()) {
    for (const auto& spec : agent.settings()) {
      INFO(spec.key);
      // Each agent declares only keys of its own table; a family of named agents, keys of each name's.
      if (agent.make_named != nullptr) {
        CHECK(spec.key.starts_with(std::string(agent.name) + ".<name>."));
      } else {
        CHECK(spec.key.starts_with("agents." + std::string(agent.name) + "."));
      }
      from_registry.insert(spec.key);
    }
  }
  std::set<std::string_view> agent_keys;
  for (const auto& spec : setting_specs()) {
    if (spec.key.starts_with("agents.") || switchboard::config::is_named_key(spec.key)) agent_keys.insert(spec.key);
  }
  CHECK(agent_keys == from_registry);
  CHECK(agent_keys.count("agents.claude.bin") == 1);
  CHECK(agent_keys.count("agents.codex.provider.home") == 1);
}

TEST_CASE("configuration: each agent's keys reach its adapter's configuration", "[config]") {
  Settings settings = table().defaults();
  settings.agents.set("agents.claude.bin", std::string("/opt/claude"));
  settings.agents.set("agents.codex.bin", std::string("/opt/codex"));
  settings.agents.set("agents.codex.provider.base_url", std::string("http://127.0.0.1:9/v1"));
  settings.agents.set("agents.codex.provider.api_key", std::string("sk-test"));
  settings.agents.set("agents.codex.provider.model", std::string("m-1"));
  settings.agents.set("agents.codex.provider.home", std::string("/h/codex"));
  const auto claude = switchboard::adapters::claude::claude_code_config(settings.agents);
  CHECK(claude.executable == "/opt/claude");
  CHECK(claude.file_pool != nullptr);
  const auto codex = switchboard::adapters::codex::codex_config(settings.agents);
  CHECK(codex.executable == "/opt/codex");
  REQUIRE(codex.endpoint);
  CHECK(codex.endpoint->base_url == "http://127.0.0.1:9/v1");
  CHECK(codex.endpoint->api_key == "sk-test");
  CHECK(codex.endpoint->model == "m-1");
  CHECK(codex.endpoint->codex_home == "/h/codex");
}

TEST_CASE("configuration: every setting reaches the option it configures", "[config]") {
  Settings settings;
  settings.data_dir = "/d";
  settings.http_host = "::1";
  settings.http_port = 1234;
  settings.http_allow_remote = true;
  settings.http_allowed_hosts = {"h"};
  settings.http_allowed_origins = {"o"};
  settings.http_max_body_bytes = 4096;
  settings.http_sse_heartbeat_ms = 77;
  settings.http_sse_replay_events = 55;
  settings.stdio_max_line_bytes = 2048;
  settings.store_max_events = 5000;
  settings.permissions_headless = "allow";
  settings.permissions_timeout_ms = 1500;
  settings.agents.set("agents.claude.default_model", std::string("c-model"));
  settings.agents.set("agents.codex.default_model", std::string("x-model"));
  settings.agents.set("agents.codex.provider.model", std::string("not-a-default-model"));
  settings.worktrees_setup = {"/r/app = npm ci", "/r/other=make=all"};
  settings.worktrees_setup_timeout_ms = 90000;
  const auto options = daemon_options(settings);
  const auto http = http_options(settings);
  CHECK(options.data_dir == std::filesystem::path("/d"));
  CHECK(options.max_line_bytes == 2048);
  CHECK(options.store.event_log.max_events == 5000);
  CHECK(options.engine.headless_policy == switchboard::engine::HeadlessPolicy::Allow);
  CHECK(options.engine.request_timeout == std::chrono::milliseconds(1500));
  CHECK(options.engine.default_models == std::map<std::string, std::string>{{"claude", "c-model"}, {"codex", "x-model"}});
  const auto app = options.engine.worktree_setup.for_repository("/r/app");
  REQUIRE(app);
  CHECK(app->command == "npm ci");
  CHECK(app->time_limit == std::chrono::milliseconds(90000));
  const auto other = options.engine.worktree_setup.for_repository("/r/other/");
  REQUIRE(other);
  CHECK(other->command == "make=all");  // split at the first '='
  CHECK_FALSE(options.engine.worktree_setup.for_repository("/r"));
  CHECK(http.server.host == "::1");
  CHECK(http.server.port == 1234);
  CHECK(http.server.allow_remote);
  CHECK(http.allowed_hosts == std::vector<std::string>{"h"});
  CHECK(http.cors_origins == std::vector<std::string>{"o"});
  CHECK(http.max_body_bytes == 4096);
  CHECK(http.sse.heartbeat == std::chrono::milliseconds(77));
  CHECK(http.sse.replay_events == 55);
}

// The registry's family of agents a user names (acp_agents.<name>).
const switchboard::adapters::AgentRegistration& named_acp_family() {
  for (const auto& agent : switchboard::adapters::builtin_agent_entries()) {
    if (agent.make_named != nullptr) return agent;
  }
  FAIL("no family of named agents in the registry");
  throw std::logic_error("unreachable");
}

TEST_CASE("configuration: an ACP agent of the user's is a table of its own, its keys kept under its name", "[config][acp]") {
  World world;
  world.write_default("[acp_agents.gemini]\n"
                      "bin = \"gemini\"\n"
                      "args = [\"--experimental-acp\"]\n"
                      "env = [\"GEMINI_API_KEY=sk-very-secret\"]\n"
                      "default_model = \"gemini-2.5-pro\"\n"
                      "\n"
                      "[acp_agents.opencode-acp]\n"
                      "bin = \"/opt/opencode\"\n"
                      "args = [\"acp\"]\n");
  const auto configuration = world.ok();
  const auto& agents = configuration.settings.agents;
  CHECK(agents.text("acp_agents.gemini.bin") == "gemini");
  CHECK(*agents.find("acp_agents.gemini.args") == Value(std::vector<std::string>{"--experimental-acp"}));
  CHECK(agents.text("acp_agents.opencode-acp.bin") == "/opt/opencode");
  CHECK(agents.find("acp_agents.opencode-acp.env") == nullptr);
  CHECK(describe(configuration.origins.at("acp_agents.gemini.args")) == world.default_file() + ":3");
  CHECK(describe(configuration.origins.at("acp_agents.opencode-acp.bin")) == world.default_file() + ":8");
  // The daemon's one agent key: the default model, under the agent's own name.
  CHECK(engine_config(configuration.settings).default_models == std::map<std::string, std::string>{{"gemini", "gemini-2.5-pro"}});
  CHECK(switchboard::adapters::named_agents(named_acp_family(), agents) == std::vector<std::string>{"gemini", "opencode-acp"});
  CHECK_FALSE(switchboard::adapters::check_named_agents(switchboard::adapters::builtin_agent_entries(), agents));

  const auto text = render(configuration);
  INFO(text);
  CHECK(text.find("sk-very-secret") == std::string::npos);
  CHECK(text.find("acp_agents.gemini.env = <hidden>") != std::string::npos);
  CHECK(text.find("acp_agents.opencode-acp.args = [\"acp\"]") != std::string::npos);
  CHECK(text.find("# acp_agents.<name>.name is not set") != std::string::npos);
  CHECK(text.find("acp_agents.gemini.bin = \"gemini\"") != std::string::npos);
}

TEST_CASE("configuration: a bad table of a named agent is an error naming file:line and key", "[config][acp]") {
  struct Case {
    std::string what;
    std::string text;
    std::string message;
  };
  const std::string rule(switchboard::config::kNameRule);
  const std::vector<Case> cases{
      {"a name with capitals", "[acp_agents.Gemini]\nbin = \"x\"\n", "1: acp_agents.Gemini: " + rule},
      {"a name with a space", "[acp_agents.\"my agent\"]\nbin = \"x\"\n", "1: acp_agents.my agent: " + rule},
      {"a name too long", "[acp_agents." + std::string(65, 'a') + "]\nbin = \"x\"\n", "1: acp_agents." + std::string(65, 'a') + ": " + rule},
      {"a bad name in a dotted key", "\"acp_agents.Gemini.bin\" = \"x\"\n", "1: acp_agents.Gemini.bin: " + rule},
      {"the pattern itself as a key", "\"acp_agents.<name>.bin\" = \"x\"\n", "1: acp_agents.<name>.bin: " + rule},
      {"an empty table", "[acp_agents.gemini]\n", "1: acp_agents.gemini: an empty table configures nothing: give it its settings"},
      {"the one-agent shape", "[acp_agents]\nbin = \"x\"\n",
       "2: acp_agents.bin: expected a table of settings, got a string (each one is a table of its own: [acp_agents.<name>])"},
      {"a misspelt key", "[acp_agents.gemini]\nbni = \"x\"\n",
       "2: acp_agents.gemini.bni: unknown key (did you mean acp_agents.gemini.bin?); docs/configuration.md lists every key"},
      {"a key too deep", "[acp_agents.gemini.bin]\npath = \"x\"\n",
       "1: acp_agents.gemini.bin: expected a non-empty string, got a table"},
      {"a wrong type", "acp_agents.gemini.args = \"acp\"\n", "1: acp_agents.gemini.args: expected a list of strings, got a string"},
      {"a value where the family's table belongs", "acp_agents = 1\n", "1: acp_agents: expected a table of settings, got an integer"},
      {"a value where a name's table belongs", "acp_agents.gemini = \"gemini\"\n",
       "1: acp_agents.gemini: expected a table of settings, got a string (each one is a table of its own: [acp_agents.<name>])"},
      {"an empty command", "[acp_agents.gemini]\nbin = \"\"\n", "2: acp_agents.gemini.bin: expected a non-empty string, got an empty string"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      World world;
      world.write_default(c.text);
      CHECK(world.error() == world.default_file() + ":" + c.message);
    }
  }
}

TEST_CASE("configuration: a named agent cannot take the name of another agent", "[config][acp]") {
  for (const std::string taken : {"claude", "acp", "grok"}) {
    INFO(taken);
    World world;
    world.write_default("[acp_agents." + taken + "]\nargs = [\"acp\"]\n");
    const auto configuration = world.ok();
    const auto problem = switchboard::adapters::check_named_agents(switchboard::adapters::builtin_agent_entries(),
                                                                   configuration.settings.agents);
    REQUIRE(problem);
    CHECK(problem->key == "acp_agents." + taken + ".args");
    CHECK(describe(configuration.origins.at(problem->key)) == world.default_file() + ":2");
    CHECK(problem->message == "acp_agents." + taken + ": the name \"" + taken + "\" is taken by a built-in agent; choose another");
  }
}

TEST_CASE("configuration: each named ACP agent is an agent of its own, one without a command says what to set", "[config][acp]") {
  World world;
  world.write_default("[acp_agents.gemini]\nbin = \"/nonexistent/gemini\"\n[acp_agents.half]\nargs = [\"acp\"]\n");
  const auto configuration = world.ok();
  boost::asio::io_context io;
  // The family between two single agents (stand-ins that start nothing): its agents still come after them.
  const auto stand_in = [](const switchboard::adapters::AgentContext&) {
    switchboard::adapters::AgentDescriptor descriptor;
    descriptor.name = "single";
    return descriptor;
  };
  const std::vector<switchboard::adapters::AgentRegistration> registry{
      {"single", [] { return std::span<const switchboard::config::AgentSettingSpec>(); }, stand_in}, named_acp_family(),
      {"single", [] { return std::span<const switchboard::config::AgentSettingSpec>(); }, stand_in}};
  const auto descriptors = switchboard::adapters::descriptors_of(registry, io, configuration.settings.agents, std::filesystem::path());
  std::vector<std::string> names;
  for (const auto& descriptor : descriptors) names.push_back(descriptor.name);
  // The single agents first, in the registry's order, then the named ones by name.
  CHECK(names == std::vector<std::string>{"single", "single", "gemini", "half"});
  const auto half = descriptors.back().discover();
  CHECK(half.agent == "half");
  CHECK_FALSE(half.installed);
  CHECK(half.problem.value_or("") == "ACP agent half has no command: set acp_agents.half.bin in the config file (docs/agents/acp.md)");
}

TEST_CASE("configuration: docs/configuration.md documents every key with its flag and variable", "[config]") {
  std::ifstream in(switchboard::testing::source_path("docs/configuration.md"));
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const auto docs = text.str();
  for (const auto& spec : setting_specs()) {
    INFO(spec.key);
    CHECK(docs.find("`" + std::string(spec.key) + "`") != std::string::npos);
    if (!spec.env.empty()) CHECK(docs.find("`" + std::string(spec.env) + "`") != std::string::npos);
    if (!spec.flag.empty()) CHECK(docs.find("`" + std::string(spec.flag) + "`") != std::string::npos);
  }
}

TEST_CASE("configuration: every key has a variable, and flags and variables are unique", "[config]") {
  std::set<std::string_view> flags;
  std::set<std::string_view> variables;
  for (const auto& spec : setting_specs()) {
    INFO(spec.key);
    if (switchboard::config::is_named_key(spec.key)) {
      // Set in the config file only: a flag or variable would need a name made up from the user's.
      CHECK(spec.env.empty());
      CHECK(spec.flag.empty());
      continue;
    }
    CHECK(spec.env.starts_with("SWITCHBOARD_"));
    CHECK(variables.insert(spec.env).second);
    if (!spec.flag.empty()) CHECK(flags.insert(spec.flag).second);
    CHECK((spec.secret ? spec.flag.empty() : !spec.flag.empty()));  // a secret on the command line shows in `ps`
  }
}

}  // namespace configuration_tests
