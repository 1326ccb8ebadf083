// libFuzzer target for the stdio request path: bytes -> LineFramer -> Dispatcher (with the real core methods
// bound) -> responses.
//
// The input is fed to a LineFramer with a small cap (so the over-long path is reachable) in two or three chunks
// whose boundaries are derived from the first byte (so lines cross chunk boundaries). Each line goes through
// the same blank-line filter as StdioTransport and then to Dispatcher::handle_message with a fresh peer per
// input. Oracles (a violation traps):
//   - every response is one line of valid JSON: an object, or a non-empty array of objects, each a
//     well-formed JSON-RPC 2.0 response ("jsonrpc":"2.0", an id, exactly one of result/error, error.code an
//     integer, error.message a string);
//   - a line gets at most one response (everything here is synchronous); invalid JSON gets exactly one -32700
//     with id null; a request with an id gets exactly one response, echoing a string/number id unchanged; a
//     notification never gets a result; a batch answer has between (#members that must be answered) and
//     (#members) elements;
//   - no call is left in flight after the input, and report_bug() (which only aborts in !NDEBUG builds) traps.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "daemon/CoreMethods.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/rpc/Reply.h"
#include "switchboard/rpc/RpcError.h"
#include "switchboard/rpc/RpcPeer.h"
#include "switchboard/support/Bug.h"
#include "switchboard/transport/LineFramer.h"

namespace {

using nlohmann::json;

constexpr std::size_t kMaxLineBytes = 4096;

[[noreturn]] void fail() { __builtin_trap(); }

#define FUZZ_CHECK(condition) \
  do {                        \
    if (!(condition)) fail(); \
  } while (false)

class FuzzPeer final : public switchboard::rpc::RpcPeer {
 public:
  void send_response(std::string message) override { responses.push_back(std::move(message)); }
  bool requires_initialize() const override { return true; }
  switchboard::protocol::Transport transport() const override { return switchboard::protocol::Transport::Stdio; }

  std::vector<std::string> responses;
};

// Process-wide state, built once: initialize publishes on the installed bus, and only one egress may exist.
struct World {
  switchboard::bus::EventBus bus;
  switchboard::bus::EventBus::Installation installation{bus};
  switchboard::bus::Egress egress{bus};
  switchboard::rpc::Dispatcher dispatcher;
};

World* g_world = nullptr;

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
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
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

void check_line(std::string_view line, const std::vector<std::string>& responses) {
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

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  spdlog::set_level(spdlog::level::off);
  // report_bug() aborts only in !NDEBUG builds and the fuzz preset is RelWithDebInfo: make every bug a crash.
  switchboard::set_bug_handler([](std::string_view) { __builtin_trap(); });
  g_world = new World();
  switchboard::daemon::bind_core_methods(g_world->dispatcher, {kMaxLineBytes});
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto peer = std::make_shared<FuzzPeer>();
  const std::shared_ptr<switchboard::rpc::RpcPeer> peer_base = peer;

  switchboard::transport::LineFramer framer(
      kMaxLineBytes,
      switchboard::transport::LineFramer::Handler{
          [&](std::string_view line) {
            FUZZ_CHECK(line.size() <= kMaxLineBytes);
            FUZZ_CHECK(line.find('\n') == std::string_view::npos);
            // The same filter as StdioTransport::on_line: blank lines carry no message.
            if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
            peer->responses.clear();
            g_world->dispatcher.handle_message(line, peer_base);
            check_line(line, peer->responses);
          },
          [&](std::size_t limit) {
            FUZZ_CHECK(limit == kMaxLineBytes);
            // What StdioTransport::on_overlong sends.
            const std::string response = switchboard::rpc::render_error(
                nullptr, switchboard::rpc::RpcError{switchboard::protocol::ErrorCode::RequestTooLarge,
                                                    "request line exceeds " + std::to_string(limit) +
                                                        " bytes; it was skipped",
                                                    json{{"limit", limit}}});
            const json parsed = check_response_text(response);
            FUZZ_CHECK(parsed.is_object() && error_code(parsed) == -32004 && parsed["id"].is_null());
          }});

  // Two or three chunks, cut at fractions of the input chosen by the first byte's nibbles.
  const std::size_t control = size == 0 ? 0 : data[0];
  const std::size_t cut1 = size * (control & 0x0F) / 15;
  const std::size_t cut2 = cut1 + (size - cut1) * (control >> 4) / 15;
  framer.feed(input.substr(0, cut1));
  framer.feed(input.substr(cut1, cut2 - cut1));
  framer.feed(input.substr(cut2));
  framer.finish();
  FUZZ_CHECK(framer.buffered_bytes() == 0);
  FUZZ_CHECK(g_world->dispatcher.calls_in_flight() == 0);
  return 0;
}
