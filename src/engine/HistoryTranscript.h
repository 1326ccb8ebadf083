#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "switchboard/adapters/AgentAdapter.h"
#include "switchboard/protocol/generated/Types.h"

namespace switchboard::engine {

// Turns one session of an agent's own history, as the agent's read_history hook replays it, into the normalized
// events history.read returns: the same types and payloads the live session would have published (turn.started,
// message.completed, tool.started, tool.completed, plan.updated, turn.stopped), without seq or session id.
//
// Turn ids come from the history (the prompt's id, else "turn-<n>"), so two reads give the same ids. Activity
// before the first prompt (a history that starts mid-conversation) gets a turn id but no turn.started. Deltas,
// statuses, errors, permission and question calls are not part of a history and are dropped.
//
// Used on the helper thread that runs the hook: it touches nothing shared.
class HistoryTranscript final : public adapters::HistorySink {
 public:
  // The events so far; the transcript is empty afterwards.
  std::vector<protocol::HistoryEvent> take() { return std::move(m_events); }

  void on_user_prompt(UserPrompt prompt) override;
  void on_provider_session(adapters::ProviderSession) override {}
  void on_message(adapters::MessageCompleted event) override;
  void on_tool_started(adapters::ToolStarted event) override;
  void on_tool_completed(adapters::ToolCompleted event) override;
  void on_plan(adapters::PlanUpdate event) override;
  void on_turn_end(adapters::TurnResult result) override;

 private:
  // The open turn's id, opening an implicit one for activity that came before any prompt.
  const std::string& turn_id();
  std::string next_turn_id(const std::string& prompt_id);
  template <class Payload>
  void add(protocol::HistoryEventType type, const Payload& payload, std::optional<std::int64_t> ts = std::nullopt);

  std::vector<protocol::HistoryEvent> m_events;
  std::string m_turn_id;  // empty between turns
  std::string m_last_text;
  std::size_t m_turns = 0;
  std::set<std::string> m_used_ids;
};

}  // namespace switchboard::engine
