#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "acp/XaiSessionControls.h"

// Grok Build's fork and rewind extensions: the turn references and the params and answers, as Grok 1.0.41 sent
// and took them against the mock provider (docs/agents/grok-build.md, "Controls").

namespace xai_session_controls_tests {

using nlohmann::json;
namespace acp = switchboard::adapters::acp;

TEST_CASE("xai controls: a turn reference names the Grok session and the prompt index, and only that reads back", "[acp][xai]") {
  const std::string ref = acp::prompt_point_ref({"01a24be1-bde1-7fc2-a6ef-45e094dfaf7f", 2});
  CHECK(ref == "01a24be1-bde1-7fc2-a6ef-45e094dfaf7f#2");
  const auto point = acp::parse_prompt_point_ref(ref);
  REQUIRE(point);
  CHECK(point->session_id == "01a24be1-bde1-7fc2-a6ef-45e094dfaf7f");
  CHECK(point->index == 2);
  // Grok's promptId (what a turn was named by before) and broken forms name no prompt.
  for (const char* other : {"5900d6a7-a28c-41d4-b3bc-ff2bde13d92a", "s#", "#3", "s#-1", "s#2x", "s#1.5", ""}) {
    INFO(other);
    CHECK_FALSE(acp::parse_prompt_point_ref(other));
  }
}

TEST_CASE("xai controls: the last prompt index is the highest rewind point, -1 without any, unknown for another answer", "[acp][xai]") {
  const json points = json::parse(R"({"rewind_points":[
    {"prompt_index":0,"created_at":"2026-12-06T15:03:06Z","num_file_snapshots":0,"has_file_changes":false,"prompt_preview":"alpha"},
    {"prompt_index":2,"prompt_preview":"gamma"},{"prompt_index":1,"prompt_preview":"beta"}]})");
  CHECK(acp::last_prompt_index(points) == 2);
  CHECK(acp::last_prompt_index(json{{"rewind_points", json::array()}}) == -1);
  CHECK_FALSE(acp::last_prompt_index(json::object()));
  CHECK_FALSE(acp::last_prompt_index(json{{"rewind_points", "none"}}));
}

TEST_CASE("xai controls: the fork takes the source, the directory for both, and the prompt index only when named", "[acp][xai]") {
  CHECK(acp::fork_params("s-1", "/w", 1) ==
        json{{"sourceSessionId", "s-1"}, {"sourceCwd", "/w"}, {"newCwd", "/w"}, {"targetPromptIndex", 1}});
  CHECK_FALSE(acp::fork_params("s-1", "/w", std::nullopt).contains("targetPromptIndex"));
  const json answer = json::parse(R"({"newSessionId":"s-2","chatMessagesCopied":7,"updatesCopied":6,"planStateCopied":false,
                                      "newCwd":"/w","parentSessionId":"s-1"})");
  CHECK(acp::forked_session_id(answer) == "s-2");
  CHECK_FALSE(acp::forked_session_id(json{{"newSessionId", ""}}));
  CHECK_FALSE(acp::forked_session_id(json::object()));
}

TEST_CASE("xai controls: the rewind is forced and conversation only: Grok's success, its error, or a refusal without one", "[acp][xai]") {
  CHECK(acp::rewind_params("s-1", 1) ==
        json{{"sessionId", "s-1"}, {"targetPromptIndex", 1}, {"mode", "conversation_only"}, {"force", true}});
  CHECK_FALSE(acp::rewind_refusal(json::parse(
      R"({"success":true,"target_prompt_index":1,"mode":"conversation_only","reverted_files":[],"prompt_text":"beta","error":null})")));
  CHECK(acp::rewind_refusal(json::parse(
            R"({"success":false,"target_prompt_index":9,"error":"Cannot rewind to prompt #9 \u2014 current prompt index is 3. Valid targets: 0..2"})")) ==
        "Cannot rewind to prompt #9 — current prompt index is 3. Valid targets: 0..2");
  // Unforced, Grok 1.0.41 answers so (it wants a confirmation).
  const auto unconfirmed = acp::rewind_refusal(json::parse(R"({"success":false,"mode":"all","error":null})"));
  REQUIRE(unconfirmed);
  CHECK_FALSE(unconfirmed->empty());
}

}  // namespace xai_session_controls_tests
