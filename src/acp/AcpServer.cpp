#include "acp/AcpServer.h"

#include <unistd.h>

#include <chrono>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "acp/AcpErrors.h"
#include "acp/AcpPermissions.h"
#include "acp/AcpPrompt.h"
#include "acp/AcpUpdates.h"
#include "acp/JsonMembers.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

namespace switchboard::acp {
namespace acp_server_detail {


// The one ACP protocol version this agent speaks.
constexpr int kAcpProtocolVersion = 1;
// An editor's lines are requests and prompts; a prompt with an embedded image is the largest.
constexpr std::size_t kMaxEditorLineBytes = 64 * 1024 * 1024;
// session.events pages of the replay.
constexpr int kReplayPage = 1000;
constexpr std::size_t kStoppedTurnsKept = 64;

// ACP's stopReason for ours; nullopt for `error`, which ACP has not (the prompt fails instead).
std::optional<std::string> acp_stop_reason(const std::string& ours) {
  if (ours == "end_turn" || ours == "cancelled" || ours == "max_tokens" || ours == "refusal") return ours;
  return std::nullopt;
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
  m_daemon.call("initialize", std::move(params), [this](const Json& response) { daemon_initialized(response); });
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
  m_asked_by_request.erase(string_member(asked.request, "requestId"));
  const auto& result = message.contains("result") ? message["result"] : Json(nullptr);
  // AlreadyAnswered: another client was first, in the moment between; its answer stands.
  m_daemon.call("permission.respond", permission_respond_params(asked.request, result), [](const Json&) {});
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
  Json result{{"protocolVersion", kAcpProtocolVersion},
              {"agentCapabilities",
               {{"loadSession", true},
                {"promptCapabilities", {{"image", true}, {"audio", false}, {"embeddedContext", true}}},
                {"mcpCapabilities", {{"http", false}, {"sse", false}}},
                {"sessionCapabilities", {{"list", Json::object()}, {"resume", Json::object()}, {"close", Json::object()}}}}},
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
  reply(id, std::move(result));
}

void AcpServer::with_agent_modes(std::function<void()> then) {
  if (m_agent_modes) return then();
  m_waiting_for_modes.push_back(std::move(then));
  if (m_waiting_for_modes.size() > 1) return;
  m_daemon.call("agents.list", Json::object(), [this](const Json& response) {
    Json modes = Json::array();
    const auto& agents = object_member(response, "result").value("agents", Json::array());
    for (const auto& agent : agents) {
      if (string_member(agent, "agent") == m_options.agent && agent.contains("modes") && agent["modes"].is_array()) modes = agent["modes"];
    }
    m_agent_modes = std::move(modes);
    for (auto& waiting : std::exchange(m_waiting_for_modes, {})) waiting();
  });
}

Json AcpServer::mode_state(const Json& session) const {
  if (!m_agent_modes || m_agent_modes->empty()) return nullptr;
  Json available = Json::array();
  for (const auto& mode : *m_agent_modes) {
    if (mode.is_string()) available.push_back(Json{{"id", mode}, {"name", mode}});
  }
  auto current = string_member(session, "mode");
  if (current.empty()) current = (*m_agent_modes)[0].get<std::string>();
  return Json{{"currentModeId", current}, {"availableModes", std::move(available)}};
}

Json AcpServer::session_setup(const Json& session) {
  Json result = Json::object();
  if (auto modes = mode_state(session); !modes.is_null()) result["modes"] = std::move(modes);
  auto options = config_options(session, m_agent_modes.value_or(Json::array()));
  if (!options.empty()) result["configOptions"] = options;
  // Only for sessions this editor follows (set_config_option may name another): closing one forgets its entry.
  if (const auto id = string_member(session, "sessionId"); m_open_sessions.count(id)) m_sent_options[id] = std::move(options);
  return result;
}

void AcpServer::new_session(const Json& id, const Json& params) {
  auto cwd = string_member(params, "cwd");
  if (cwd.empty()) cwd = m_options.default_cwd;
  if (cwd.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/new needs a cwd"));
  // mcpServers: the hosted agents use the MCP servers of their own configuration; the editor's are not passed on.
  m_daemon.call("session.create", Json{{"agent", m_options.agent}, {"cwd", cwd}}, [this, id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/new"));
    const auto session = object_member(response["result"], "session");
    const auto session_id = string_member(session, "sessionId");
    m_open_sessions.insert(session_id);
    with_agent_modes([this, id, session, session_id] {
      Json result = session_setup(session);
      result["sessionId"] = session_id;
      reply(id, std::move(result));
    });
  });
}

void AcpServer::load_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/load needs a sessionId"));
  m_daemon.call("session.get", Json{{"sessionId", session_id}}, [this, id, session_id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/load"));
    auto replay = std::make_shared<Replay>();
    replay->acp_id = id;
    replay->session_id = session_id;
    replay->session = object_member(response["result"], "session");
    // From now on its live events are held, and sent after the stored ones that came before them.
    m_replays[session_id] = replay;
    m_open_sessions.insert(session_id);
    replay_page(replay);
  });
}

void AcpServer::replay_page(std::shared_ptr<Replay> replay) {
  Json params{{"sessionId", replay->session_id}, {"afterSeq", replay->last_seq}, {"limit", kReplayPage}};
  m_daemon.call("session.events", std::move(params), [this, replay](const Json& response) {
    if (!response.contains("result")) {
      m_replays.erase(replay->session_id);
      m_open_sessions.erase(replay->session_id);
      return reply_error(replay->acp_id, acp_error_of(response, "session/load"));
    }
    const auto& result = response["result"];
    for (const auto& envelope : result.value("events", Json::array())) {
      replay->last_seq = std::max(replay->last_seq, envelope.value("seq", std::int64_t{0}));
      for (auto& update : updates_for_event(envelope, UpdateReading::Replay, replay->shown_diffs)) notify_update(replay->session_id, std::move(update));
    }
    if (result.contains("nextAfterSeq") && result["nextAfterSeq"].is_number_integer()) {
      replay->last_seq = result["nextAfterSeq"].get<std::int64_t>();
      return replay_page(replay);
    }
    finish_replay(replay);
  });
}

void AcpServer::finish_replay(const std::shared_ptr<Replay>& replay) {
  m_replays.erase(replay->session_id);
  with_agent_modes([this, replay] {
    reply(replay->acp_id, session_setup(replay->session));
    // What happened while the stored events were read, in order, without what the replay already showed.
    for (const auto& envelope : replay->held) {
      if (envelope.value("seq", std::int64_t{0}) > replay->last_seq) forward_live(replay->session_id, envelope);
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
  m_daemon.call("session.list", std::move(query), [this, id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/list"));
    Json sessions = Json::array();
    for (const auto& session : response["result"].value("sessions", Json::array())) {
      Json info{{"sessionId", string_member(session, "sessionId")}, {"cwd", string_member(session, "cwd")}};
      const auto title = string_member(session, "title");
      if (!title.empty()) info["title"] = title;
      if (session.contains("updatedAt") && session["updatedAt"].is_number_integer()) info["updatedAt"] = iso_time(session["updatedAt"].get<std::int64_t>());
      sessions.push_back(std::move(info));
    }
    Json result{{"sessions", std::move(sessions)}};
    const auto next = string_member(response["result"], "nextCursor");
    if (!next.empty()) result["nextCursor"] = next;
    reply(id, std::move(result));
  });
}

void AcpServer::resume_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (session_id.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/resume needs a sessionId"));
  m_daemon.call("session.get", Json{{"sessionId", session_id}}, [this, id, session_id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/resume"));
    // Like session/load without the replay: its events are followed from now on.
    m_open_sessions.insert(session_id);
    const auto session = object_member(response["result"], "session");
    with_agent_modes([this, id, session] {
      reply(id, session_setup(session));
      ask_open_permissions(string_member(session, "sessionId"));
    });
  });
}

void AcpServer::ask_open_permissions(const std::string& session_id) {
  // A request that was open before the editor came (another client's turn waits on it) is the editor's to
  // answer too: the session's snapshot has them.
  m_daemon.call("session.attach", Json{{"sessionId", session_id}}, [this](const Json& response) {
    for (const auto& request : object_member(response, "result").value("permissions", Json::array())) {
      if (string_member(request, "state") == "open") ask_permission(request);  // not one being answered
    }
  });
}

void AcpServer::close_session(const Json& id, const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  if (!m_open_sessions.count(session_id)) return reply_error(id, acp_error(AcpErrorCode::ResourceNotFound, "session/close: the session is not open here"));
  // ACP: closing cancels the session's work. The session itself stays stored (the console and session/load
  // still have it); this editor stops following it, so its prompts answer `cancelled` now and its open
  // permission requests are withdrawn.
  m_open_sessions.erase(session_id);
  m_replays.erase(session_id);
  m_running_tools.erase(session_id);
  m_shown_diffs.erase(session_id);
  m_sent_options.erase(session_id);
  std::erase_if(m_prompts, [&](const PendingPrompt& pending) {
    if (pending.session_id != session_id) return false;
    reply(pending.acp_id, Json{{"stopReason", "cancelled"}});
    return true;
  });
  std::vector<std::string> asked;
  for (const auto& [request_id, editor_id] : m_asked_by_request) {
    const auto it = m_asked.find(editor_id);
    if (it != m_asked.end() && string_member(it->second.request, "sessionId") == session_id) asked.push_back(request_id);
  }
  for (const auto& request_id : asked) withdraw_permission(request_id);
  m_daemon.call("session.cancel", Json{{"sessionId", session_id}}, [this, id](const Json&) { reply(id, Json::object()); });
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
  const bool was_open = !m_open_sessions.insert(session_id).second;
  m_daemon.call("session.send", std::move(send), [this, id, session_id, was_open](const Json& response) {
    if (!response.contains("result")) {
      if (!was_open) m_open_sessions.erase(session_id);
      return reply_error(id, acp_error_of(response, "session/prompt"));
    }
    const auto& result = response["result"];
    PendingPrompt pending{id, session_id, std::nullopt, std::nullopt, false};
    if (result.value("queued", false)) {
      // Behind a running turn (another client's, or this editor's previous prompt): ours is the turn.started
      // that names this queue id.
      pending.queue_id = string_member(result, "queueId");
    } else {
      pending.turn_id = string_member(result, "turnId");
      for (auto it = m_stopped_turns.begin(); it != m_stopped_turns.end(); ++it) {
        if (it->first == *pending.turn_id) {
          auto stopped = std::move(it->second);
          m_stopped_turns.erase(it);
          return answer_prompt(std::move(pending), stopped);  // over before the reply was read
        }
      }
    }
    m_prompts.push_back(std::move(pending));
  });
}

void AcpServer::set_mode(const Json& id, const Json& params) {
  Json call{{"sessionId", string_member(params, "sessionId")}, {"mode", string_member(params, "modeId")}};
  m_daemon.call("session.setMode", std::move(call), [this, id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/set_mode"));
    reply(id, Json::object());
  });
}

void AcpServer::set_config_option(const Json& id, const Json& params) {
  const auto config_id = string_member(params, "configId");
  const bool is_model = config_id == "model";
  if (!is_model && config_id != "mode") {
    return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "no config option '" + config_id + "' (there are: mode, model)"));
  }
  const auto value = string_member(params, "value");
  if (value.empty()) return reply_error(id, acp_error(AcpErrorCode::InvalidParams, "session/set_config_option needs a value (a string)"));
  Json call{{"sessionId", string_member(params, "sessionId")}, {is_model ? "model" : "mode", value}};
  m_daemon.call(is_model ? "session.setModel" : "session.setMode", std::move(call), [this, id](const Json& response) {
    if (!response.contains("result")) return reply_error(id, acp_error_of(response, "session/set_config_option"));
    with_agent_modes([this, id, session = object_member(response["result"], "session")] {
      reply(id, Json{{"configOptions", session_setup(session).value("configOptions", Json::array())}});
    });
  });
}

void AcpServer::cancel(const Json& params) {
  const auto session_id = string_member(params, "sessionId");
  for (auto& pending : m_prompts) {
    // The running turn's prompt answers `cancelled` whatever the turn's own end says; prompts still queued
    // stay queued (docs/acp.md).
    if (pending.session_id == session_id && pending.turn_id) {
      pending.cancel_requested = true;
    }
  }
  m_daemon.call("session.cancel", Json{{"sessionId", session_id}}, [](const Json&) {});
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
  if (session_id.empty() || !m_open_sessions.count(session_id)) return;
  if (auto replay = m_replays.find(session_id); replay != m_replays.end()) {
    replay->second->held.push_back(envelope);
    return;
  }
  forward_live(session_id, envelope);
}

void AcpServer::forward_live(const std::string& session_id, const Json& envelope) {
  const auto type = string_member(envelope, "type");
  const auto& data = object_member(envelope, "data");
  if (type == "tool.started") {
    m_running_tools[session_id].emplace_back(string_member(data, "tool"), string_member(data, "toolCallId"));
  } else if (type == "tool.completed") {
    auto& running = m_running_tools[session_id];
    std::erase_if(running, [&](const auto& tool) { return tool.second == string_member(data, "toolCallId"); });
  }
  for (auto& update : updates_for_event(envelope, UpdateReading::Live, m_shown_diffs[session_id])) notify_update(session_id, std::move(update));
  if (type == "session.updated") update_config_options(object_member(data, "session"));
  if (type == "permission.requested") ask_permission(object_member(data, "request"));
  if (type == "permission.resolved") withdraw_permission(string_member(data, "requestId"));
  track_turns(envelope);
}

void AcpServer::update_config_options(const Json& session) {
  // Sent when the choices or a current value changed (a model list that arrived with the agent's start, a
  // switch made by another client), not at every rename.
  with_agent_modes([this, session] {
    auto options = config_options(session, m_agent_modes.value_or(Json::array()));
    auto& sent = m_sent_options[string_member(session, "sessionId")];
    if (options == sent) return;
    sent = options;
    notify_update(string_member(session, "sessionId"), Json{{"sessionUpdate", "config_option_update"}, {"configOptions", std::move(options)}});
  });
}

void AcpServer::track_turns(const Json& envelope) {
  const auto type = string_member(envelope, "type");
  const auto& data = object_member(envelope, "data");
  if (type == "turn.started") {
    const auto queue_id = string_member(data, "queueId");
    if (queue_id.empty()) return;
    for (auto& pending : m_prompts) {
      if (pending.queue_id && *pending.queue_id == queue_id) pending.turn_id = string_member(data, "turnId");
    }
  } else if (type == "turn.stopped") {
    const auto turn_id = string_member(data, "turnId");
    m_running_tools.erase(string_member(envelope, "sessionId"));
    m_shown_diffs.erase(string_member(envelope, "sessionId"));  // calls that never completed
    for (auto it = m_prompts.begin(); it != m_prompts.end(); ++it) {
      if (it->turn_id && *it->turn_id == turn_id) {
        auto pending = std::move(*it);
        m_prompts.erase(it);
        return answer_prompt(std::move(pending), data);
      }
    }
    m_stopped_turns.emplace_back(turn_id, data);
    if (m_stopped_turns.size() > kStoppedTurnsKept) m_stopped_turns.pop_front();
  }
}

void AcpServer::answer_prompt(PendingPrompt pending, const Json& stopped) {
  const auto ours = string_member(stopped, "stopReason");
  if (pending.cancel_requested) return reply(pending.acp_id, Json{{"stopReason", "cancelled"}});
  if (auto reason = acp_stop_reason(ours)) {
    Json result{{"stopReason", *reason}};
    // ACP v1 has no per-turn token usage (usage_update wants the context window's size, which agents do not
    // report): ours travels in the answer's _meta, as {inputTokens, outputTokens, cacheReadTokens, costUsd}.
    if (const auto usage = stopped.find("usage"); usage != stopped.end() && usage->is_object()) {
      result["_meta"] = Json{{"switchboard", {{"usage", *usage}}}};
    }
    return reply(pending.acp_id, std::move(result));
  }
  auto why = string_member(stopped, "error");
  reply_error(pending.acp_id, acp_error(AcpErrorCode::InternalError, "the turn failed" + (why.empty() ? std::string() : ": " + why)));
}

void AcpServer::ask_permission(const Json& request) {
  const auto request_id = string_member(request, "requestId");
  if (request_id.empty() || m_asked_by_request.count(request_id)) return;
  // The daemon resolves rule-matched asks right after announcing them: ask only what is still open once the
  // events already received were read.
  boost::asio::post(m_io, [this, request, request_id] {
    if (m_finished || m_asked_by_request.count(request_id) || !m_open_sessions.count(string_member(request, "sessionId"))) return;
    if (m_resolved_requests.erase(request_id) > 0) return;
    const auto session_id = string_member(request, "sessionId");
    std::string tool_call_id = "permission-" + request_id;
    const auto& running = m_running_tools[session_id];
    for (auto it = running.rbegin(); it != running.rend(); ++it) {
      if (it->first == string_member(request, "tool")) {
        tool_call_id = it->second;
        break;
      }
    }
    const std::int64_t id = m_next_editor_id++;
    m_asked.emplace(id, AskedPermission{request});
    m_asked_by_request.emplace(request_id, id);
    send_to_editor(Json{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session/request_permission"},
                        {"params", permission_request_params(request, tool_call_id)}});
  });
}

void AcpServer::withdraw_permission(const std::string& request_id) {
  if (m_resolved_requests.size() > 1000) m_resolved_requests.clear();
  m_resolved_requests.insert(request_id);
  const auto it = m_asked_by_request.find(request_id);
  if (it == m_asked_by_request.end()) return;
  // Answered elsewhere first (console, TUI, a rule, a cancel): ACP's way to take a request back is
  // $/cancel_request; the editor's late answer, if any, is then ignored.
  const auto id = it->second;
  m_asked_by_request.erase(it);
  m_asked.erase(id);
  send_to_editor(Json{{"jsonrpc", "2.0"}, {"method", "$/cancel_request"}, {"params", {{"requestId", id}}}});
}

void AcpServer::on_daemon_closed() {
  if (m_finished) return;
  for (auto& pending : std::exchange(m_prompts, {})) {
    reply_error(pending.acp_id, acp_error(AcpErrorCode::InternalError, "the daemon closed the connection before the turn ended"));
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
