#include "acp/XaiSessionControls.h"

#include <algorithm>
#include <charconv>

#include "common/NativeJson.h"

namespace switchboard::adapters::acp {

using nlohmann::json;

std::string prompt_point_ref(const PromptPoint& point) { return point.session_id + "#" + std::to_string(point.index); }

std::optional<PromptPoint> parse_prompt_point_ref(std::string_view ref) {
  const auto hash = ref.rfind('#');
  if (hash == std::string_view::npos || hash == 0 || hash + 1 == ref.size()) return std::nullopt;
  const std::string_view digits = ref.substr(hash + 1);
  std::int64_t index = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (error != std::errc() || end != digits.data() + digits.size() || index < 0) return std::nullopt;
  return PromptPoint{std::string(ref.substr(0, hash)), index};
}

std::optional<std::int64_t> last_prompt_index(const json& points_answer) {
  const auto* points = native::array_at(points_answer, "rewind_points");
  if (points == nullptr) return std::nullopt;
  std::int64_t last = -1;
  for (const auto& point : *points) {
    if (auto index = native::integer_at(point, "prompt_index")) last = std::max(last, *index);
  }
  return last;
}

json fork_params(const std::string& source_session_id, const std::string& cwd, std::optional<std::int64_t> through_index) {
  json params{{"sourceSessionId", source_session_id}, {"sourceCwd", cwd}, {"newCwd", cwd}};
  if (through_index) params["targetPromptIndex"] = *through_index;
  return params;
}

std::optional<std::string> forked_session_id(const json& fork_answer) {
  auto id = native::string_at(fork_answer, "newSessionId");
  if (!id || id->empty()) return std::nullopt;
  return id;
}

json rewind_params(const std::string& session_id, std::int64_t index) {
  return json{{"sessionId", session_id}, {"targetPromptIndex", index}, {"mode", "conversation_only"}, {"force", true}};
}

std::optional<std::string> rewind_refusal(const json& rewind_answer) {
  if (native::bool_or(rewind_answer, "success", false)) return std::nullopt;
  if (auto error = native::string_at(rewind_answer, "error"); error && !error->empty()) return error;
  return std::string("Grok did not rewind (it gave no reason)");
}

}  // namespace switchboard::adapters::acp
