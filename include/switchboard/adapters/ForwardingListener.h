#pragma once

#include <utility>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters {

// An AdapterListener that passes every event on to another one unchanged. An adapter that must see some events
// on their way to the engine (the end of a turn, to clear its own turn bookkeeping first) derives from it and
// overrides only those, calling the base to pass them on; every other event, including one added to the
// contract later, is forwarded without the adapter naming it.
class ForwardingListener : public AdapterListener {
 public:
  explicit ForwardingListener(AdapterListener& next) : m_next(next) {}

  void on_provider_session(ProviderSession event) override { m_next.on_provider_session(std::move(event)); }
  void on_delta(TextDelta event) override { m_next.on_delta(std::move(event)); }
  void on_message(MessageCompleted event) override { m_next.on_message(std::move(event)); }
  void on_tool_started(ToolStarted event) override { m_next.on_tool_started(std::move(event)); }
  void on_tool_output(ToolOutput event) override { m_next.on_tool_output(std::move(event)); }
  void on_tool_completed(ToolCompleted event) override { m_next.on_tool_completed(std::move(event)); }
  void on_permission_request(PermissionAsk event) override { m_next.on_permission_request(std::move(event)); }
  void on_question(QuestionAsk event) override { m_next.on_question(std::move(event)); }
  void on_request_withdrawn(RequestWithdrawn event) override { m_next.on_request_withdrawn(std::move(event)); }
  void on_status(AgentStatus event) override { m_next.on_status(std::move(event)); }
  void on_models(ModelsOffered event) override { m_next.on_models(std::move(event)); }
  void on_plan(PlanUpdate event) override { m_next.on_plan(std::move(event)); }
  void on_usage(UsageUpdate event) override { m_next.on_usage(std::move(event)); }
  void on_commands(CommandsOffered event) override { m_next.on_commands(std::move(event)); }
  void on_options(OptionsOffered event) override { m_next.on_options(std::move(event)); }
  void on_mcp_status(McpStatusReport event) override { m_next.on_mcp_status(std::move(event)); }
  void on_turn_end(TurnResult event) override { m_next.on_turn_end(std::move(event)); }
  void on_error(AgentErrorReport event) override { m_next.on_error(std::move(event)); }
  void on_unavailable(Unavailable event) override { m_next.on_unavailable(std::move(event)); }

 protected:
  AdapterListener& next() { return m_next; }

 private:
  AdapterListener& m_next;
};

}  // namespace switchboard::adapters
