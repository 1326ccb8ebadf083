#include "run/HeadlessRun.h"

#include <csignal>
#include <cstdio>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "client/McpServerList.h"
#include "switchboard/json/DecodeContext.h"
#include "switchboard/protocol/generated/ErrorCodes.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/version.h"

namespace switchboard::run {
namespace {

namespace p = protocol;

// After a cancel, how long the run waits for the turn to end (the agent acknowledges, the daemon reports the
// turn stopped) before it gives up waiting and finishes anyway; an in-process daemon then kills the agent.
constexpr auto kCancelGrace = std::chrono::seconds(5);

// A member of a JSON object, or null: the daemon's answers are trusted in shape, but a const lookup of a missing
// key must not be undefined behaviour.
const nlohmann::json& member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::int64_t error_code(const nlohmann::json& response) {
  const auto& error = member(response, "error");
  return error.is_object() && error.contains("code") && error["code"].is_number_integer() ? error["code"].get<std::int64_t>() : 0;
}

std::string error_message(const nlohmann::json& response) {
  const auto& error = member(response, "error");
  return error.is_object() && error.contains("message") && error["message"].is_string() ? error["message"].get<std::string>()
                                                                                       : std::string("unknown error");
}

constexpr std::int64_t code(p::ErrorCode code) { return static_cast<std::int64_t>(code); }

}  // namespace

HeadlessRun::HeadlessRun(boost::asio::io_context& io, RunOptions options, bool attached, int socket_fd,
                         std::unique_ptr<RunOutput> output, std::function<void(int)> done)
    : m_io(io),
      m_options(std::move(options)),
      m_attached(attached),
      m_output(std::move(output)),
      m_done(std::move(done)),
      m_connection(
          io, socket_fd, [this](std::string_view text, const nlohmann::json& envelope) { on_event(text, envelope); },
          [this] {
            if (!m_finished) {
              m_recorder.add_error("the daemon closed the connection before the turn ended");
              finish(m_stopping.value_or(kRunFailed));
            }
          }),
      m_recorder(m_options.agent, attached),
      m_timeout(io),
      m_idle(io),
      m_cancel_grace(io) {}

HeadlessRun::~HeadlessRun() = default;

void HeadlessRun::start() {
  m_started = std::chrono::steady_clock::now();
  m_connection.start();
  if (m_options.timeout) {
    m_timeout.expires_after(*m_options.timeout);
    m_timeout.async_wait([this](const boost::system::error_code& error) {
      if (!error) stop_turn(kRunTimedOut, "timed out after --timeout " + std::to_string(m_options.timeout->count()) + " ms");
    });
  }
  arm_idle_timer();
  Json params{{"protocolVersion", p::kProtocolVersion},
              {"clientInfo", {{"name", "switchboard-run"}, {"version", std::string(kVersion)}}},
              // Delegating means leaving asks to the daemon's other clients (and its headless policy when
              // there are none), so this client does not claim it can answer.
              {"capabilities", {{"answersPermissions", m_options.on_ask != OnAsk::Delegate}}}};
  m_connection.call("initialize", std::move(params), [this](const Json& response) { initialized(response); });
}

void HeadlessRun::initialized(const Json& response) {
  if (m_finished) return;
  if (m_on_initialized) std::exchange(m_on_initialized, nullptr)();
  if (!response.contains("result")) return fail_with(response, "initialize");
  if (m_attached) m_output->on_note("attached to the running daemon");
  find_session();
}

void HeadlessRun::find_session() {
  if (m_options.session_id) {
    return m_connection.call("session.get", Json{{"sessionId", *m_options.session_id}},
                             [this](const Json& response) { on_session(response); });
  }
  if (m_options.continue_newest) {
    Json params{{"agent", m_options.agent}, {"cwd", m_options.cwd}, {"limit", 1}};
    return m_connection.call("session.list", std::move(params), [this](const Json& response) {
      if (m_finished) return;
      if (!response.contains("result")) return fail_with(response, "session.list");
      const auto& sessions = member(member(response, "result"), "sessions");
      if (!sessions.is_array() || sessions.empty()) {
        m_recorder.add_error("--continue: no session of " + m_options.agent + " in " + m_options.cwd + " to continue");
        return finish(kRunInvalid);
      }
      on_session(Json{{"result", {{"session", sessions[0]}}}});
    });
  }
  if (m_options.fork_of) {
    // The fork is a session of its own, continuing a copy of that session's conversation; from here on it is a
    // continued session (its mode changed first, a --model for this turn).
    Json params{{"sessionId", *m_options.fork_of}};
    if (m_options.title) params["title"] = *m_options.title;
    return m_connection.call("session.fork", std::move(params), [this](const Json& response) {
      if (m_finished) return;
      if (!response.contains("result")) return fail_with(response, "session.fork");
      on_session(response);
    });
  }
  Json params{{"agent", m_options.agent}, {"cwd", m_options.cwd}};
  if (m_options.model) params["model"] = *m_options.model;
  if (m_options.mode) params["mode"] = *m_options.mode;
  if (m_options.title) params["title"] = *m_options.title;
  if (!m_options.mcp_servers.empty()) params["mcpServers"] = client::mcp_servers_param(m_options.mcp_servers);
  if (m_options.worktree) {
    params["worktree"] = Json::object();
    if (!m_options.worktree->empty()) params["worktree"]["branch"] = *m_options.worktree;
  }
  m_connection.call("session.create", std::move(params), [this](const Json& response) { on_session(response); });
}

void HeadlessRun::on_session(const Json& response) {
  if (m_finished) return;
  if (!response.contains("result")) return fail_with(response, "the session");
  const auto& session = member(member(response, "result"), "session");
  if (!member(session, "sessionId").is_string()) {
    m_recorder.add_error("the daemon named no session");
    return finish(kRunFailed);
  }
  m_recorder.set_session(session["sessionId"].get<std::string>(), session.value("agent", m_options.agent));
  if (session.contains("worktree")) {
    protocol::Worktree worktree;
    json::DecodeContext context;
    if (protocol::decode(session["worktree"], worktree, context)) m_recorder.set_worktree(std::move(worktree));
  }
  for (const auto& [text, envelope] : std::exchange(m_before_session, {})) on_event(text, envelope);
  if (continued() && m_options.mode) {
    // A new session got its mode with session.create; a continued one changes it first.
    return m_connection.call("session.setMode", Json{{"sessionId", *m_recorder.session_id()}, {"mode", *m_options.mode}},
                             [this](const Json& changed) {
                               if (m_finished) return;
                               if (!changed.contains("result")) return fail_with(changed, "session.setMode");
                               add_rules(0);
                             });
  }
  add_rules(0);
}

void HeadlessRun::add_rules(std::size_t next) {
  if (m_finished) return;
  if (next == m_options.rules.size()) return send_prompt();
  const auto& rule = m_options.rules[next];
  Json rule_json{{"tool", rule.rule.tool}};
  if (rule.rule.pattern) rule_json["pattern"] = *rule.rule.pattern;
  Json params{{"sessionId", *m_recorder.session_id()}, {"rule", rule_json}, {"decision", rule.allow ? "allow" : "deny"}};
  m_connection.call("rules.add", std::move(params), [this, next](const Json& response) {
    if (m_finished) return;
    if (!response.contains("result")) return fail_with(response, "rules.add");
    const auto& rule_id = member(member(member(response, "result"), "rule"), "ruleId");
    if (rule_id.is_string()) m_rule_ids.push_back(rule_id.get<std::string>());
    add_rules(next + 1);
  });
}

void HeadlessRun::send_prompt() {
  // wait: false, so the reply names the turn at its start (its asks must be told apart from other turns');
  // the turn's end is its turn.stopped.
  Json params{{"sessionId", *m_recorder.session_id()}, {"text", m_options.prompt}, {"wait", false}};
  if (!m_options.files.empty()) {
    Json attachments = Json::array();
    for (const auto& file : m_options.files) attachments.push_back(Json{{"path", file}});
    params["attachments"] = std::move(attachments);
  }
  // A continued session keeps its own model unless this run names one (for this turn only).
  if (m_options.model && continued()) params["model"] = *m_options.model;
  m_sent = true;
  m_connection.call("session.send", std::move(params), [this](const Json& response) { on_sent(response); });
}

void HeadlessRun::on_sent(const Json& response) {
  if (m_finished) return;
  if (!response.contains("result")) {
    m_sent = false;
    return fail_with(response, "session.send");
  }
  p::SessionSendResult summary;
  json::DecodeContext context;
  if (!p::decode(member(response, "result"), summary, context)) {
    m_recorder.add_error("session.send: an answer this client cannot read");
    return finish(kRunFailed);
  }
  if (summary.queued) {
    // Behind another client's turn in a continued session: ours is the turn.started that names this queue id.
    m_output->on_note("the session is busy: the prompt is queued");
    if (summary.queue_id) m_recorder.set_queue_id(*summary.queue_id);
    return;
  }
  if (!summary.turn_id) {
    m_recorder.add_error("session.send: the daemon named no turn");
    return finish(kRunFailed);
  }
  m_recorder.set_turn(*summary.turn_id);
  if (m_recorder.turn_ended()) finish(m_stopping.value_or(code_of_ended_turn()));  // over before the reply was read
}

void HeadlessRun::on_event(std::string_view text, const Json& envelope) {
  if (m_finished) return;
  if (!m_recorder.session_id()) {
    constexpr std::size_t kHeldBeforeSession = 1000;
    if (m_before_session.size() < kHeldBeforeSession) m_before_session.emplace_back(std::string(text), envelope);
    return;
  }
  const bool was_ended = m_recorder.turn_ended();
  const bool ours = m_recorder.on_event(envelope);
  const auto type = envelope.value("type", "");
  if (!ours && type != "daemon.shutdown") return;
  m_output->on_event(text, envelope);
  if (!ours) return;
  arm_idle_timer();
  if (type == "permission.requested" || type == "question.requested") {
    const auto& request = member(member(envelope, "data"), "request");
    if (request.is_object() && m_recorder.turn_id() && request.value("turnId", "") == *m_recorder.turn_id()) {
      answer_ask(type, request);
    }
  }
  // The turn's end. What the daemon published with it (session.state idle) is in the same read, most likely:
  // finishing after the lines already received keeps it in the output.
  if (!was_ended && m_recorder.turn_ended()) {
    boost::asio::post(m_io, [this] {
      if (!m_finished) finish(m_stopping.value_or(code_of_ended_turn()));
    });
  }
}

void HeadlessRun::answer_ask(const std::string& type, const Json& request) {
  if (m_options.on_ask == OnAsk::Delegate || m_stopping) return;
  const auto request_id = request.value("requestId", "");
  // The daemon resolves an ask a rule or its headless policy decides by itself, right after announcing it, but
  // publishes that resolution only once the agent has taken the answer, so the ask may still look open here. The
  // first answer wins: when the daemon's came first, ours is refused (AlreadyAnswered) and changes nothing, and
  // the recorder keeps the daemon's resolvedBy. Only an answer the daemon took is the run's.
  boost::asio::post(m_io, [this, type, request_id] {
    if (m_finished) return;
    const bool permission = type == "permission.requested";
    if (permission && !m_recorder.is_open(request_id)) return;
    auto taken = [this, permission, request_id](const Json& response) {
      if (!member(response, "error").is_null() || m_finished) return;  // AlreadyAnswered: someone was first
      m_recorder.answered_by_run(request_id);
      if (m_options.on_ask == OnAsk::Fail) {
        stop_turn(kRunBlocked, std::string("--on-ask fail: the agent asked ") + (permission ? "for a permission" : "a question"));
      }
    };
    if (permission) {
      const bool allow = m_options.on_ask == OnAsk::Allow;
      Json params{{"requestId", request_id}, {"decision", allow ? "allow_once" : "deny"}};
      if (!allow) params["message"] = "denied by switchboard run (--on-ask " + std::string(m_options.on_ask == OnAsk::Fail ? "fail" : "deny") + ")";
      m_connection.call("permission.respond", std::move(params), std::move(taken));
    } else {
      m_connection.call("question.respond", Json{{"requestId", request_id}, {"reject", true}}, std::move(taken));
    }
  });
}

void HeadlessRun::arm_idle_timer() {
  if (!m_options.idle_timeout || m_stopping) return;
  m_idle.expires_after(*m_options.idle_timeout);
  m_idle.async_wait([this](const boost::system::error_code& error) {
    if (!error) {
      stop_turn(kRunTimedOut, "no event for --idle-timeout " + std::to_string(m_options.idle_timeout->count()) + " ms");
    }
  });
}

void HeadlessRun::interrupt(int signal) {
  stop_turn(signal == SIGTERM ? kRunTerminated : kRunInterrupted, signal == SIGTERM ? "terminated (SIGTERM)" : "interrupted (SIGINT)");
}

void HeadlessRun::stop_turn(RunExitCode code, std::string why) {
  if (m_finished || m_stopping) return;
  m_stopping = code;
  m_recorder.add_error(std::move(why));
  m_timeout.cancel();
  m_idle.cancel();
  if (!m_sent || m_recorder.turn_ended()) return finish(code);
  m_connection.call("session.cancel", Json{{"sessionId", *m_recorder.session_id()}}, [](const Json&) {});
  m_cancel_grace.expires_after(kCancelGrace);
  m_cancel_grace.async_wait([this, code](const boost::system::error_code& error) {
    if (error || m_finished) return;
    m_recorder.add_error("the turn did not end within 5 s of its cancel");
    finish(code);
  });
}

RunExitCode HeadlessRun::code_of_ended_turn() const {
  if (m_recorder.agent_unavailable()) return kRunUnavailable;
  switch (m_recorder.stop_reason().value_or(p::StopReason::Error)) {
    case p::StopReason::EndTurn: return m_recorder.any_denied() ? kRunBlocked : kRunCompleted;
    case p::StopReason::Cancelled:  // not by us (that is m_stopping): another client cancelled it
    case p::StopReason::Error:
    case p::StopReason::MaxTokens:
    case p::StopReason::Refusal: break;
  }
  return kRunFailed;
}

RunExitCode HeadlessRun::code_of_error(const Json& response) const {
  const auto error = error_code(response);
  if (error == code(p::ErrorCode::AgentUnavailable)) return kRunUnavailable;
  if (error == code(p::ErrorCode::UnknownAgent) || error == code(p::ErrorCode::UnknownSession) ||
      error == code(p::ErrorCode::BadWorkingDirectory) || error == code(p::ErrorCode::InvalidParams) ||
      error == code(p::ErrorCode::Unsupported)) {
    return kRunInvalid;
  }
  return kRunFailed;
}

void HeadlessRun::abandon(RunExitCode code, std::string why) {
  if (m_finished) return;
  m_recorder.add_error(std::move(why));
  finish(code);
}

void HeadlessRun::fail_with(const Json& response, std::string_view what) {
  m_recorder.add_error(std::string(what) + ": " + error_message(response));
  finish(m_stopping.value_or(code_of_error(response)));
}

void HeadlessRun::finish(RunExitCode code) {
  if (m_finished) return;
  m_finished = true;
  m_timeout.cancel();
  m_idle.cancel();
  m_cancel_grace.cancel();
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - m_started);
  const auto result = m_recorder.result(code, elapsed);
  m_output->on_result(result);
  if (m_options.output_file) {
    // A few bytes to a regular file, once, at the end: this does not hold the reactor up.
    if (std::FILE* file = std::fopen(m_options.output_file->c_str(), "w")) {
      std::fwrite(result.text.data(), 1, result.text.size(), file);
      std::fclose(file);
    } else {
      spdlog::error("cannot write -o {}", m_options.output_file->string());
    }
  }
  // The user's daemon keeps the session; the rules this run put in force end with it.
  for (const auto& rule_id : m_rule_ids) m_connection.call("rules.remove", Json{{"ruleId", rule_id}}, [](const Json&) {});
  m_connection.finish();
  m_done(code);
}

}  // namespace switchboard::run
