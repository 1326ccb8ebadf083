#include "acp/AcpServer.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "acp/AcpErrors.h"
#include "acp/AcpMcpServers.h"
#include "acp/AcpPermissions.h"
#include "acp/AcpPrompt.h"
#include "acp/AcpUpdates.h"
#include "acp/JsonMembers.h"
#include "switchboard/json/DecodeContext.h"
#include "switchboard/json/JsonWriter.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

namespace switchboard::acp {
namespace acp_server_detail {

namespace p = protocol;

// The one ACP protocol version this agent speaks.
constexpr int kAcpProtocolVersion = 1;
// An editor's lines are requests and prompts; a prompt with an embedded image is the largest.
constexpr std::size_t kMaxEditorLineBytes = 64 * 1024 * 1024;
// session.events pages of the replay.
constexpr int kReplayPage = 1000;
constexpr std::size_t kStoppedTurnsKept = 64;

// ACP's stopReason for ours; nullopt for `error`, which ACP has not (the prompt fails instead).
std::optional<std::string> acp_stop_reason(p::StopReason ours) {
  if (ours == p::StopReason::Error) return std::nullopt;
  return std::string(p::to_string(ours));
}

// What the daemon sent, as the schema types it. The daemon speaks the schema this binary was built from: a
// message that does not decode is a bug, logged with where it went wrong.
template <class T>
std::optional<T> decoded(const nlohmann::json& text, std::string_view what) {
  T value{};
  json::DecodeContext context;
  if (p::decode(text, value, context)) return value;
  const auto& error = context.error();
  spdlog::error("acp: {} from the daemon does not decode: {}: expected {}, got {}", what, error.pointer, error.expected, error.actual);
  return std::nullopt;
}

// A typed value back as JSON, for the parts of our messages the editor gets as they are (usage in _meta).
template <class T>
nlohmann::json as_json(const T& value) {
  std::string text;
  {
    json::JsonWriter writer(text);
    p::encode(writer, value);
  }
  return nlohmann::json::parse(text);
}

// The result of a call whose failure the editor does not hear of (the daemon's own error is expected: a
// session deleted meanwhile, say); nullopt then, or when the result does not decode.
template <class Method>
std::optional<typename Method::Result> quiet_result(const nlohmann::json& response) {
  if (!response.is_object() || !response.contains("result")) {
    spdlog::debug("acp: {} failed: {}", Method::kName, response.dump());
    return std::nullopt;
  }
  return decoded<typename Method::Result>(response["result"], std::string(Method::kName) + "'s answer");
}

// The mode the session runs in: its own, else the agent's default (the first it lists).
std::string current_mode(const p::SessionInfo& session, const std::vector<std::string>& modes) {
  return session.mode && !session.mode->empty() ? *session.mode : modes.front();
}

}  // namespace acp_server_detail

using namespace acp_server_detail;

AcpServer::AcpServer(boost::asio::io_context& io, Options options, int daemon_fd, int in_fd, int out_fd, std::function<void(int)> done)
    : m_io(io),
      m_options(std::move(options)),
      m_done(std::move(done)),
      m_daemon(
          io, daemon_fd, [this](std::string_view, const Json& envelope) { on_event(envelope); }, [this] { on_daemon_closed(); }),
      m_in_fd(in_fd),
      m_framer(kMaxEditorLineBytes,
               transport::LineFramer::Handler{[this](std::string_view line) { on_editor_line(line); },
                                              [](std::size_t limit) { spdlog::error("acp: a line from the editor is over {} bytes; skipped", limit); }}),
      m_writer(std::make_shared<transport::FdWriter>(io, out_fd)) {}

AcpServer::~AcpServer() {
  if (m_reader) m_reader->stop();
}

void AcpServer::start() {
  m_daemon.start();
  m_reader = transport::FdReader::create(
      m_io, m_in_fd, [this](std::string_view chunk) { m_framer.feed(chunk); }, [this] { on_editor_end(); });
  m_reader->start();
  Json params{{"protocolVersion", protocol::kProtocolVersion},
              {"clientInfo", {{"name", "switchboard-acp"}, {"version", std::string(kVersion)}}},
              {"capabilities", {{"answersPermissions", true}}}};
  m_daemon.call(p::InitializeMethod::kName, std::move(params), [this](const Json& response) { daemon_initialized(response); });
}

void AcpServer::stop() {
  if (m_finished) return;
  m_editor_gone = true;
  m_daemon.finish();
}

// ---- the editor's side ----

void AcpServer::on_editor_line(std::string_view line) {
  if (m_finished) return;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (!m_daemon_ready) {
    m_held_lines.emplace_back(line);
    return;
  }
  const auto message = Json::parse(line, nullptr, false);
  if (!message.is_object()) return reply_error(nullptr, acp_error(AcpErrorCode::ParseError, "the line is not a JSON object"));
  const auto method = string_member(message, "method");
  const bool has_id = message.contains("id") && !message["id"].is_null();
  const auto& params = message.contains("params") ? message["params"] : Json::object();
  if (!method.empty()) {
    if (has_id) return on_request(message["id"], method, params);
    return on_notification(method, params);
  }
  if (has_id && (message.contains("result") || message.contains("error"))) return on_editor_response(message);
  reply_error(has_id ? message["id"] : Json(nullptr), acp_error(AcpErrorCode::InvalidRequest, "not a JSON-RPC 2.0 request"));
}

void AcpServer::on_editor_end() {
  m_framer.finish();
  if (m_finished) return;
  // The editor went away (or closed our stdin to end us): the user's daemon keeps the sessions and their
  // running turns; a daemon in this process shuts down when its connection ends.
  stop();
}

void AcpServer::on_request(const Json& id, const std::string& method, const Json& params) {
  // clang-format off
  if (method == "initialize") return initialize(id, params);
  if (method == "authenticate") return reply(id, Json::object());  // no auth methods are offered
  if (method == "session/new") return new_session(id, params);
  if (method == "session/load") return load_session(id, params);
  if (method == "session/list") return list_sessions(id, params);
  if (method == "session/resume") return resume_session(id, params);
  if (method == "session/close") return close_session(id, params);
  if (method == "session/prompt") return prompt(id, params);
  if (method == "session/set_mode") return set_mode(id, params);
  if (method == "session/set_config_option") return set_config_option(id, params);
  if (method == "session/fork") return fork_session(id, params);
  // clang-format on
  reply_error(id, acp_error(AcpErrorCode::MethodNotFound, "switchboard acp does not implement " + method));
}

void AcpServer::on_notification(const std::string& method, const Json& params) {
  if (method == "session/cancel") return cancel(params);
  // $/cancel_request for one of our answers-in-progress and extension notifications: nothing to do.
}

void AcpServer::on_editor_response(const Json& message) {
  if (!message["id"].is_number_integer()) return;
  const auto it = m_asked.find(message["id"].get<std::int64_t>());
  if (it == m_asked.end()) return;  // withdrawn already: another client answered first
  auto asked = std::move(it->second);
  m_asked.erase(it);
  const auto& result = message.contains("result") ? message["result"] : Json(nullptr);
  // AlreadyAnswered: another client was first, in the moment between; its answer stands.
  m_daemon.call(p::PermissionRespondMethod::kName, permission_respond_params(asked.request, result), [](const Json&) {});
}

void AcpServer::reply(const Json& id, Json result) {
  send_to_editor(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void AcpServer::reply_error(const Json& id, Json error) {
  send_to_editor(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}});
}

void AcpServer::notify_update(const std::string& session_id, Json update) {
  send_to_editor(Json{{"jsonrpc", "2.0"},
                      {"method", "session/update"},
                      {"params", {{"sessionId", session_id}, {"update", std::move(update)}}}});
}

void AcpServer::send_to_editor(const Json& message) {
  if (m_finished) return;
  m_writer->write(message.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n");
}

// ---- the methods ----

void AcpServer::initialize(const Json& id, const Json& params) {
  // Version negotiation: the client's version when we speak it, else ours (the client then decides).
  (void)params;
  // What the hosted agent can do decides two capabilities: MCP servers (stdio always, Streamable HTTP too; SSE
  // is not among our transports) and session/fork (unstable in ACP).
  with_agent_modes([this, id] {
    Json sessions{{"list", Json::object()}, {"resume", Json::object()}, {"close", Json::object()}};
    if (m_agent_capabilities.fork) sessions["fork"] = Json::object();
    reply(id, initialize_result(m_agent_capabilities.mcp, std::move(sessions)));
  });
}

Json AcpServer::initialize_result(bool mcp, Json session_capabilities) const {
  Json result{{"protocolVersion", kAcpProtocolVersion},
              {"agentCapabilities",
               {{"loadSession", true},
                {"promptCapabilities", {{"image", true}, {"audio", false}, {"embeddedContext", true}}},
                {"mcpCapabilities", {{"http", mcp}, {"sse", false}}},
                {"sessionCapabilities", std::move(session_capabilities)}}},
              {"authMethods", Json::array()},
              {"agentInfo", {{"name", "switchboard"}, {"title", "Switchboard: " + m_options.agent}, {"version", std::string(kVersion)}}},
              // fs/* and terminal/* of the client are never called: the hosted agents read, write and run with
              // their own tools, under the daemon's permission rules.
              {"_meta",
               {{"switchboard",
                 {{"agent", m_options.agent},
                  {"attached", m_options.attached},
                  {"usesClientCapabilities", Json::array()},
                  {"note", "fs/* and terminal/* client methods are not used: the agent uses its own tools"}}}}}};
  return result;
}

template <class Method>
std::optional<typename Method::Result> AcpServer::result_or_reply(const Json& id, const Json& response, std::string_view what) {
  if (!response.contains("result")) {
    reply_error(id, acp_error_of(response, what));
    return std::nullopt;
  }
  auto result = decoded<typename Method::Result>(response["result"], std::string(Method::kName) + "'s answer");
  if (!result) reply_error(id, acp_error(AcpErrorCode::InternalError, std::string(what) + ": the daemon's answer could not be read"));
  return result;
}

AcpServer::OpenSession* AcpServer::open_session(const std::string& session_id) {
  const auto it = m_sessions.find(session_id);
  return it == m_sessions.end() ? nullptr : &it->second;
}

void AcpServer::with_agent_modes(std::function<void()> then) {
  if (m_agent_modes) return then();
  m_waiting_for_modes.push_back(std::move(then));
  if (m_waiting_for_modes.size() > 1) return;
  m_daemon.call(p::AgentsListMethod::kName, Json::object(), [this](const Json& response) {
    std::vector<std::string> modes;
    // Without an answer it can read, the editor is offered no modes; the sessions still work.
    if (auto listed = quiet_result<p::AgentsListMethod>(response)) {
      for (auto& agent : listed->agents) {
        if (agent.agent != m_options.agent) continue;
        m_agent_capabilities = agent.capabilities;
        if (agent.modes) modes = std::move(*agent.modes);
      }
    }
    m_agent_modes = std::move(modes);
    for (auto& waiting : std::exchange(m_waiting_for_modes, {})) waiting();
  });
}

Json AcpServer::mode_state(const p::SessionInfo& session) const {
  if (!m_agent_modes || m_agent_modes->empty()) return nullptr;
  Json available = Json::array();
  for (const auto& mode : *m_agent_modes) available.push_back(Json{{"id", mode}, {"name", mode}});
  return Json{{"currentModeId", current_mode(session, *m_agent_modes)}, {"availableModes", std::move(available)}};
}

Json AcpServer::session_setup(const p::SessionInfo& session) {
  Json result = Json::object();
  if (auto modes = mode_state(session); !modes.is_null()) result["modes"] = std::move(modes);
  auto options = config_options(session, m_agent_modes.value_or(std::vector<std::string>{}));
  if (!options.empty()) result["configOptions"] = options;
  // Only for sessions this editor follows (set_config_option may name another).
  if (auto* open = open_session(session.session_id)) open->sent_options = std::move(options);
  return result;
}

void AcpServer::new_session(const Json& id, const Json& params) {
  auto cwd = string_member(params, "cwd");
  if (cwd.empty()) cwd = m_options.default_cwd;
  if (cwd.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/new needs a cwd"));
  const auto* editor_servers = params.contains("mcpServers") ? &params["mcpServers"] : nullptr;
  auto servers = mcp_servers_of(editor_servers != nullptr ? *editor_servers : Json());
  if (auto* refused = std::get_if<std::string>(&servers)) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, *refused));
  with_agent_modes([this, id, cwd, servers = std::get<Json>(std::move(servers))]() mutable {
    Json call{{"agent", m_options.agent}, {"cwd", cwd}};
    // The editor's MCP servers go to the agent with the session; an agent that takes none (its capabilities say
    // so) gets none, and the session is still made: editors send the user's servers with every session/new.
    if (!servers.empty() && m_agent_capabilities.mcp) {
      call["mcpServers"] = std::move(servers);
    } else if (!servers.empty()) {
      spdlog::info("acp: {} takes no MCP servers; the editor's {} are not passed on", m_options.agent, servers.size());
    }
    m_daemon.call(p::SessionCreateMethod::kName, std::move(call), [this, id](const Json& response) {
      auto created = result_or_reply<p::SessionCreateMethod>(id, response, "session/new");
      if (!created) return;
      m_sessions.try_emplace(created->session.session_id);
      Json result = session_setup(created->session);
      result["sessionId"] = created->session.session_id;
      reply(id, std::move(result));
    });
  });
}

void AcpServer::fork_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/fork needs a sessionId"));
  // The fork works where its origin does, with the origin's MCP servers: the cwd and mcpServers the editor
  // passes are not used (docs/acp.md).
  m_daemon.call(p::SessionForkMethod::kName, Json{{"sessionId", session_id}}, [this, id](const Json& response) {
    auto forked = result_or_reply<p::SessionForkMethod>(id, response, "session/fork");
    if (!forked) return;
    m_sessions.try_emplace(forked->session.session_id);
    with_agent_modes([this, id, session = std::move(forked->session)] {
      Json result = session_setup(session);
      result["sessionId"] = session.session_id;
      reply(id, std::move(result));
    });
  });
}

