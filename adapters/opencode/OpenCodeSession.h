#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

#include "opencode/OpenCodeTranslator.h"
#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/adapters/ForwardingListener.h"

namespace switchboard::adapters::opencode {

class OpenCodeRuntime;

// The modes a session of ours runs OpenCode in. Whatever the user's own OpenCode configuration allows, the
// session's rules make OpenCode ask before every shell command and file edit; the mode decides which of those
// the adapter lets through by itself and which the engine decides (docs/agents/opencode.md).
inline constexpr std::string_view kAskMode = "ask";                    // every command and edit asks (the default)
inline constexpr std::string_view kAcceptEditsMode = "accept-edits";   // edits go through; commands ask
inline constexpr std::string_view kFullAccessMode = "full-access";     // nothing asks

// One session of ours on the shared `opencode serve`: requests go over the runtime's server, and the runtime
// hands this session the events that name its OpenCode session; the translator turns them into ours.
class OpenCodeSession final : public AgentAdapter {
 public:
  OpenCodeSession(boost::asio::io_context& io, OpenCodeRuntime& runtime, AdapterListener& listener);
  ~OpenCodeSession() override;

  static protocol::AgentCapabilities static_capabilities();

  protocol::AgentCapabilities capabilities() const override { return static_capabilities(); }
  void start(const StartOptions& options, Completion done) override;
  void send(TurnInput input) override;
  void cancel() override;
  void answer_permission(const std::string& native_id, PermissionAnswer answer, Completion done) override;
  void answer_question(const std::string& native_id, QuestionAnswer answer, Completion done) override;
  void set_model(const std::string& model, Completion done) override;
  void set_mode(const std::string& mode, Completion done) override;
  void set_option(const std::string& option_id, const std::string& value, Completion done) override;
  void rewind(const std::string& native_turn_ref, Completion done) override;
  void compact(Completion done) override;
  void stop() override;

  // From the runtime.
  void on_server_event(const nlohmann::json& payload);
  void server_lost(const std::string& reason);
  bool turn_running() const { return m_translator.turn_running(); }

 private:
  // Between the translator and the engine: asks the mode lets through are answered here.
  class ModeFilter;
  struct Answer;

  void request(boost::beast::http::verb method, const std::string& path, const nlohmann::json& body,
               std::function<void(Answer)> then);
  std::string target(const std::string& path) const;
  void reply_to_permission(const std::string& id, const std::string& reply, const std::optional<std::string>& message,
                           Completion done);
  void fail_turn(const std::string& why);
  // Reads the models OpenCode offers in this session's directory and reports them (not waited for by start),
  // then what depends on the model: its context window and its reasoning-effort option.
  void offer_models();
  // Reads the commands OpenCode offers in this session's directory and reports them (not waited for by start).
  void offer_commands();
  // The model a prompt runs on: the session's, else the configuration's default.
  std::optional<std::string> current_model() const;
  // The current model's window to the translator, and its variants as the `effort` option.
  void apply_model_facts();
  void report_options();
  // Adds the session's MCP servers to the server (start waits for them: the first prompt must see their tools),
  // then `done` with their states.
  void add_mcp_servers(std::function<void(std::vector<protocol::McpServerState>)> done);
  // Before a prompt: the session's rules, with the tools of MCP servers other sessions run in its directory
  // denied (OpenCode would show them to every session there). Sent only when they changed; `then` once OpenCode
  // has them.
  void update_rules(std::function<void()> then);
  void delete_messages(std::vector<std::string> newest_first, Completion done);
  void become_unavailable(const std::string& reason);

  boost::asio::io_context& m_io;
  OpenCodeRuntime& m_runtime;
  AdapterListener& m_listener;
  std::unique_ptr<ModeFilter> m_filter;
  OpenCodeTranslator m_translator;
  std::string m_id;   // OpenCode's session id, once started
  std::string m_cwd;  // every request names the session's directory
  std::string m_mode{kAskMode};
  std::map<std::string, std::vector<bool>> m_multiple_choice;  // by question id: which of its questions take several labels
  std::optional<std::string> m_model;  // "provider/model"
  std::optional<std::string> m_default_model;  // the configuration's `model`, what a prompt naming none runs on
  struct ModelFacts {
    std::optional<std::int64_t> window;  // limit.context
    std::vector<std::string> variants;   // the reasoning efforts a prompt may name, in order
  };
  std::map<std::string, ModelFacts> m_model_facts;  // by "provider/model"
  bool m_models_known = false;
  std::optional<std::string> m_variant;  // the `effort` option; unset: the model's default
  std::vector<protocol::McpServer> m_mcp_servers;
  std::optional<nlohmann::json> m_applied_rules;  // the permission rules OpenCode has for the session
  // The messages an existing conversation held when this session opened it: events about them are not news.
  std::set<std::string> m_earlier_messages;
  bool m_unavailable = false;
  std::shared_ptr<OpenCodeSession*> m_self;  // requests in flight hold a weak_ptr to it
};

// Whether `mode` is one of the modes above.
bool is_mode(std::string_view mode);

// The `effort` option's values for a model's variants: `default` (no variant: the model's own) first, then the
// variants from least to most effort where their names say it (none, minimal, low, medium, high, xhigh, max), any
// others after them by name.
std::vector<std::string> effort_values(std::vector<std::string> variants);

// The messages of OpenCode's GET /session/<id>/message answer from the user message `turn_ref` to the end, newest
// first (what a rewind deletes); nullopt when `turn_ref` is none of them.
std::optional<std::vector<std::string>> messages_from(const nlohmann::json& messages, const std::string& turn_ref);
// The message a fork that keeps the turn `turn_ref` (and all before it) stops before: the first user message after
// that turn (empty: the turn is the last, keep everything); nullopt when `turn_ref` is none of them.
std::optional<std::string> fork_boundary(const nlohmann::json& messages, const std::string& turn_ref);

}  // namespace switchboard::adapters::opencode
