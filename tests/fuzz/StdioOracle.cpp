#include "StdioOracle.h"

#include <algorithm>
#include <cstddef>

#include <nlohmann/json.hpp>

#include "DocumentStandIn.h"
#include "FuzzCheck.h"

namespace switchboard::fuzz {
namespace {

using json = nlohmann::ordered_json;

// Request ids the daemon can echo exactly (others are refused with -32600 and id null).
bool is_valid_id(const json& id) { return id.is_string() || id.is_number_integer() || id.is_null(); }

// The dispatcher refuses lines nested deeper than this before parsing them.
constexpr std::size_t kMaxNesting = 128;
std::size_t nesting_depth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// One JSON-RPC 2.0 response object.
void check_response_object(const json& response) {
  FUZZ_CHECK(response.is_object());
  const auto version = response.find("jsonrpc");
  FUZZ_CHECK(version != response.end() && version->is_string() && *version == "2.0");
  const auto id = response.find("id");
  FUZZ_CHECK(id != response.end() && is_valid_id(*id));
  const bool has_result = response.contains("result");
  const bool has_error = response.contains("error");
  FUZZ_CHECK(has_result != has_error);
  FUZZ_CHECK(response.size() == 3);
  if (has_error) {
    const auto& error = response["error"];
    FUZZ_CHECK(error.is_object());
    FUZZ_CHECK(error.contains("code") && error["code"].is_number_integer());
    FUZZ_CHECK(error.contains("message") && error["message"].is_string());
    for (const auto& [key, value] : error.items()) FUZZ_CHECK(key == "code" || key == "message" || key == "data");
  }
}

// One line as written to stdout: must re-parse, and be a response or a non-empty array of responses.
json check_response_text(const std::string& text) {
  FUZZ_CHECK(text.find('\n') == std::string::npos);  // would split the NDJSON stream
  json value = parse_with_document_elided(text);
  FUZZ_CHECK(!value.is_discarded());
  if (value.is_array()) {
    FUZZ_CHECK(!value.empty());
    for (const auto& member : value) check_response_object(member);
  } else {
    check_response_object(value);
  }
  return value;
}

int error_code(const json& response) {
  const auto error = response.find("error");
  if (error == response.end()) return 0;
  return error->at("code").get<int>();
}

// Whether a batch member or single message must be answered whatever else is wrong with it.
bool must_answer(const json& message) { return !message.is_object() || message.contains("id"); }

}  // namespace

void check_stdio_oracle_assumptions() { FUZZ_CHECK(document_is_valid_json()); }

void check_stdio_answer(std::string_view line, const std::vector<std::string>& responses) {
  FUZZ_CHECK(responses.size() <= 1);
  std::vector<json> parsed;
  for (const auto& text : responses) parsed.push_back(check_response_text(text));

  const json request = json::parse(line, nullptr, /*allow_exceptions=*/false);
  // nlohmann's lexer stops at a raw NUL and may accept what precedes it; the daemon refuses any NUL (-32700).
  const bool has_nul = line.find('\0') != std::string_view::npos;
  if (has_nul || request.is_discarded() || nesting_depth(line) > kMaxNesting) {
    FUZZ_CHECK(parsed.size() == 1 && parsed[0].is_object());
    FUZZ_CHECK(error_code(parsed[0]) == -32700 && parsed[0]["id"].is_null());
    return;
  }
  if (request.is_array()) {
    if (request.empty()) {
      FUZZ_CHECK(parsed.size() == 1 && parsed[0].is_object());
      FUZZ_CHECK(error_code(parsed[0]) == -32600 && parsed[0]["id"].is_null());
      return;
    }
    std::size_t required = 0;
    for (const auto& member : request) required += must_answer(member) ? 1 : 0;
    if (required > 0) FUZZ_CHECK(parsed.size() == 1);
    if (parsed.empty()) return;
    FUZZ_CHECK(parsed[0].is_array());
    FUZZ_CHECK(parsed[0].size() >= required && parsed[0].size() <= request.size());
    return;
  }
  if (!request.is_object()) {
    FUZZ_CHECK(parsed.size() == 1 && parsed[0].is_object());
    FUZZ_CHECK(error_code(parsed[0]) == -32600 && parsed[0]["id"].is_null());
    return;
  }
  const auto id = request.find("id");
  if (id == request.end()) {
    // A notification: nothing, or an invalid-request error that cannot name an id. Never a result.
    if (parsed.empty()) return;
    FUZZ_CHECK(parsed[0].is_object() && parsed[0].contains("error") && parsed[0]["id"].is_null());
    return;
  }
  FUZZ_CHECK(parsed.size() == 1 && parsed[0].is_object());
  if (is_valid_id(*id)) FUZZ_CHECK(parsed[0]["id"] == *id);  // echoed (null stays null)
  else FUZZ_CHECK(parsed[0]["id"].is_null() && error_code(parsed[0]) == -32600);
}

void check_overlong_answer(const std::string& response) {
  const json parsed = check_response_text(response);
  FUZZ_CHECK(parsed.is_object() && error_code(parsed) == -32004 && parsed["id"].is_null());
}

}  // namespace switchboard::fuzz