void AcpServer::load_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/load needs a sessionId"));
  m_daemon.call(p::SessionGetMethod::kName, Json{{"sessionId", session_id}}, [this, id, session_id](const Json& response) {
    auto got = result_or_reply<p::SessionGetMethod>(id, response, "session/load");
    if (!got) return;
    auto replay = std::make_shared<Replay>();
    replay->acp_id = id;
    replay->session_id = session_id;
    replay->session = std::move(got->session);
    // From now on its live events are held, and sent after the stored ones that came before them.
    const auto [open, opened] = m_sessions.try_emplace(session_id);
    replay->opened_session = opened;
    open->second.replay = replay;
    replay_page(replay);
  });
}

void AcpServer::replay_page(std::shared_ptr<Replay> replay) {
  Json params{{"sessionId", replay->session_id}, {"afterSeq", replay->last_seq}, {"limit", kReplayPage}};
  m_daemon.call(p::SessionEventsMethod::kName, std::move(params), [this, replay](const Json& response) {
    auto page = result_or_reply<p::SessionEventsMethod>(replay->acp_id, response, "session/load");
    if (!page) {
      // A session this load began to follow is followed no more, unless a prompt of the editor's waits on it.
      if (auto* open = open_session(replay->session_id); open != nullptr && open->replay == replay) {
        open->replay.reset();
        if (replay->opened_session && open->prompts.empty()) m_sessions.erase(replay->session_id);
      }
      return;
    }
    // The events as the daemon sent them: the updates are made from the envelope, the seqs read typed.
    const auto& events = response["result"]["events"];
    for (std::size_t i = 0; i < page->events.size(); ++i) {
      replay->last_seq = std::max(replay->last_seq, page->events[i].seq);
      for (auto& update : updates_for_event(events[i], UpdateReading::Replay, replay->shown_diffs)) notify_update(replay->session_id, std::move(update));
    }
    if (page->next_after_seq) {
      replay->last_seq = *page->next_after_seq;
      return replay_page(replay);
    }
    finish_replay(replay);
  });
}

