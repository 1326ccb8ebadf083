#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/EngineError.h"
#include "engine/RuleBook.h"
#include "engine/Session.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/bus/EventBus.h"

namespace switchboard::engine {

enum class HeadlessPolicy { Deny, Allow };

struct EngineConfig {
  // How long a permission or question waits for an answer before it resolves as deny / rejection.
  std::chrono::milliseconds request_timeout = std::chrono::minutes(30);
  // What to do with a permission request when no client that can answer is attached.
  HeadlessPolicy headless_policy = HeadlessPolicy::Deny;
  // Configured default model per agent (the middle of the precedence: call override → this → session pin).
  std::map<std::string, std::string> default_models;
};

// The model a turn runs with. One rule for every adapter: an explicit per-call override wins, then the
// configured default for the agent, then the model pinned on the session.
std::optional<std::string> resolve_model(const std::optional<std::string>& call_override,
                                         const std::optional<std::string>& configured,
                                         const std::optional<std::string>& session_pin);

// Sessions, turns, the prompt queue, and the permission/question round trips. Knows nothing of JSON-RPC or
// transports: EngineMethods binds it to the dispatcher, and everything clients see leaves through the bus.
class Engine {
 public:
  Engine(boost::asio::io_context& io, bus::EventBus& bus, std::vector<adapters::AgentDescriptor> agents,
         EngineConfig config = {});
  ~Engine();

  std::vector<protocol::AgentInfo> list_agents() const;
  Outcome<protocol::SessionInfo> create_session(const protocol::SessionCreateParams& params);
  Outcome<protocol::SessionInfo> get_session(const std::string& session_id) const;
  protocol::SessionListResult list_sessions(const protocol::SessionListParams& params) const;
  Outcome<protocol::SessionInfo> rename(const std::string& session_id, const std::string& title);
  Outcome<protocol::SessionInfo> archive(const std::string& session_id, bool archived);
  std::optional<EngineError> delete_session(const std::string& session_id);
  Outcome<protocol::SessionAttachResult> attach(const std::string& session_id) const;
  Outcome<protocol::SessionInfo> set_model(const std::string& session_id, const std::string& model);
  Outcome<protocol::SessionInfo> set_mode(const std::string& session_id, const std::string& mode);
  void send(protocol::SessionSendParams params, Session::SendDone done);
  Outcome<bool> cancel(const std::string& session_id);
  std::optional<EngineError> respond_permission(const protocol::PermissionRespondParams& params,
                                                std::optional<std::string> client_id);
  std::optional<EngineError> respond_question(const protocol::QuestionRespondParams& params,
                                              std::optional<std::string> client_id);
  std::vector<protocol::RememberedRule> list_rules(const std::optional<std::string>& session_id,
                                                   const std::optional<std::string>& cwd) const;
  std::optional<EngineError> remove_rule(const std::string& rule_id);

  // Stops every agent (daemon shutdown).
  void stop_all();

  // For sessions.
  boost::asio::io_context& io() { return m_io; }
  bus::EventBus& bus() { return m_bus; }
  const EngineConfig& config() const { return m_config; }
  RuleBook& rules() { return m_rules; }
  void publish_rules_changed();
  const adapters::AgentDescriptor* agent(const std::string& name) const;
  std::string register_request(const std::string& session_id);
  void close_request(const std::string& request_id);
  bool can_ask_someone() const { return m_answering_clients > 0; }
  // Where attach() reads the last event seq from (the egress); set by the daemon.
  void set_last_seq_source(std::function<std::uint64_t()> source) { m_last_seq = std::move(source); }

 private:
  Session* find(const std::string& session_id) const;
  Outcome<Session*> session_of_open_request(const std::string& request_id) const;

  boost::asio::io_context& m_io;
  bus::EventBus& m_bus;
  std::vector<adapters::AgentDescriptor> m_agents;
  EngineConfig m_config;
  RuleBook m_rules;
  std::map<std::string, std::unique_ptr<Session>> m_sessions;
  // Every request ever opened: open ones map to their session; closed ones are remembered (bounded) so a late
  // second answer gets AlreadyAnswered rather than UnknownRequest.
  std::map<std::string, std::string> m_open_requests;
  std::unordered_set<std::string> m_closed_requests;
  std::deque<std::string> m_closed_order;
  std::set<std::string> m_answering_client_ids;
  int m_answering_clients = 0;
  std::function<std::uint64_t()> m_last_seq;
  bus::Subscription m_attached;
  bus::Subscription m_detached;
};

}  // namespace switchboard::engine
