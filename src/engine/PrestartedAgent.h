#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::engine {

// An agent started before the session it is for exists, so that its start-up (a second or more for a CLI in
// Node) overlaps the daemon's own: a `switchboard run` that hosts its daemon knows which agent, directory, model
// and mode its new session will have before the daemon has opened its store (Engine::prestart).
//
// It is an AgentAdapter wrapping the agent's own adapter, and the listener of that adapter. Until a session takes
// it (Engine::take_prestarted) it holds what the agent reports (the models it offers, an error); the session that
// takes it becomes the listener, hears what was held, in order, and then everything as it happens. The session's
// start() completes when the agent's own start has completed (before it returns if it already has). Every other
// call goes straight to the agent's adapter. Its log name says "prestarted" where a session's says its id.
class PrestartedAgent final : public adapters::AgentAdapter, private adapters::AdapterListener {
 public:
  PrestartedAgent(const adapters::AgentDescriptor& descriptor, std::string agent, adapters::StartOptions options);
  ~PrestartedAgent() override;

  // Whether a session with this agent and these start options can take it: the same directory, model, mode and
  // text streaming, a new conversation (nothing to resume), and an agent that has not failed or gone since.
  bool fits(const std::string& agent, const adapters::StartOptions& options) const;
  // The session that takes it; what the agent reported so far reaches it now.
  void adopt(adapters::AdapterListener& listener);

  // AgentAdapter
  protocol::AgentCapabilities capabilities() const override { return m_agent->capabilities(); }
  void start(const adapters::StartOptions& options, adapters::Completion done) override;
  void send(adapters::TurnInput input) override { m_agent->send(std::move(input)); }
  void cancel() override { m_agent->cancel(); }
  void answer_permission(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) override {
    m_agent->answer_permission(native_id, std::move(answer), std::move(done));
  }
  void answer_question(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) override {
    m_agent->answer_question(native_id, std::move(answer), std::move(done));
  }
  void set_model(const std::string& model, adapters::Completion done) override { m_agent->set_model(model, std::move(done)); }
  void set_mode(const std::string& mode, adapters::Completion done) override { m_agent->set_mode(mode, std::move(done)); }
  void set_option(const std::string& option_id, const std::string& value, adapters::Completion done) override {
    m_agent->set_option(option_id, value, std::move(done));
  }
  void rewind(const std::string& native_turn_ref, adapters::Completion done) override {
    m_agent->rewind(native_turn_ref, std::move(done));
  }
  void compact(adapters::Completion done) override { m_agent->compact(std::move(done)); }
  void stop() override { m_agent->stop(); }

 private:
  // AdapterListener: passed to the session once one has taken the agent, held until then.
  void on_provider_session(adapters::ProviderSession event) override { relay(&AdapterListener::on_provider_session, std::move(event)); }
  void on_delta(adapters::TextDelta event) override { relay(&AdapterListener::on_delta, std::move(event)); }
  void on_message(adapters::MessageCompleted event) override { relay(&AdapterListener::on_message, std::move(event)); }
  void on_tool_started(adapters::ToolStarted event) override { relay(&AdapterListener::on_tool_started, std::move(event)); }
  void on_tool_output(adapters::ToolOutput event) override { relay(&AdapterListener::on_tool_output, std::move(event)); }
  void on_tool_completed(adapters::ToolCompleted event) override { relay(&AdapterListener::on_tool_completed, std::move(event)); }
  void on_permission_request(adapters::PermissionAsk event) override { relay(&AdapterListener::on_permission_request, std::move(event)); }
  void on_question(adapters::QuestionAsk event) override { relay(&AdapterListener::on_question, std::move(event)); }
  void on_request_withdrawn(adapters::RequestWithdrawn event) override { relay(&AdapterListener::on_request_withdrawn, std::move(event)); }
  void on_status(adapters::AgentStatus event) override { relay(&AdapterListener::on_status, std::move(event)); }
  void on_models(adapters::ModelsOffered event) override { relay(&AdapterListener::on_models, std::move(event)); }
  void on_plan(adapters::PlanUpdate event) override { relay(&AdapterListener::on_plan, std::move(event)); }
  void on_usage(adapters::UsageUpdate event) override { relay(&AdapterListener::on_usage, std::move(event)); }
  void on_commands(adapters::CommandsOffered event) override { relay(&AdapterListener::on_commands, std::move(event)); }
  void on_options(adapters::OptionsOffered event) override { relay(&AdapterListener::on_options, std::move(event)); }
  void on_mcp_status(adapters::McpStatusReport event) override { relay(&AdapterListener::on_mcp_status, std::move(event)); }
  void on_turn_end(adapters::TurnResult event) override { relay(&AdapterListener::on_turn_end, std::move(event)); }
  void on_error(adapters::AgentErrorReport event) override { relay(&AdapterListener::on_error, std::move(event)); }
  void on_unavailable(adapters::Unavailable event) override;

  template <class Event>
  void relay(void (AdapterListener::*handler)(Event), Event event) {
    if (m_listener != nullptr) return (m_listener->*handler)(std::move(event));
    m_held.push_back([handler, event = std::move(event)](AdapterListener& listener) mutable {
      (listener.*handler)(std::move(event));
    });
  }
  void started(std::optional<adapters::AdapterError> error);

  const std::string m_agent_name;
  const adapters::StartOptions m_options;
  adapters::AdapterListener* m_listener = nullptr;
  std::vector<std::function<void(AdapterListener&)>> m_held;
  // Until the agent's own start completes: nothing. Then its outcome, which a later start() hears at once.
  std::optional<std::optional<adapters::AdapterError>> m_start_outcome;
  adapters::Completion m_start_done;  // the session's start(), while the agent's own is still under way
  bool m_gone = false;                // on_unavailable before a session took it
  // Weak handles for the agent's callbacks: the wrapper may be destroyed before the start completes.
  std::shared_ptr<PrestartedAgent*> m_self = std::make_shared<PrestartedAgent*>(this);
  // Last: destroyed first, while everything it may still call during its destruction is alive.
  std::unique_ptr<adapters::AgentAdapter> m_agent;
};

}  // namespace switchboard::engine