void AcpServer::finish_replay(const std::shared_ptr<Replay>& replay) {
  auto* open = open_session(replay->session_id);
  // Closed while the stored events were read: the load is answered, and nothing of the session follows.
  const bool followed = open != nullptr && open->replay == replay;
  if (followed) open->replay.reset();
  with_agent_modes([this, replay, followed] {
    reply(replay->acp_id, session_setup(replay->session));
    auto* session = open_session(replay->session_id);
    if (!followed || session == nullptr) return;
    // What happened while the stored events were read, in order, without what the replay already showed.
    for (const auto& envelope : replay->held) {
      if (envelope.value("seq", std::int64_t{0}) > replay->last_seq) forward_live(replay->session_id, *session, envelope);
    }
    ask_open_permissions(replay->session_id);
  });
}

void AcpServer::list_sessions(const Json& id, const Json& params) {
  Json query{{"agent", m_options.agent}, {"limit", 100}};
  const auto cwd = string_member(params, "cwd");
  if (!cwd.empty()) query["cwd"] = cwd;
  const auto cursor = string_member(params, "cursor");
  if (!cursor.empty()) query["cursor"] = cursor;
  m_daemon.call(p::SessionListMethod::kName, std::move(query), [this, id](const Json& response) {
    const auto listed = result_or_reply<p::SessionListMethod>(id, response, "session/list");
    if (!listed) return;
    Json sessions = Json::array();
    for (const auto& session : listed->sessions) {
      Json info{{"sessionId", session.session_id}, {"cwd", session.cwd}, {"updatedAt", iso_time(session.updated_at)}};
      if (session.title && !session.title->empty()) info["title"] = *session.title;
      sessions.push_back(std::move(info));
    }
    Json result{{"sessions", std::move(sessions)}};
    if (listed->next_cursor) result["nextCursor"] = *listed->next_cursor;
    reply(id, std::move(result));
  });
}

