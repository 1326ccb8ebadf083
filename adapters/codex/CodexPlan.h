#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/NativeJson.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters::codex {

// A plan step's status as Codex writes it: camelCase in turn/plan/updated, snake_case in the update_plan call's
// arguments (which the rollout keeps). Nothing for a status we do not know.
inline std::optional<protocol::PlanEntryStatus> plan_status(std::string_view status) {
  if (status == "pending") return protocol::PlanEntryStatus::Pending;
  if (status == "inProgress" || status == "in_progress") return protocol::PlanEntryStatus::InProgress;
  if (status == "completed") return protocol::PlanEntryStatus::Completed;
  return std::nullopt;
}

// The whole plan from `{plan: [{step, status}], explanation?}` (turn/plan/updated's params, or update_plan's
// arguments); the explanation is for the model's next step, not part of the plan. Nothing when `plan` is missing
// or a step's status is unknown.
inline std::optional<PlanUpdate> plan_update(const nlohmann::json& params) {
  const auto* plan = native::array_at(params, "plan");
  if (plan == nullptr) return std::nullopt;
  PlanUpdate update;
  for (const auto& step : *plan) {
    const auto status = plan_status(native::string_or_empty(step, "status"));
    if (!status) return std::nullopt;
    update.entries.push_back(protocol::PlanEntry{native::string_or_empty(step, "step"), *status, std::nullopt});
  }
  return update;
}

}  // namespace switchboard::adapters::codex
