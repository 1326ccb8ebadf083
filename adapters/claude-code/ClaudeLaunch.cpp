#include "claude-code/ClaudeLaunch.h"

#include <algorithm>
#include <string_view>

#include "common/McpServers.h"

namespace switchboard::adapters::claude {

std::vector<std::string> command_line(const LaunchOptions& options) {
  std::vector<std::string> argv{options.executable};
  argv.insert(argv.end(), options.leading_arguments.begin(), options.leading_arguments.end());
  argv.insert(argv.end(), {"-p", "--input-format", "stream-json", "--output-format", "stream-json",
                           // stream-json output with -p refuses to run without --verbose.
                           "--verbose"});
  if (options.partial_messages) argv.push_back("--include-partial-messages");
  // A hidden flag: permission prompts become can_use_tool control requests on stdout.
  argv.insert(argv.end(), {"--permission-prompt-tool", "stdio"});
  if (options.resume_session_id) {
    argv.push_back("--resume");
    argv.push_back(*options.resume_session_id);
    // The new conversation's id reaches the session through system/init, as any other's does.
    if (options.fork_session) argv.push_back("--fork-session");
    if (options.resume_session_at) {
      argv.push_back("--resume-session-at");
      argv.push_back(*options.resume_session_at);
    }
  }
  if (options.effort) {
    argv.push_back("--effort");
    argv.push_back(*options.effort);
  }
  if (options.mcp_config_file) {
    argv.push_back("--mcp-config");
    argv.push_back(*options.mcp_config_file);
  }
  if (options.model) {
    argv.push_back("--model");
    argv.push_back(*options.model);
  }
  if (options.permission_mode) {
    argv.push_back("--permission-mode");
    argv.push_back(*options.permission_mode);
  }
  return argv;
}

nlohmann::json mcp_config(const std::vector<protocol::McpServer>& servers) {
  nlohmann::json configured = nlohmann::json::object();
  for (const auto& server : servers) {
    nlohmann::json entry;
    if (server.transport == protocol::McpTransport::Stdio) {
      entry = {{"type", "stdio"}, {"command", server.command.value_or("")}, {"args", server.args.value_or(std::vector<std::string>{})}};
      // The CLI runs its servers with its own environment, which holds the key we gave it (or the user's).
      entry["env"] = stdio_server_environment(server, {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"});
    } else {
      entry = {{"type", "http"}, {"url", server.url.value_or("")}};
      if (server.headers && server.headers->is_object()) entry["headers"] = *server.headers;
    }
    configured[server.name] = std::move(entry);
  }
  return {{"mcpServers", std::move(configured)}};
}

std::optional<std::string> parse_version_output(std::string_view output) {
  while (!output.empty() && (output.front() == ' ' || output.front() == '\n')) output.remove_prefix(1);
  const std::size_t end = output.find_first_not_of("0123456789.");
  const std::string_view version = output.substr(0, end);
  // At least "major.minor", digits first and last.
  if (version.empty() || version.find('.') == std::string_view::npos || version.front() == '.' || version.back() == '.') {
    return std::nullopt;
  }
  return std::string(version);
}

EnvironmentChanges environment_for(const ProviderEndpoint& endpoint) {
  EnvironmentChanges changes;
  changes.set = {{"DISABLE_AUTOUPDATER", "1"},
                 {"DISABLE_TELEMETRY", "1"},
                 {"DISABLE_ERROR_REPORTING", "1"},
                 {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"}};
  changes.unset = {"NODE_OPTIONS", "CLAUDECODE"};
  if (endpoint.base_url) changes.set.emplace_back("ANTHROPIC_BASE_URL", *endpoint.base_url);
  if (endpoint.api_key) {
    const bool bearer = endpoint.key_as_bearer_token;
    changes.set.emplace_back(bearer ? "ANTHROPIC_AUTH_TOKEN" : "ANTHROPIC_API_KEY", *endpoint.api_key);
    changes.unset.emplace_back(bearer ? "ANTHROPIC_API_KEY" : "ANTHROPIC_AUTH_TOKEN");
  }
  if (endpoint.config_dir) changes.set.emplace_back("CLAUDE_CONFIG_DIR", *endpoint.config_dir);
  return changes;
}

std::vector<std::string> apply_environment(const std::vector<std::string>& inherited, const EnvironmentChanges& changes) {
  const auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  const auto replaced = [&](std::string_view name) {
    return std::any_of(changes.unset.begin(), changes.unset.end(), [&](const auto& unset) { return unset == name; }) ||
           std::any_of(changes.set.begin(), changes.set.end(), [&](const auto& set) { return set.first == name; });
  };
  std::vector<std::string> out;
  for (const auto& entry : inherited) {
    if (!replaced(name_of(entry))) out.push_back(entry);
  }
  for (const auto& [name, value] : changes.set) out.push_back(name + "=" + value);
  return out;
}

}  // namespace switchboard::adapters::claude
