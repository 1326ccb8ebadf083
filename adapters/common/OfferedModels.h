#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::native {

// Where an agent's model list keeps each model's fields: every agent has a list of objects, and names the same
// three things differently (Claude Code: value/displayName, Codex: id/displayName, ACP: modelId/name).
// Empty keys: the agent's entries have no such field.
struct ModelListKeys {
  std::string_view id;
  std::string_view name;
  std::string_view description = "description";
  std::string_view is_default = {};  // a boolean
  std::string_view hidden = {};      // a boolean: entries marked true are left out
};

// The models of an agent's list, in its order. Entries without a string id are skipped (an agent's list is input
// we do not control); a list that is not an array gives none.
std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& list, const ModelListKeys& keys);

}  // namespace switchboard::adapters::native
