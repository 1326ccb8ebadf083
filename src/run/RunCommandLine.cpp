#include "run/RunCommandLine.h"

#include <filesystem>
#include <system_error>

#include <CLI/CLI.hpp>

#include "config/SettingTable.h"
#include "run/McpConfigFile.h"
#include "run/PromptSource.h"
#include "run/RuleText.h"
#include "run/RunExitCode.h"

namespace switchboard::run {
namespace {

using Checked = std::variant<RunOptions, std::string>;

Checked usage(std::string why) { return Checked(std::in_place_index<1>, std::move(why)); }

std::string absolute(const std::string& path) {
  std::error_code error;
  auto result = std::filesystem::absolute(path, error);
  return error ? path : result.lexically_normal().string();
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_limit(const std::string& text) {
  std::optional<std::int64_t> millis;
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 10) {
    millis = std::stoll(text) * 1000;
  } else {
    millis = config::parse_duration(text);
  }
  if (!millis || *millis <= 0) return std::nullopt;
  return std::chrono::milliseconds(*millis);
}

void add_run_flags(CLI::App& command, RunFlags& flags) {
  command.add_option("prompt", flags.prompt, "the prompt; `-` reads it from standard input (read only then)");
  command.add_option("--prompt-file", flags.prompt_file, "read the prompt from FILE");
  command.add_option("--agent", flags.agent, "the agent: claude or codex (default claude)");
  command.add_option("--cwd", flags.cwd, "the agent's working directory (default: the current directory)");
  command.add_option("--model", flags.model, "the model (a continued session: for this turn only)");
  command.add_option("--mode", flags.mode, "the agent's permission mode (e.g. plan, acceptEdits)");
  command.add_option("--title", flags.title, "the session's title");
  command.add_option("--file", flags.files, "attach a file by path (repeatable)")->allow_extra_args(false);
  command.add_option("--session", flags.session, "continue this session (a cold one resumes)");
  command.add_flag("--continue", flags.continue_newest, "continue the newest session of this agent in this directory");
  command.add_option("--fork", flags.fork,
                     "continue a fork of this session (the agent's own fork of its conversation; the session itself "
                     "is left as it is)");
  command.add_option("--mcp-config", flags.mcp_config,
                     "give the new session the MCP servers of FILE: {\"mcpServers\": {\"NAME\": {\"command\", "
                     "\"args\", \"env\"} or {\"type\": \"http\", \"url\", \"headers\"}}}");
  command
      .add_option_function<std::vector<std::string>>(
          "--worktree", [&flags](const std::vector<std::string>& branch) { flags.worktree = branch.empty() ? "" : branch.front(); },
          "run in a new git worktree of the repository, on a new branch (BRANCH, or one named after the title), left "
          "behind for review and merge; put the prompt first or write --worktree=BRANCH")
      ->expected(0, 1)
      ->type_name("[BRANCH]");
  command.add_flag("--ephemeral", flags.ephemeral,
                   "keep nothing: a private in-process daemon without a database (implies --standalone)");
  command.add_flag("--standalone", flags.standalone,
                   "never attach to a running daemon: host one in this process for the run");
  command.add_option("--on-ask", flags.on_ask,
                     "an ask no rule decides: deny (default), fail (exit 4 at once), allow, or delegate (leave it "
                     "to the daemon's other clients, e.g. the console; bounded by the timeouts)");
  command.add_option("--allow", flags.allow, "allow asks matching RULE: Tool or Tool(glob) (repeatable)")->allow_extra_args(false);
  command.add_option("--deny", flags.deny, "deny asks matching RULE (repeatable; deny beats allow)")->allow_extra_args(false);
  command.add_option("--timeout", flags.timeout, "cancel the turn after this long (30, 90s, 5m, 500ms): exit 124");
  command.add_option("--idle-timeout", flags.idle_timeout, "cancel the turn when no event came for this long: exit 124");
  command.add_option("--output", flags.output,
                     "text (default: the answer on stdout, progress on stderr), json (one result object), ndjson "
                     "(every event, then one result line)");
  command.add_option("-o,--output-file", flags.output_file, "also write the final message to FILE");
  command.footer(std::string(kRunExitCodesHelp) +
                 "\nDetails: docs/run.md. Settings (data dir, logging, permissions, agents): `switchboard --help`.");
}

std::variant<RunOptions, std::string> check_run_flags(const RunFlags& flags, int stdin_fd) {
  RunOptions options;
  if (flags.prompt.size() > 1) return usage("one prompt argument (quote it), or `-` for standard input");
  PromptSource source;
  if (!flags.prompt.empty()) source.argument = flags.prompt.front();
  if (!flags.prompt_file.empty()) source.file = flags.prompt_file;
  // Everything that needs no input is checked first: a bad flag must not wait for standard input to end.
  if (flags.agent.empty()) return usage("--agent names an agent");
  options.agent = flags.agent;
  std::error_code error;
  options.cwd = flags.cwd.empty() ? std::filesystem::current_path(error).string() : absolute(flags.cwd);
  if (!std::filesystem::is_directory(options.cwd, error)) return usage("--cwd " + options.cwd + " is not a directory");
  if (!flags.model.empty()) options.model = flags.model;
  if (!flags.mode.empty()) options.mode = flags.mode;
  if (!flags.title.empty()) options.title = flags.title;
  for (const auto& file : flags.files) {
    const auto path = absolute(file);
    if (!std::filesystem::is_regular_file(path, error)) return usage("--file " + file + ": no such file");
    options.files.push_back(path);
  }
  if (!flags.session.empty()) options.session_id = flags.session;
  options.continue_newest = flags.continue_newest;
  if (options.session_id && options.continue_newest) return usage("--session and --continue exclude each other");
  if (!flags.fork.empty()) options.fork_of = flags.fork;
  if (options.fork_of && (options.session_id || options.continue_newest)) {
    return usage("--fork starts a session of its own: it excludes --session and --continue");
  }
  options.worktree = flags.worktree;
  if (options.worktree && (options.session_id || options.continue_newest || options.fork_of)) {
    return usage("--worktree makes a new session: it excludes --session, --continue and --fork");
  }
  options.ephemeral = flags.ephemeral;
  if (options.ephemeral && (options.session_id || options.continue_newest || options.fork_of)) {
    return usage("--ephemeral keeps no session to continue: it excludes --session, --continue and --fork");
  }
  if (!flags.mcp_config.empty()) {
    if (options.session_id || options.continue_newest || options.fork_of) {
      return usage("--mcp-config is for a new session: a continued or forked one keeps the servers it has");
    }
    auto servers = read_mcp_config(absolute(flags.mcp_config));
    if (auto* why = std::get_if<std::string>(&servers)) return usage("--mcp-config " + flags.mcp_config + ": " + *why);
    options.mcp_servers = std::move(std::get<0>(servers));
  }
  options.standalone = flags.standalone || flags.ephemeral;
  if (flags.on_ask == "deny") options.on_ask = OnAsk::Deny;
  else if (flags.on_ask == "fail") options.on_ask = OnAsk::Fail;
  else if (flags.on_ask == "allow") options.on_ask = OnAsk::Allow;
  else if (flags.on_ask == "delegate") options.on_ask = OnAsk::Delegate;
  else return usage("--on-ask takes deny, fail, allow or delegate, not " + flags.on_ask);
  for (const auto& [texts, allow] : {std::pair{&flags.allow, true}, std::pair{&flags.deny, false}}) {
    for (const auto& text : *texts) {
      auto rule = parse_rule(text);
      if (auto* why = std::get_if<std::string>(&rule)) return usage(std::string(allow ? "--allow: " : "--deny: ") + *why);
      options.rules.push_back(RunRule{std::get<protocol::PermissionRule>(rule), allow});
    }
  }
  if (!flags.timeout.empty()) {
    options.timeout = parse_limit(flags.timeout);
    if (!options.timeout) return usage("--timeout takes a duration (30, 90s, 5m, 500ms), not " + flags.timeout);
  }
  if (!flags.idle_timeout.empty()) {
    options.idle_timeout = parse_limit(flags.idle_timeout);
    if (!options.idle_timeout) return usage("--idle-timeout takes a duration (30, 90s, 5m, 500ms), not " + flags.idle_timeout);
  }
  if (flags.output == "text") options.output = OutputFormat::Text;
  else if (flags.output == "json") options.output = OutputFormat::Json;
  else if (flags.output == "ndjson") options.output = OutputFormat::Ndjson;
  else return usage("--output takes text, json or ndjson, not " + flags.output);
  if (!flags.output_file.empty()) {
    options.output_file = absolute(flags.output_file);
    if (!std::filesystem::is_directory(options.output_file->parent_path(), error)) {
      return usage("-o " + flags.output_file + ": its directory does not exist");
    }
  }
  auto prompt = read_prompt(source, stdin_fd);
  if (prompt.index() == 1) return usage(std::get<1>(prompt));
  options.prompt = std::move(std::get<0>(prompt));
  return options;
}

}  // namespace switchboard::run
