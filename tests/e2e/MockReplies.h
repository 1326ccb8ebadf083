#pragma once

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

// The reply vocabulary both of the project's mock providers understand (tests/mock_provider/README.md), whatever
// API they speak: a streamed text, and a reply that answers only the request its `match` predicates select. What
// differs between agents (tool calls, the predicates about tool output) stays in each agent's profile.

namespace switchboard::testing::e2e::mock_reply {

using Json = nlohmann::json;

inline Json when(Json match, const std::string& text) { return Json{{"match", std::move(match)}, {"text", text}}; }

// `text` in `chunks` streamed pieces, `delay_ms` apart (0: as fast as the mock can).
inline Json text(const std::string& text, int chunks, int delay_ms) {
  Json reply{{"text", text}, {"chunks", chunks}};
  if (delay_ms > 0) reply["delay_ms"] = delay_ms;
  return reply;
}

inline Json when_last_prompt_contains(const std::string& needle, const std::string& text) {
  return when({{"last_user_text_contains", needle}}, text);
}

inline Json when_any_prompt_contains(const std::string& needle, const std::string& text) {
  return when({{"any_user_text_contains", needle}}, text);
}

}  // namespace switchboard::testing::e2e::mock_reply
