#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::adapters::acp {

// Grok Build's own fork and rewind, which its ACP agent offers as extension methods (ACP v1 has neither). Both
// name a turn by its prompt index: the position of the prompt in the session's conversation (0, 1, 2, ...), the
// same index Grok's rewind points carry. Pure and total: an answer of another shape reads as absent.
//
//   `_x.ai/rewind/points {sessionId}` → {"rewind_points": [{"prompt_index", "created_at", "prompt_preview", ...}]}
//   `_x.ai/session/fork {sourceSessionId, sourceCwd, newCwd, targetPromptIndex?}` → {"newSessionId", ...}: a copy
//       of the conversation through that prompt (all of it without the index)
//   `_x.ai/rewind/execute {sessionId, targetPromptIndex, mode, force}` → {"success", "error", ...}: drops that
//       prompt and every later one
inline constexpr std::string_view kRewindPointsMethod = "_x.ai/rewind/points";
inline constexpr std::string_view kForkMethod = "_x.ai/session/fork";
inline constexpr std::string_view kRewindMethod = "_x.ai/rewind/execute";

// One turn of a Grok session, as our native_turn_ref names it: "<session id>#<prompt index>". The session is part
// of it because indexes start again in every conversation (a fork, or a fresh one after a lost conversation).
struct PromptPoint {
  std::string session_id;
  std::int64_t index = 0;
};
std::string prompt_point_ref(const PromptPoint& point);
std::optional<PromptPoint> parse_prompt_point_ref(std::string_view ref);

// The highest prompt index among the rewind points, -1 when there are none; nullopt when the answer is no list.
std::optional<std::int64_t> last_prompt_index(const nlohmann::json& points_answer);

nlohmann::json fork_params(const std::string& source_session_id, const std::string& cwd, std::optional<std::int64_t> through_index);
// The new session's id, or nullopt.
std::optional<std::string> forked_session_id(const nlohmann::json& fork_answer);

// Conversation only: the daemon keeps file checkpoints of its own, so Grok leaves the files alone. `force` skips
// the confirmation Grok otherwise wants (it answers `success: false` without an error).
nlohmann::json rewind_params(const std::string& session_id, std::int64_t index);
// Why Grok did not rewind (its `error`, or a general reason), or nullopt when it did.
std::optional<std::string> rewind_refusal(const nlohmann::json& rewind_answer);

}  // namespace switchboard::adapters::acp
