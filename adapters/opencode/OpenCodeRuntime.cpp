#include "opencode/OpenCodeRuntime.h"

#include <algorithm>

#include <boost/beast/core/detail/base64.hpp>
#include <spdlog/spdlog.h>

#include "common/ChildEnvironment.h"
#include "common/EnvironmentVariable.h"
#include "common/McpServers.h"
#include "common/NativeJson.h"
#include "common/PercentEncoding.h"
#include "opencode/OpenCodeSession.h"
#include "switchboard/support/RandomId.h"

namespace switchboard::adapters::opencode {

namespace {

constexpr std::string_view kListening = "opencode server listening on http://127.0.0.1:";

std::string base64(std::string_view text) {
  std::string encoded(boost::beast::detail::base64::encoded_size(text.size()), '\0');
  encoded.resize(boost::beast::detail::base64::encode(encoded.data(), text.data(), text.size()));
  return encoded;
}

VersionProbeSpec probe_spec(const OpenCodeConfig& config) {
  VersionProbeSpec spec;
  spec.agent = "opencode";
  spec.executable = config.executable;
  spec.install_hint = install_hint("opencode");
  spec.parse_version = &parse_version_output;
  spec.capabilities = OpenCodeSession::static_capabilities();
  spec.modes = {std::string(kAskMode), std::string(kAcceptEditsMode), std::string(kFullAccessMode)};
  return spec;
}

}  // namespace

std::string server_permissions(const std::optional<std::string>& user_permissions) {
  // The user's own OPENCODE_PERMISSION, if it is a JSON object, with bash and edit made to ask. Each session of
  // ours also carries these rules, but a sub-agent's child session is created by OpenCode with rules of its own
  // (only `task: deny`), so without this its commands would run unasked.
  auto permissions = user_permissions ? native::parse_line(*user_permissions) : nlohmann::json();
  if (!permissions.is_object()) permissions = nlohmann::json::object();
  permissions["bash"] = "ask";
  permissions["edit"] = "ask";
  return native::dump(permissions);
}

nlohmann::json mcp_config(const protocol::McpServer& server) {
  if (server.transport == protocol::McpTransport::Http) {
    nlohmann::json config{{"type", "remote"}, {"url", server.url.value_or("")}, {"oauth", false}};
    if (server.headers && server.headers->is_object() && !server.headers->empty()) config["headers"] = *server.headers;
    return config;
  }
  // OpenCode gives an MCP server its own environment, which holds the password we gave it: `env -u` drops it.
  nlohmann::json command = nlohmann::json::array({"env", "-u", "OPENCODE_SERVER_PASSWORD", "--", server.command.value_or("")});
  for (const auto& arg : server.args.value_or(std::vector<std::string>{})) command.push_back(arg);
  nlohmann::json config{{"type", "local"}, {"command", std::move(command)}};
  config["environment"] = stdio_server_environment(server, {});  // our password is unset by `env -u` above
  return config;
}

protocol::McpServerState mcp_state(const protocol::McpServer& server, const nlohmann::json& status) {
  protocol::McpServerState state;
  state.name = server.name;
  state.transport = server.transport;
  const std::string kind = status.is_object() ? native::string_or_empty(status, "status") : std::string();
  if (kind == "connected") {
    state.status = protocol::McpServerStatusKind::Connected;
    return state;
  }
  state.status = protocol::McpServerStatusKind::Failed;
  if (kind == "failed") {
    state.error = native::string_or_empty(status, "error");
  } else if (kind == "needs_auth" || kind == "needs_client_registration") {
    state.error = "OpenCode says the server needs authorization (" + kind + ")";
  } else if (kind == "disabled") {
    state.error = "OpenCode has the server disabled";
  } else {
    state.error = "OpenCode gave no status for it";
  }
  if (state.error->empty()) state.error = "OpenCode could not connect it";
  return state;
}

std::optional<std::string> parse_version_output(std::string_view output) {
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r' || output.back() == ' ')) output.remove_suffix(1);
  if (output.empty() || output.size() > 40 || output.find_first_not_of("0123456789.-abcdefghijklmnopqrstuvwxyz") != std::string_view::npos ||
      output.front() < '0' || output.front() > '9') {
    return std::nullopt;
  }
  return std::string(output);
}

OpenCodeRuntime::OpenCodeRuntime(boost::asio::io_context& io, OpenCodeConfig config)
    : m_io(io),
      m_config(std::move(config)),
      m_probe(VersionProbe::locate(io, probe_spec(m_config))),
      m_server(io, {[this](SseEvent event) { on_event(event); }, [this](const std::string& reason) { server_gone(reason); }}),
      m_idle_timer(io) {}

OpenCodeRuntime::~OpenCodeRuntime() = default;

std::unique_ptr<AgentAdapter> OpenCodeRuntime::create(AdapterListener& listener) {
  return std::make_unique<OpenCodeSession>(m_io, *this, listener);
}

SharedServer::Spec OpenCodeRuntime::server_spec(const std::string& cwd) {
  const std::string secret = random_id("", 24);
  EnvironmentChanges changes;
  changes.set = {{"OPENCODE_SERVER_PASSWORD", secret},
                 {"OPENCODE_PERMISSION", server_permissions(environment_variable("OPENCODE_PERMISSION"))},
                 // No catalogue download at every boot, no self-update: the daemon runs what was installed.
                 {"OPENCODE_DISABLE_MODELS_FETCH", "1"},
                 {"OPENCODE_DISABLE_AUTOUPDATE", "1"}};
  changes.unset = {"OPENCODE_SERVER_USERNAME"};  // the user name is ours to choose: the default, "opencode"
  SharedServer::Spec spec;
  spec.identity = CliIdentity{"OpenCode", "opencode"};
  spec.timeouts = m_config.timeouts;
  spec.launch = CliLaunch{{m_probe->executable(), "serve", "--hostname", "127.0.0.1", "--port", "0"}, cwd,
                          environment_with(changes), "opencode"};
  spec.listening_port = [](std::string_view line) -> std::optional<std::uint16_t> {
    if (line.substr(0, kListening.size()) != kListening) return std::nullopt;
    const auto port = std::stoi(std::string(line.substr(kListening.size())));
    if (port <= 0 || port > 65535) return std::nullopt;
    return static_cast<std::uint16_t>(port);
  };
  // Every directory's events on one stream: a session may work anywhere.
  spec.event_target = "/global/event";
  spec.headers = {{"Authorization", "Basic " + base64("opencode:" + secret)}};
  return spec;
}

void OpenCodeRuntime::when_running(const std::string& cwd, Completion ready) {
  if (m_idle_stopping) {
    m_after_idle_stop.emplace_back(cwd, std::move(ready));
    return;
  }
  // A session starting is activity: until it has attached, the idle stop must not take the server from under it.
  note_activity();
  m_server.when_running([&] { return server_spec(cwd); }, [this, ready = std::move(ready)](std::optional<AdapterError> error) {
    note_activity();
    ready(std::move(error));
  });
}

void OpenCodeRuntime::on_event(const SseEvent& event) {
  // {"directory", "project", "payload": {"id", "type", "properties": {"sessionID", ...}}}
  const auto record = native::parse_line(event.data);
  const auto* payload = record.is_object() ? native::object_at(record, "payload") : nullptr;
  if (payload == nullptr) return spdlog::debug("opencode: an event that is not a /global/event record: {}", event.data.substr(0, 200));
  const auto* properties = native::object_at(*payload, "properties");
  if (properties == nullptr) return;
  std::string session = native::string_or_empty(*properties, "sessionID");
  if (session.empty()) {
    // message.part.updated names its session inside the part.
    if (const auto* part = native::object_at(*properties, "part")) session = native::string_or_empty(*part, "sessionID");
  }
  if (native::string_or_empty(*payload, "type") == "session.created") {
    // A sub-agent's session: its events go to the session of ours its parent (or its parent's parent) belongs to.
    const auto* info = native::object_at(*properties, "info");
    const std::string parent = info != nullptr ? native::string_or_empty(*info, "parentID") : std::string();
    if (!parent.empty() && !session.empty()) {
      const auto grand = m_children.find(parent);
      const std::string& owner = grand != m_children.end() ? grand->second : parent;
      if (m_sessions.count(owner) != 0) m_children[session] = owner;
    }
  }
  auto target = m_sessions.find(session);
  if (target == m_sessions.end()) {
    const auto child = m_children.find(session);
    if (child != m_children.end()) target = m_sessions.find(child->second);
  }
  if (target == m_sessions.end()) return;  // the server's own events, or a session nobody here drives
  target->second->on_server_event(*payload);
}

void OpenCodeRuntime::attach(const std::string& opencode_session_id, OpenCodeSession& session) {
  m_sessions[opencode_session_id] = &session;
  note_activity();
}

void OpenCodeRuntime::detach(const std::string& opencode_session_id) {
  m_sessions.erase(opencode_session_id);
  std::erase_if(m_children, [&](const auto& entry) { return entry.second == opencode_session_id; });
  note_activity();
}

void OpenCodeRuntime::add_mcp_server(const std::string& cwd, const protocol::McpServer& server, const OpenCodeSession& holder,
                                     std::function<void(protocol::McpServerState)> done) {
  const auto config = mcp_config(server);
  const auto key = std::make_pair(cwd, server.name);
  if (const auto held = m_mcp.find(key); held != m_mcp.end()) {
    if (held->second.config != config) {
      protocol::McpServerState state{server.name, server.transport, protocol::McpServerStatusKind::Failed,
                                     "another session in this directory runs an MCP server of this name, configured otherwise "
                                     "(OpenCode keeps MCP servers per directory)",
                                     std::nullopt};
      return done(std::move(state));
    }
    held->second.holders.insert(&holder);
    if (held->second.state) return done(*held->second.state);
    held->second.waiting.push_back(std::move(done));
    return;
  }
  auto& holding = m_mcp[key];
  holding.config = config;
  holding.holders.insert(&holder);
  holding.waiting.push_back(std::move(done));
  holding.registration = ++m_mcp_registrations;
  HttpRequest request;
  request.method = boost::beast::http::verb::post;
  request.target = "/mcp?directory=" + percent_encoded(cwd, "/");
  request.body = native::dump(nlohmann::json{{"name", server.name}, {"config", config}});
  request.content_type = "application/json";
  request.timeout = std::chrono::minutes(2);  // OpenCode answers once the server is connected, or has failed
  // On a connection of its own: the shared one takes one request at a time, and every other session's prompts,
  // answers and aborts would wait behind a server that takes long to connect.
  // That connection outlives the runtime if need be: its answer then finds nobody.
  m_server.send_alone(std::move(request), [weak = std::weak_ptr<OpenCodeRuntime*>(m_self), key, server,
                                           registration = holding.registration](HttpOutcome outcome) {
    const auto self = weak.lock();
    if (!self) return;
    auto& holdings = (*self)->m_mcp;
    const auto held = holdings.find(key);
    // The server went meanwhile (and perhaps a new one registered the same name).
    if (held == holdings.end() || held->second.registration != registration) return;
    protocol::McpServerState state;
    if (auto* failure = std::get_if<HttpFailure>(&outcome)) {
      state = protocol::McpServerState{server.name, server.transport, protocol::McpServerStatusKind::Failed,
                                       "OpenCode did not take it: " + failure->message, std::nullopt};
    } else {
      const auto& response = std::get<HttpResponse>(outcome);
      const auto body = native::parse_line(response.body);
      const auto* status = body.is_object() ? native::object_at(body, server.name) : nullptr;
      state = response.status >= 200 && response.status < 300
                  ? mcp_state(server, status != nullptr ? *status : nlohmann::json())
                  : protocol::McpServerState{server.name, server.transport, protocol::McpServerStatusKind::Failed,
                                             "OpenCode did not take it: HTTP " + std::to_string(response.status) + ": " +
                                                 response.body.substr(0, 300),
                                             std::nullopt};
    }
    held->second.state = state;
    for (auto& waiting : std::exchange(held->second.waiting, {})) waiting(state);
  });
}

void OpenCodeRuntime::release_mcp_servers(const OpenCodeSession& holder) {
  for (auto held = m_mcp.begin(); held != m_mcp.end();) {
    if (held->second.holders.erase(&holder) == 0 || !held->second.holders.empty()) {
      ++held;
      continue;
    }
    // The last session holding it is done with it: disconnecting ends its process. (OpenCode has no way to remove
    // one; it stays listed as disabled until the server stops.)
    const auto& [cwd, name] = held->first;
    if (m_server.running()) {
      HttpRequest request;
      request.method = boost::beast::http::verb::post;
      request.target = "/mcp/" + percent_encoded(name, "") + "/disconnect?directory=" + percent_encoded(cwd, "/");
      m_server.send(std::move(request), [name = name](HttpOutcome outcome) {
        const auto* response = std::get_if<HttpResponse>(&outcome);
        if (response == nullptr || response->status >= 300) spdlog::warn("opencode: the MCP server {} could not be disconnected", name);
      });
    }
    held = m_mcp.erase(held);
  }
}

void OpenCodeRuntime::forget_mcp_servers() {
  auto held = std::exchange(m_mcp, {});
  for (auto& [key, holding] : held) {
    for (auto& waiting : holding.waiting) {
      waiting(protocol::McpServerState{key.second, protocol::McpTransport::Stdio, protocol::McpServerStatusKind::Failed,
                                       "the OpenCode server stopped", std::nullopt});
    }
  }
}

std::vector<std::string> OpenCodeRuntime::foreign_mcp_servers(const std::string& cwd, const OpenCodeSession& holder) const {
  std::vector<std::string> names;
  for (const auto& [key, holding] : m_mcp) {
    if (key.first == cwd && holding.holders.count(&holder) == 0) names.push_back(key.second);
  }
  return names;
}

void OpenCodeRuntime::note_activity() {
  m_last_activity = std::chrono::steady_clock::now();
  // Once the daemon stops, nothing may arm the timer again: sessions detach while they stop, and a wait armed then
  // would keep the io_context, and so the daemon, running for the whole idle period.
  if (m_stopping || m_config.idle_stop.count() == 0 || !m_server.running()) return;
  arm_idle_timer(m_config.idle_stop);
}

void OpenCodeRuntime::arm_idle_timer(std::chrono::milliseconds after) {
  m_idle_timer.expires_after(after);  // cancels a wait already armed
  m_idle_timer.async_wait([this](boost::system::error_code error) {
    if (!error) on_idle_timer();
  });
}

void OpenCodeRuntime::on_idle_timer() {
  if (!m_server.running()) return;
  const auto idle = std::chrono::steady_clock::now() - m_last_activity;
  const bool working = std::any_of(m_sessions.begin(), m_sessions.end(), [](const auto& entry) { return entry.second->turn_running(); });
  if (working || idle < m_config.idle_stop) {
    // A turn waiting for a permission answer sends nothing for a long time: it is not idle.
    return arm_idle_timer(working ? m_config.idle_stop : std::chrono::duration_cast<std::chrono::milliseconds>(m_config.idle_stop - idle));
  }
  spdlog::info("opencode: no turn for {} s: the server stops to free its memory; its sessions resume on a new one",
               std::chrono::duration_cast<std::chrono::seconds>(idle).count());
  // The sessions stop first, quietly (stopped, not lost): their next prompt resumes them on a new server.
  m_children.clear();
  forget_mcp_servers();  // their processes end with the server
  auto sessions = std::exchange(m_sessions, {});
  for (auto& [id, session] : sessions) session->server_lost("the OpenCode server was stopped after it was idle");
  m_idle_stopping = true;
  m_server.stop([this] {
    m_idle_stopping = false;
    for (auto& [cwd, ready] : std::exchange(m_after_idle_stop, {})) when_running(cwd, std::move(ready));
  });
}

void OpenCodeRuntime::server_gone(const std::string& reason) {
  m_idle_timer.cancel();  // the next server arms it again
  m_children.clear();
  forget_mcp_servers();
  auto sessions = std::exchange(m_sessions, {});
  for (auto& [id, session] : sessions) session->server_lost(reason);
}

void OpenCodeRuntime::stop(std::function<void()> done) {
  m_stopping = true;
  m_idle_timer.cancel();
  for (auto& [cwd, ready] : std::exchange(m_after_idle_stop, {})) {
    ready(AdapterError{protocol::ErrorCode::AgentUnavailable, "the daemon is stopping"});
  }
  m_probe->stop();
  m_server.stop(std::move(done));
}

}  // namespace switchboard::adapters::opencode
