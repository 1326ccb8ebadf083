// switchboard: one local daemon that hosts coding agents behind one protocol.
// This file only parses the command line, merges the configuration (config/) and hands over to Daemon.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "BuiltinAgents.h"
#include "acp/AcpCommand.h"
#include "client/AttachRelay.h"
#include "client/DaemonLink.h"
#include "config/Configuration.h"
#include "config/SettingTable.h"
#include "daemon/Daemon.h"
#include "daemon/DaemonWiring.h"
#include "daemon/DataDirectory.h"
#include "daemon/Logging.h"
#include "process/FatalSignalCleanup.h"
#include "run/ExportCommand.h"
#include "run/RunCommand.h"
#include "run/RunCommandLine.h"
#include "run/RunExitCode.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

namespace {

namespace config = switchboard::config;

// Every configurable key has its flag, registered from the setting table; what the user typed is kept as text
// and checked by config::load_configuration, with the environment and the config file, in one place. The flags
// are global (the app falls through), so they may come before or after the subcommand.
class ConfigFlags {
 public:
  ConfigFlags(CLI::App& app, const config::SettingTable& table) {
    for (const auto& spec : table.specs()) {
      if (spec.flag.empty()) continue;
      auto& slot = m_slots.emplace_back(std::make_unique<Slot>());
      slot->key = std::string(spec.key);
      const std::string help = std::string(spec.help) + " [" + std::string(spec.key) + ", $" + std::string(spec.env) + "]";
      slot->boolean = spec.kind == config::Kind::Boolean;
      if (slot->boolean) {
        slot->option = app.add_flag(std::string(spec.flag), slot->flag, help);
      } else {
        // One value per occurrence; a repeated flag adds to a list and otherwise the last one wins.
        slot->option = app.add_option(std::string(spec.flag), slot->texts, help)->allow_extra_args(false);
      }
    }
  }

  std::map<std::string, std::vector<std::string>> given() const {
    std::map<std::string, std::vector<std::string>> values;
    for (const auto& slot : m_slots) {
      if (slot->option->count() == 0) continue;
      values[slot->key] = slot->boolean ? std::vector<std::string>{slot->flag ? "true" : "false"} : slot->texts;
    }
    return values;
  }

 private:
  struct Slot {
    std::string key;
    std::vector<std::string> texts;
    bool boolean = false;
    bool flag = false;
    CLI::Option* option = nullptr;
  };
  std::vector<std::unique_ptr<Slot>> m_slots;  // CLI11 keeps pointers into them: they never move
};

// The agents this binary hosts (adapters/BuiltinAgents.h), configured from the settings; the daemon itself
// knows them only as descriptors.
std::function<std::vector<switchboard::adapters::AgentDescriptor>(boost::asio::io_context&)> hosted_agents(
    const config::Settings& settings) {
  return [agent_settings = settings.agents](boost::asio::io_context& io) {
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    return switchboard::adapters::descriptors_of(switchboard::adapters::hosted_agent_entries(), io, agent_settings, self);
  };
}

}  // namespace

