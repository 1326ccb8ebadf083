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
// The checks on what was answered live in StdioOracle.cpp, built without coverage hooks.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "FuzzCheck.h"
#include "StdioOracle.h"
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

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  spdlog::set_level(spdlog::level::off);
  // report_bug() aborts only in !NDEBUG builds and the fuzz preset is RelWithDebInfo: make every bug a crash.
  switchboard::set_bug_handler([](std::string_view) { __builtin_trap(); });
  switchboard::fuzz::check_stdio_oracle_assumptions();
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
            switchboard::fuzz::check_stdio_answer(line, peer->responses);
          },
          [&](std::size_t limit) {
            FUZZ_CHECK(limit == kMaxLineBytes);
            // What StdioTransport::on_overlong sends.
            const std::string response = switchboard::rpc::render_error(
                nullptr, switchboard::rpc::RpcError{switchboard::protocol::ErrorCode::RequestTooLarge,
                                                    "request line exceeds " + std::to_string(limit) +
                                                        " bytes; it was skipped",
                                                    json{{"limit", limit}}});
            switchboard::fuzz::check_overlong_answer(response);
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