void AcpServer::resume_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/resume needs a sessionId"));
  m_daemon.call(p::SessionGetMethod::kName, Json{{"sessionId", session_id}}, [this, id, session_id](const Json& response) {
    auto got = result_or_reply<p::SessionGetMethod>(id, response, "session/resume");
    if (!got) return;
    // Like session/load without the replay: its events are followed from now on.
    m_sessions.try_emplace(session_id);
    with_agent_modes([this, id, session = std::move(got->session)] {
      reply(id, session_setup(session));
      ask_open_permissions(session.session_id);
    });
  });
}

void AcpServer::ask_open_permissions(const std::string& session_id) {
  // A request that was open before the editor came (another client's turn waits on it) is the editor's to
  // answer too: the session's snapshot has them.
  m_daemon.call(p::SessionAttachMethod::kName, Json{{"sessionId", session_id}}, [this](const Json& response) {
    const auto attached = quiet_result<p::SessionAttachMethod>(response);
    if (!attached) return;
    for (const auto& request : attached->permissions) {
      if (request.state == p::PermissionRequestState::Open) ask_permission(request);  // not one being answered
    }
  });
}

void AcpServer::close_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  const auto open = m_sessions.find(session_id);
  if (open == m_sessions.end()) return reply_error(id, acp_error(AcpErrorCode::ResourceNotFound, "session/close: the session is not open here"));
  // ACP: closing cancels the session's work. The session itself stays stored (the console and session/load
  // still have it); this editor stops following it, so its prompts answer `cancelled` now and its open
  // permission requests are withdrawn.
  for (const auto& pending : open->second.prompts) reply(pending.acp_id, Json{{"stopReason", "cancelled"}});
  m_sessions.erase(open);
  std::vector<std::string> asked;
  for (const auto& [editor_id, permission] : m_asked) {
    if (permission.request.session_id == session_id) asked.push_back(permission.request.request_id);
  }
  for (const auto& request_id : asked) withdraw_permission(request_id);
  m_daemon.call(p::SessionCancelMethod::kName, Json{{"sessionId", session_id}}, [this, id](const Json&) { reply(id, Json::object()); });
}