int main(int argc, char** argv) {
  // A command an agent runs this binary as, in its CLI's place (adapters/BuiltinAgents.h, helper_command).
  if (auto code = switchboard::adapters::run_agent_helper(switchboard::adapters::hosted_agent_entries(), argc, argv)) {
    return *code;
  }
  // A crash or exit() of the daemon SIGKILLs the agent process groups it started (process/FatalSignalCleanup.h).
  switchboard::process::install_fatal_signal_cleanup();

  CLI::App app{"switchboard: hosts coding agents behind one JSON-RPC protocol.\n"
               "Settings: flags > SWITCHBOARD_* variables > config file > defaults (docs/configuration.md)"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may also follow the subcommand
  app.set_version_flag("--version", std::string(switchboard::kVersion));

  std::string config_file;
  app.add_option("--config", config_file, "config file (default $SWITCHBOARD_CONFIG, else "
                                          "$XDG_CONFIG_HOME/switchboard/config.toml or ~/.config/switchboard/config.toml)");
  // The daemon's keys and every hosted agent's own (each adapter declares them).
  const auto agent_settings = switchboard::adapters::settings_of(switchboard::adapters::hosted_agent_entries());
  const config::SettingTable table(agent_settings);
  const ConfigFlags flags(app, table);

  bool ephemeral = false;
  auto* stdio = app.add_subcommand("stdio", "serve JSON-RPC 2.0 over NDJSON on stdin/stdout");
  bool stdio_http = false;
  stdio->add_flag("--http", stdio_http, "also serve HTTP + SSE from this process (same sessions and events)");
  stdio->add_flag("--ephemeral", ephemeral, "keep nothing on disk: sessions and events live only as long as this process");
  bool standalone = false;
  stdio->add_flag("--standalone", standalone,
                  "never attach: host a daemon in this process even if one already runs (then use a data dir of its own)");
  bool attach_relay = false;
  stdio->add_flag("--relay", attach_relay,
                  "attached to a running daemon, copy stdin/stdout to it instead of handing them over (docs/attach.md)");
  auto* serve = app.add_subcommand("serve", "serve JSON-RPC over HTTP and events over SSE on localhost");
  serve->add_flag("--ephemeral", ephemeral, "keep nothing on disk: sessions and events live only as long as this process");
  auto* run = app.add_subcommand("run", "run one turn headless, from a script or CI (docs/run.md)");
  switchboard::run::RunFlags run_flags;
  switchboard::run::add_run_flags(*run, run_flags);
  for (auto* command : {stdio, serve}) {
    command->footer("Settings (data dir, HTTP, logging, permissions, agents): `switchboard --help` lists their flags; "
                    "`switchboard config` shows the effective values; docs/configuration.md.");
  }
  auto* acp_command = app.add_subcommand("acp", "serve one agent to an editor over the Agent Client Protocol on stdin/stdout (docs/acp.md)");
  switchboard::acp::AcpOptions acp_options;
  acp_command->add_option("--agent", acp_options.agent, "the hosted agent (claude, codex, opencode, pi, grok, ...)")->required();
  acp_command->add_option("--cwd", acp_options.cwd, "working directory for a session the editor opens without one");
  acp_command->footer("Settings (data dir, logging, permissions, agents): `switchboard --help` lists their flags; "
                      "`switchboard config` shows the effective values; docs/configuration.md.");
  acp_command->add_flag("--standalone", acp_options.standalone,
                "never attach: host a daemon in this process even if one already runs (then use a data dir of its own)");
  auto* export_command = app.add_subcommand("export", "write a stored session as Markdown or as the JSON of its events (docs/search.md)");
  switchboard::run::ExportOptions export_options;
  export_command->add_option("session", export_options.session_id, "the session's id")->required();
  export_command->add_option("--format", export_options.format, "markdown (default) or json")
      ->check(CLI::IsMember({"markdown", "json"}));
  export_command->add_option("-o,--output", export_options.output_file, "write to this file instead of standard output");
  export_command->add_flag("--standalone", export_options.standalone,
                           "never attach: open the data directory's store in this process even if a daemon runs");
  export_command->footer("Exit codes: 0 written; 1 the daemon or its store failed; 2 usage error, unknown session, or a "
                         "file that cannot be written.");
  auto* version = app.add_subcommand("version", "print the version and protocol version");
  auto* show_config = app.add_subcommand("config", "print the effective configuration and where each value comes from");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are "errors" that exit 0; every real usage error exits 2, like a bad setting.
    const int code = app.exit(error);
    return code == 0 ? switchboard::daemon::kExitOk : switchboard::daemon::kExitUsage;
  }
  // `run`'s own flags first: a usage error must not wait for a prompt on standard input.
  std::optional<switchboard::run::RunOptions> run_options;
  if (*run) {
    auto checked = switchboard::run::check_run_flags(run_flags, STDIN_FILENO);
    if (auto* why = std::get_if<std::string>(&checked)) {
      std::cerr << "switchboard run: " << *why << "\n";
      return switchboard::run::kRunInvalid;
    }
    run_options = std::move(std::get<switchboard::run::RunOptions>(checked));
  }

  if (*version) {
    std::cout << "switchboard " << switchboard::kVersion << " (protocol " << switchboard::protocol::kProtocolVersion
              << ")\n";
    return switchboard::daemon::kExitOk;
  }
  config::ConfigSources sources;
  sources.table = table;
  sources.flags = flags.given();
  if (!config_file.empty()) sources.config_file = config_file;
  sources.environment = config::process_environment;
  auto loaded = config::load_configuration(sources);
  if (auto* error = std::get_if<std::string>(&loaded)) {
    std::cerr << "switchboard: " << *error << "\n";
    return switchboard::daemon::kExitUsage;
  }
  const auto& configuration = std::get<config::Configuration>(loaded);
  if (auto problem = switchboard::adapters::check_named_agents(switchboard::adapters::hosted_agent_entries(),
                                                               configuration.settings.agents)) {
    const auto origin = configuration.origins.find(problem->key);
    std::cerr << "switchboard: " << (origin == configuration.origins.end() ? std::string("config") : config::describe(origin->second))
              << ": " << problem->message << "\n";
    return switchboard::daemon::kExitUsage;
  }
  if (*show_config) {
    std::cout << config::render(configuration);
    return switchboard::daemon::kExitOk;
  }
  const auto& settings = configuration.settings;
  // A run's stderr is its progress: the daemon it may host says only what is wrong unless asked for more.
  const bool quiet_run = (*run || *acp_command || *export_command) && configuration.origins.at("log.level").layer == config::Origin::Layer::Default;
  if (auto error = switchboard::daemon::configure_logging(quiet_run ? "warn" : settings.log_level, settings.log_file.value_or(""))) {
    std::cerr << "switchboard: " << *error << "\n";
    return switchboard::daemon::kExitUsage;
  }
  auto options = switchboard::daemon::daemon_options(settings);
  options.ephemeral = ephemeral;
  options.agents = hosted_agents(settings);
  if (*stdio) {
    // A daemon already runs on this data directory: become its client rather than a second daemon, so this
    // stdio client shares its sessions and events with every other client (client/AttachRelay.h).
    namespace client = switchboard::client;
    const auto attach = standalone || stdio_http ? client::Attach::Never : client::Attach::IfRunning;
    if (auto socket = client::running_daemon(options, attach)) {
      return client::attach_stdio(options.data_dir.value_or(switchboard::daemon::DataDirectory::default_path()), *socket,
                                  options.stdin_fd, options.stdout_fd,
                                  attach_relay ? client::AttachMode::Relay : client::AttachMode::Handoff);
    }
    if (stdio_http) options.http = switchboard::daemon::http_options(settings);
    switchboard::daemon::Daemon daemon(options);
    return daemon.run_stdio();
  }
  if (*acp_command) return switchboard::acp::run_acp(std::move(acp_options), std::move(options));
  if (*run) return switchboard::run::run_headless(std::move(*run_options), std::move(options));
  if (*export_command) return switchboard::run::run_export(export_options, std::move(options));
  if (*serve) {
    options.http = switchboard::daemon::http_options(settings);
    switchboard::daemon::Daemon daemon(options);
    return daemon.run_serve();
  }
  return switchboard::daemon::kExitUsage;
}
