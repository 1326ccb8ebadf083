#include "common/OfferedModels.h"

#include "common/NativeJson.h"

namespace switchboard::adapters::native {

std::vector<protocol::ModelInfo> offered_models(const nlohmann::json& list, const ModelListKeys& keys) {
  std::vector<protocol::ModelInfo> models;
  if (!list.is_array()) return models;
  for (const auto& entry : list) {
    auto id = string_at(entry, keys.id);
    if (!id || id->empty()) continue;
    if (!keys.hidden.empty() && bool_or(entry, keys.hidden, false)) continue;
    protocol::ModelInfo model;
    model.id = std::move(*id);
    model.name = string_at(entry, keys.name);
    model.description = string_at(entry, keys.description);
    if (!keys.is_default.empty() && bool_or(entry, keys.is_default, false)) model.is_default = true;
    models.push_back(std::move(model));
  }
  return models;
}

}  // namespace switchboard::adapters::native