void AcpServer::prompt(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/prompt needs a sessionId"));
  auto read = prompt_for_send(params.contains("prompt") ? params["prompt"] : Json(nullptr), m_options.spill_dir);
  if (auto* why = std::get_if<std::string>(&read)) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, *why));
  auto& prompt = std::get<PromptForSend>(read);
  Json send{{"sessionId", session_id}, {"text", prompt.text}, {"wait", false}};
  if (!prompt.attachments.empty()) send["attachments"] = prompt.attachments;
  // A session the editor names without session/load (it remembered the id) is followed from now on: from
  // before the send, since the turn's first events may come before its reply.
  const bool was_open = !m_sessions.try_emplace(session_id).second;
  m_daemon.call(p::SessionSendMethod::kName, std::move(send), [this, id, session_id, was_open](const Json& response) {
    const auto sent = result_or_reply<p::SessionSendMethod>(id, response, "session/prompt");
    auto* session = open_session(session_id);
    if (!sent) {
      if (!was_open && session != nullptr && session->prompts.empty() && !session->replay) m_sessions.erase(session_id);
      return;
    }
    // Closed while the send was on its way: like the session's other prompts, it answers `cancelled`.
    if (session == nullptr) return reply(id, Json{{"stopReason", "cancelled"}});
    PendingPrompt pending{id, std::nullopt, std::nullopt, false};
    if (sent->queued) {
      // Behind a running turn (another client's, or this editor's previous prompt): ours is the turn.started
      // that names this queue id.
      pending.queue_id = sent->queue_id;
    } else {
      pending.turn_id = sent->turn_id;
      auto& stopped = session->stopped_turns;
      const auto over = std::find_if(stopped.begin(), stopped.end(), [&](const auto& turn) { return turn.turn_id == sent->turn_id; });
      if (over != stopped.end()) {
        const auto turn = std::move(*over);
        stopped.erase(over);
        return answer_prompt(pending, turn);  // over before the reply was read
      }
    }
    session->prompts.push_back(std::move(pending));
  });
}

