#include "engine/PrestartedAgent.h"

#include <spdlog/spdlog.h>

namespace switchboard::engine {

PrestartedAgent::PrestartedAgent(const adapters::AgentDescriptor& descriptor, std::string agent, adapters::StartOptions options)
    : m_agent_name(std::move(agent)), m_options(std::move(options)) {
  m_agent = descriptor.create(*this);
  m_agent->start(m_options, [weak = std::weak_ptr<PrestartedAgent*>(m_self)](std::optional<adapters::AdapterError> error) {
    if (auto self = weak.lock()) (*self)->started(std::move(error));
  });
}

PrestartedAgent::~PrestartedAgent() {
  // Destroying the agent's adapter may report on_unavailable: nobody is listening any more.
  m_listener = nullptr;
  m_self.reset();
  m_agent.reset();
}

bool PrestartedAgent::fits(const std::string& agent, const adapters::StartOptions& options) const {
  const bool failed = m_start_outcome && m_start_outcome->has_value();
  return !m_gone && !failed && agent == m_agent_name && options.cwd == m_options.cwd && options.model == m_options.model &&
         options.mode == m_options.mode && options.stream_text == m_options.stream_text &&
         !options.resume_provider_session_id && !options.fork_through_turn_ref && options.mcp_servers.empty() &&
         m_options.mcp_servers.empty() && options.options.empty();
}

void PrestartedAgent::adopt(adapters::AdapterListener& listener) {
  // What the agent reports while the held events play is held too, so nothing overtakes them.
  while (!m_held.empty()) {
    auto held = std::exchange(m_held, {});
    for (auto& event : held) event(listener);
  }
  m_listener = &listener;
}

void PrestartedAgent::start(const adapters::StartOptions&, adapters::Completion done) {
  // Already started with options that fit (Engine::take_prestarted checked them). A start that has completed
  // completes this one before it returns, as the contract allows: posted, it could reach a session deleted in
  // the meantime, or arrive after an on_unavailable() the agent reports in between.
  if (m_start_outcome) return done(*m_start_outcome);
  m_start_done = std::move(done);
}

void PrestartedAgent::started(std::optional<adapters::AdapterError> error) {
  if (error) spdlog::info("{}: the agent started ahead of its session did not start: {}", m_agent_name, error->message);
  m_start_outcome = error;
  if (m_start_done) std::exchange(m_start_done, nullptr)(std::move(error));
}

void PrestartedAgent::on_unavailable(adapters::Unavailable event) {
  if (m_listener == nullptr) m_gone = true;
  relay(&AdapterListener::on_unavailable, std::move(event));
}

}  // namespace switchboard::engine