void AcpServer::set_mode(const Json& id, const Json& params) {
  Json call{{"sessionId", string_member(params, "sessionId")}, {"mode", string_member(params, "modeId")}};
  m_daemon.call(p::SessionSetModeMethod::kName, std::move(call), [this, id](const Json& response) {
    if (result_or_reply<p::SessionSetModeMethod>(id, response, "session/set_mode")) reply(id, Json::object());
  });
}

void AcpServer::set_config_option(const Json& id, const Json& params) {
  const auto config_id = string_member(params, "configId");
  if (config_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/set_config_option needs a configId"));
  const bool is_model = config_id == "model";
  // A boolean comes as {"type": "boolean", "value": true}; everything else is a value id (a string).
  const bool is_boolean = params.contains("value") && params["value"].is_boolean();
  const auto value = is_boolean ? std::string(params["value"].get<bool>() ? "true" : "false") : string_member(params, "value");
  if (value.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/set_config_option needs a value"));
  auto answer = [this, id](p::SessionInfo session) {
    with_agent_modes([this, id, session = std::move(session)] {
      reply(id, Json{{"configOptions", session_setup(session).value("configOptions", Json::array())}});
    });
  };
  if (!is_model && config_id != "mode") {
    // One of the agent's own options (reasoning effort, ...): the daemon checks the id and the value.
    Json call{{"sessionId", string_member(params, "sessionId")}, {"optionId", config_id}, {"value", value}};
    return m_daemon.call(p::SessionSetOptionMethod::kName, std::move(call), [this, id, answer](const Json& response) {
      if (auto set = result_or_reply<p::SessionSetOptionMethod>(id, response, "session/set_config_option")) answer(std::move(set->session));
    });
  }
  Json call{{"sessionId", string_member(params, "sessionId")}, {is_model ? "model" : "mode", value}};
  if (is_model) {
    return m_daemon.call(p::SessionSetModelMethod::kName, std::move(call), [this, id, answer](const Json& response) {
      if (auto set = result_or_reply<p::SessionSetModelMethod>(id, response, "session/set_config_option")) answer(std::move(set->session));
    });
  }
  m_daemon.call(p::SessionSetModeMethod::kName, std::move(call), [this, id, answer](const Json& response) {
    if (auto set = result_or_reply<p::SessionSetModeMethod>(id, response, "session/set_config_option")) answer(std::move(set->session));
  });
}

void AcpServer::cancel(const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (auto* session = open_session(session_id)) {
    for (auto& pending : session->prompts) {
      // The running turn's prompt answers `cancelled` whatever the turn's own end says; prompts still queued
      // stay queued (docs/acp.md).
      if (pending.turn_id) pending.cancel_requested = true;
    }
  }
  m_daemon.call(p::SessionCancelMethod::kName, Json{{"sessionId", session_id}}, [](const Json&) {});
}

// ---- the daemon's side ----

void AcpServer::daemon_initialized(const Json& response) {
  if (m_on_daemon_initialized) std::exchange(m_on_daemon_initialized, nullptr)();
  if (!response.contains("result")) {
    spdlog::error("acp: the daemon refused initialize: {}", response.dump());
    m_daemon.finish();
    return;
  }
  m_daemon_ready = true;
  for (const auto& line : std::exchange(m_held_lines, {})) on_editor_line(line);
}

void AcpServer::on_event(const Json& envelope) {
  if (m_finished) return;
  const auto session_id = string_member(envelope, "sessionId");
  auto* session = session_id.empty() ? nullptr : open_session(session_id);
  if (session == nullptr) return;
  if (session->replay) {
    session->replay->held.push_back(envelope);
    return;
  }
  forward_live(session_id, *session, envelope);
}

void AcpServer::forward_live(const std::string& session_id, OpenSession& session, const Json& envelope) {
  const auto type = string_member(envelope, "type");
  const auto& data = object_member(envelope, "data");
  if (type == "tool.started") {
    if (const auto started = decoded<p::ToolStartedEvent>(data, "tool.started")) {
      session.running_tools.push_back(RunningTool{started->tool, started->tool_call_id});
    }
  } else if (type == "tool.completed") {
    if (const auto completed = decoded<p::ToolCompletedEvent>(data, "tool.completed")) {
      std::erase_if(session.running_tools, [&](const RunningTool& tool) { return tool.tool_call_id == completed->tool_call_id; });
    }
  }
  for (auto& update : updates_for_event(envelope, UpdateReading::Live, session.shown_diffs)) notify_update(session_id, std::move(update));
  if (type == "session.updated") {
    if (const auto updated = decoded<p::SessionUpdatedEvent>(data, "session.updated")) update_config_options(updated->session);
  } else if (type == "permission.requested") {
    if (const auto requested = decoded<p::PermissionRequestedEvent>(data, "permission.requested")) ask_permission(requested->request);
  } else if (type == "permission.resolved") {
    if (const auto resolved = decoded<p::PermissionResolvedEvent>(data, "permission.resolved")) withdraw_permission(resolved->request_id);
  } else if (type == "turn.started") {
    if (const auto started = decoded<p::TurnStartedEvent>(data, "turn.started")) turn_started(session, *started);
  } else if (type == "turn.stopped") {
    if (auto stopped = decoded<p::TurnStoppedEvent>(data, "turn.stopped")) turn_stopped(session, std::move(*stopped));
  }
}

void AcpServer::update_config_options(const p::SessionInfo& info) {
  // Sent when the choices or a current value changed (a model list that arrived with the agent's start, a
  // switch made by another client), not at every rename.
  with_agent_modes([this, info] {
    auto* session = open_session(info.session_id);
    if (session == nullptr) return;
    auto options = config_options(info, m_agent_modes.value_or(std::vector<std::string>{}));
    if (options == session->sent_options) return;
    session->sent_options = options;
    notify_update(info.session_id, Json{{"sessionUpdate", "config_option_update"}, {"configOptions", std::move(options)}});
  });
}

void AcpServer::turn_started(OpenSession& session, const p::TurnStartedEvent& started) {
  if (!started.queue_id) return;
  for (auto& pending : session.prompts) {
    if (pending.queue_id == started.queue_id) pending.turn_id = started.turn_id;
  }
}

void AcpServer::turn_stopped(OpenSession& session, p::TurnStoppedEvent stopped) {
  session.running_tools.clear();
  session.shown_diffs.clear();  // calls that never completed
  const auto ours = std::find_if(session.prompts.begin(), session.prompts.end(),
                                 [&](const PendingPrompt& pending) { return pending.turn_id == stopped.turn_id; });
  if (ours != session.prompts.end()) {
    const auto pending = std::move(*ours);
    session.prompts.erase(ours);
    return answer_prompt(pending, stopped);
  }
  session.stopped_turns.push_back(std::move(stopped));
  if (session.stopped_turns.size() > kStoppedTurnsKept) session.stopped_turns.pop_front();
}

void AcpServer::answer_prompt(const PendingPrompt& pending, const p::TurnStoppedEvent& stopped) {
  if (pending.cancel_requested) return reply(pending.acp_id, Json{{"stopReason", "cancelled"}});
  if (auto reason = acp_stop_reason(stopped.stop_reason)) {
    Json result{{"stopReason", *reason}};
    // ACP v1 has no per-turn token usage (usage_update wants the context window's size, which agents do not
    // report): ours travels in the answer's _meta, as {inputTokens, outputTokens, cacheReadTokens, costUsd}.
    if (stopped.usage) result["_meta"] = Json{{"switchboard", {{"usage", as_json(*stopped.usage)}}}};
    return reply(pending.acp_id, std::move(result));
  }
  const auto why = stopped.error.value_or("");
  reply_error(pending.acp_id, acp_error(AcpErrorCode::InternalError, "the turn failed" + (why.empty() ? std::string() : ": " + why)));
}

void AcpServer::ask_permission(const p::PermissionRequest& request) {
  const auto asked_already = [this](const std::string& request_id) {
    return std::any_of(m_asked.begin(), m_asked.end(), [&](const auto& asked) { return asked.second.request.request_id == request_id; });
  };
  if (request.request_id.empty() || asked_already(request.request_id)) return;
  // The daemon resolves rule-matched asks right after announcing them: ask only what is still open once the
  // events already received were read.
  boost::asio::post(m_io, [this, request, asked_already] {
    auto* session = open_session(request.session_id);
    if (m_finished || session == nullptr || asked_already(request.request_id)) return;
    if (m_resolved_requests.erase(request.request_id) > 0) return;
    std::string tool_call_id = "permission-" + request.request_id;
    const auto& running = session->running_tools;
    const auto named = std::find_if(running.rbegin(), running.rend(), [&](const RunningTool& tool) { return tool.tool == request.tool; });
    if (named != running.rend()) tool_call_id = named->tool_call_id;
    const std::int64_t id = m_next_editor_id++;
    m_asked.emplace(id, AskedPermission{request});
    send_to_editor(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session/request_permission"},
                        {"params", permission_request_params(request, tool_call_id)}});
  });
}

void AcpServer::withdraw_permission(const std::string& request_id) {
  if (m_resolved_requests.size() > 1000) m_resolved_requests.clear();
  m_resolved_requests.insert(request_id);
  const auto it = std::find_if(m_asked.begin(), m_asked.end(), [&](const auto& asked) { return asked.second.request.request_id == request_id; });
  if (it == m_asked.end()) return;
  // Answered elsewhere first (console, TUI, a rule, a cancel): ACP's way to take a request back is
  // $/cancel_request; the editor's late answer, if any, is then ignored.
  const auto id = it->first;
  m_asked.erase(it);
  send_to_editor(Json{{"jsonrpc", "2.0"}, {"method", "$/cancel_request"}, {"params", {{"requestId", id}}}});
}

void AcpServer::on_daemon_closed() {
  if (m_finished) return;
  for (auto& [session_id, session] : m_sessions) {
    for (auto& pending : std::exchange(session.prompts, {})) {
      reply_error(pending.acp_id, acp_error(AcpErrorCode::InternalError, "the daemon closed the connection before the turn ended"));
    }
  }
  if (!m_editor_gone) spdlog::warn("acp: the daemon closed the connection");
  // What was written to the editor leaves first.
  m_writer->when_drained([this, code = m_editor_gone ? 0 : 1] { finish(code); });
}

void AcpServer::finish(int code) {
  if (m_finished) return;
  m_finished = true;
  if (m_reader) m_reader->stop();
  m_done(code);
}

}  // namespace switchboard::acp
