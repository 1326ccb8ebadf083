#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/CoreMethods.h"
#include "rpc/PlainEnvelope.h"
#include "support/RecordingPeer.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Methods.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/support/Bug.h"

namespace dispatcher_tests {

using nlohmann::json;
using switchboard::rpc::Dispatcher;
using switchboard::testing::RecordingPeer;
namespace protocol = switchboard::protocol;
namespace rpc = switchboard::rpc;

// A daemon-like dispatcher: the core methods, a bus for initialize to publish on.
struct CoreFixture {
  switchboard::bus::EventBus bus;
  switchboard::bus::EventBus::Installation installation{bus};
  Dispatcher dispatcher;
  std::shared_ptr<RecordingPeer> peer = std::make_shared<RecordingPeer>();

  CoreFixture() { switchboard::daemon::bind_core_methods(dispatcher, {1 << 20}); }

  json call(const std::string& line) {
    const std::size_t before = peer->responses.size();
    dispatcher.handle_message(line, peer);
    if (peer->responses.size() == before) return json();  // nothing sent
    REQUIRE(peer->responses.size() == before + 1);
    return peer->responses.back();
  }
  void initialize() {
    const auto response = call(R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"test"}}})");
    REQUIRE(response.contains("result"));
  }
};

int error_code(const json& response) { return response.at("error").at("code").get<int>(); }

TEST_CASE("parse errors answer -32700 with id null", "[dispatcher]") {
  CoreFixture f;
  const auto response = f.call(R"({"jsonrpc":"2.0","id":1,"method":"ping")");
  CHECK(error_code(response) == -32700);
  CHECK(response.at("id").is_null());
  CHECK(response.at("jsonrpc") == "2.0");
}

TEST_CASE("a raw NUL byte anywhere in a message is a parse error", "[dispatcher]") {
  // The rule, at every position of a valid request, a valid notification and a valid batch: each would be
  // answered (or, the notification, accepted silently) without the NUL.
  CoreFixture f;
  for (const std::string& valid : {std::string(R"({"jsonrpc":"2.0","id":9,"method":"ping"})"),
                                  std::string(R"({"jsonrpc":"2.0","method":"ping"})"),
                                  std::string(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")}) {
    for (std::size_t at = 0; at <= valid.size(); ++at) {
      for (const std::string& tail : {std::string(), std::string("garbage")}) {
        std::string text = valid;
        text.insert(at, 1, '\0');
        if (at == valid.size()) text += tail;
        CAPTURE(valid, at, tail);
        const auto response = f.call(text);
        REQUIRE(response.is_object());
        CHECK(error_code(response) == -32700);
        CHECK(response.at("id").is_null());
      }
    }
  }
  // An escaped NUL inside a string is valid JSON.
  CHECK(f.call(R"({"jsonrpc":"2.0","id":"a\u0000b","method":"ping"})").contains("result"));
}

TEST_CASE("invalid requests answer -32600", "[dispatcher]") {
  CoreFixture f;
  CHECK(error_code(f.call(R"({"id":1,"method":"ping"})")) == -32600);
  CHECK(error_code(f.call(R"({"jsonrpc":"1.0","id":1,"method":"ping"})")) == -32600);
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":1,"method":5})")) == -32600);
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":{"x":1},"method":"ping"})")) == -32600);
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})")) == -32600);
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":1,"method":"ping","extra":true})")) == -32600);
  CHECK(error_code(f.call(R"(42)")) == -32600);
  CHECK(error_code(f.call(R"([])")) == -32600);
  // The id is echoed when it was valid, null when it was not.
  CHECK(f.call(R"({"id":7,"method":"ping"})").at("id") == 7);
  CHECK(f.call(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})").at("id").is_null());
}

TEST_CASE("unknown methods answer -32601, notifications get nothing", "[dispatcher]") {
  CoreFixture f;
  const auto response = f.call(R"({"jsonrpc":"2.0","id":3,"method":"session.nope"})");
  CHECK(error_code(response) == -32601);
  CHECK(response.at("error").at("message") == "method not found: session.nope");
  CHECK(f.call(R"({"jsonrpc":"2.0","method":"session.nope"})").is_null());
  CHECK(f.call(R"({"jsonrpc":"2.0","method":"ping"})").is_null());
  CHECK(f.peer->responses.size() == 1);
}

TEST_CASE("invalid params answer -32602 with the pointer of the bad field", "[dispatcher]") {
  CoreFixture f;
  const auto response = f.call(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":false}}})");
  CHECK(error_code(response) == -32602);
  CHECK(response.at("error").at("message") == "invalid params for initialize: /clientInfo/name: expected string, got boolean");
  CHECK(response.at("error").at("data").at("pointer") == "/clientInfo/name");
  CHECK(response.at("error").at("data").at("expected") == "string");

  const auto positional = f.call(R"({"jsonrpc":"2.0","id":2,"method":"ping","params":[]})");
  CHECK(error_code(positional) == -32602);
  CHECK(positional.at("error").at("data").at("expected") == "object");
  const auto unknown = f.call(R"({"jsonrpc":"2.0","id":3,"method":"ping","params":{"delay":1}})");
  CHECK(unknown.at("error").at("data").at("pointer") == "/delay");
}

TEST_CASE("ids are echoed exactly", "[dispatcher]") {
  CoreFixture f;
  CHECK(f.peer->responses.empty());
  f.call(R"({"jsonrpc":"2.0","id":"ab\u00e9\"c","method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":9007199254740993,"method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":-1,"method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":null,"method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})");
  f.call(R"({"jsonrpc":"2.0","id":0,"method":"ping"})");
  REQUIRE(f.peer->raw.size() == 7);
  CHECK(f.peer->responses[0].at("id") == "ab\xC3\xA9\"c");  // the same string (escapes may be normalized)
  CHECK(f.peer->raw[1].rfind(R"({"jsonrpc":"2.0","id":9007199254740993,)", 0) == 0);
  CHECK(f.peer->raw[2].rfind(R"({"jsonrpc":"2.0","id":-1,)", 0) == 0);
  CHECK(f.peer->raw[3].rfind(R"({"jsonrpc":"2.0","id":null,)", 0) == 0);
  CHECK(f.peer->raw[4].rfind(R"({"jsonrpc":"2.0","id":18446744073709551615,)", 0) == 0);
  CHECK(f.peer->raw[5].rfind(R"({"jsonrpc":"2.0","id":-9223372036854775808,)", 0) == 0);
  CHECK(f.peer->raw[6].rfind(R"({"jsonrpc":"2.0","id":0,)", 0) == 0);
}

TEST_CASE("batches answer as one array and skip notifications", "[dispatcher]") {
  CoreFixture f;
  SECTION("mixed batch") {
    const auto response = f.call(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},
                                     {"jsonrpc":"2.0","method":"ping"},
                                     {"jsonrpc":"2.0","id":2,"method":"nope"},
                                     7])");
    REQUIRE(response.is_array());
    REQUIRE(response.size() == 3);
    CHECK(response[0].at("id") == 1);
    CHECK(response[0].contains("result"));
    CHECK(response[1].at("id") == 2);
    CHECK(error_code(response[1]) == -32601);
    CHECK(error_code(response[2]) == -32600);
  }
  SECTION("all notifications: nothing at all") {
    CHECK(f.call(R"([{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"nope"}])").is_null());
    CHECK(f.peer->responses.empty());
  }
}

TEST_CASE("initialize negotiates the protocol version", "[dispatcher]") {
  CoreFixture f;
  SECTION("a supported version") {
    const auto response = f.call(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})");
    CHECK(response.at("result").at("protocolVersion") == 1);
    CHECK(response.at("result").at("supportedVersions") == json::array({1}));
    CHECK(response.at("result").at("serverInfo").at("name") == "switchboard");
    CHECK(f.peer->initialized());
    SECTION("a second initialize is refused") {
      CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})")) == -32005);
    }
  }
  SECTION("as a notification it changes nothing: no answer, not initialized, nobody told of a client") {
    int attached = 0;
    const auto subscription = f.bus.subscribe(protocol::EventKind::ClientAttached, [&](const auto&) { ++attached; });
    for (const auto* version : {"1", "99"}) {
      CHECK(f.call(std::string(R"({"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":)") + version +
                   R"(,"clientInfo":{"name":"t"}}})")
                .is_null());
    }
    CHECK(f.call(R"([{"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}}])").is_null());
    CHECK(f.peer->responses.empty());
    CHECK_FALSE(f.peer->initialized());
    CHECK(attached == 0);
    // The next real initialize is the first.
    CHECK(f.call(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})").contains("result"));
    CHECK(attached == 1);
  }
  SECTION("an unsupported version lists the supported ones") {
    const auto response = f.call(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":99,"clientInfo":{"name":"t"}}})");
    CHECK(error_code(response) == -32003);
    CHECK(response.at("error").at("data").at("supported") == json::array({1}));
    CHECK(response.at("error").at("data").at("requested") == 99);
    CHECK_FALSE(f.peer->initialized());
  }
}

// A test-only descriptor derived from a schema method, for behaviour no shipped method has yet.
struct GatedPing : protocol::PingMethod {
  static constexpr std::string_view kName = "test.gated";
  static constexpr bool kAllowedBeforeInitialize = false;
};

TEST_CASE("methods that need initialize are refused before it on stateful connections", "[dispatcher]") {
  CoreFixture f;
  f.dispatcher.bind<GatedPing>([](const auto&, auto reply, const auto&) { reply(protocol::PingResult{1}); });
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":1,"method":"test.gated"})")) == -32001);
  CHECK(f.call(R"({"jsonrpc":"2.0","id":2,"method":"ping"})").contains("result"));
  f.initialize();
  CHECK(f.call(R"({"jsonrpc":"2.0","id":3,"method":"test.gated"})").at("result").at("ts") == 1);

  SECTION("stateless peers (HTTP) need no handshake") {
    auto stateless = std::make_shared<RecordingPeer>(/*requires_initialize=*/false);
    f.dispatcher.handle_message(R"({"jsonrpc":"2.0","id":4,"method":"test.gated"})", stateless);
    REQUIRE(stateless->responses.size() == 1);
    CHECK(stateless->responses[0].contains("result"));
  }
}

TEST_CASE("a long call does not block others, responses may come out of order", "[dispatcher]") {
  Dispatcher dispatcher;
  auto peer = std::make_shared<RecordingPeer>(false);
  std::optional<rpc::Reply<protocol::InitializeResult>> parked;
  dispatcher.bind<protocol::InitializeMethod>([&](const auto&, auto reply, const auto&) { parked.emplace(std::move(reply)); });
  dispatcher.bind<protocol::PingMethod>([](const auto&, auto reply, const auto&) { reply(protocol::PingResult{5}); });

  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":"slow","method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})", peer);
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":"fast","method":"ping"})", peer);
  CHECK(dispatcher.calls_in_flight() == 1);
  REQUIRE(peer->responses.size() == 1);
  CHECK(peer->responses[0].at("id") == "fast");

  (*parked)(rpc::RpcError{protocol::ErrorCode::ShuttingDown, "later", nullptr});
  REQUIRE(peer->responses.size() == 2);
  CHECK(peer->responses[1].at("id") == "slow");
  CHECK(dispatcher.calls_in_flight() == 0);
}

TEST_CASE("a batch waits for its slowest member", "[dispatcher]") {
  Dispatcher dispatcher;
  auto peer = std::make_shared<RecordingPeer>(false);
  std::optional<rpc::Reply<protocol::InitializeResult>> parked;
  dispatcher.bind<protocol::InitializeMethod>([&](const auto&, auto reply, const auto&) { parked.emplace(std::move(reply)); });
  dispatcher.bind<protocol::PingMethod>([](const auto&, auto reply, const auto&) { reply(protocol::PingResult{5}); });
  dispatcher.handle_message(R"([{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}},
                                {"jsonrpc":"2.0","id":2,"method":"ping"}])", peer);
  CHECK(peer->responses.empty());
  (*parked)(rpc::RpcError{protocol::ErrorCode::ShuttingDown, "later", nullptr});
  REQUIRE(peer->responses.size() == 1);
  CHECK(peer->responses[0].size() == 2);
}

TEST_CASE("every call is answered exactly once", "[dispatcher]") {
  std::vector<std::string> bugs;
  const auto previous = switchboard::set_bug_handler([&](std::string_view what) { bugs.emplace_back(what); });
  Dispatcher dispatcher;
  auto peer = std::make_shared<RecordingPeer>(false);

  SECTION("a handler that drops its reply yields -32603 and a bug report") {
    dispatcher.bind<protocol::PingMethod>([](const auto&, auto, const auto&) {});
    dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", peer);
    REQUIRE(peer->responses.size() == 1);
    CHECK(error_code(peer->responses[0]) == -32603);
    CHECK(bugs.size() == 1);
  }
  SECTION("a second reply is dropped and reported") {
    dispatcher.bind<protocol::PingMethod>([](const auto&, auto reply, const auto&) {
      reply(protocol::PingResult{1});
      reply(protocol::PingResult{2});
    });
    dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", peer);
    REQUIRE(peer->responses.size() == 1);
    CHECK(peer->responses[0].at("result").at("ts") == 1);
    CHECK(bugs.size() == 1);
  }
  SECTION("a handler that throws yields -32603 with only a reference on the wire") {
    dispatcher.bind<protocol::PingMethod>([](const auto&, auto, const auto&) {
      throw std::runtime_error("secret path /home/user/.ssh/id_rsa");
    });
    dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", peer);
    REQUIRE(peer->responses.size() == 1);
    CHECK(error_code(peer->responses[0]) == -32603);
    CHECK(peer->raw[0].find("secret") == std::string::npos);
    const std::string reference = peer->responses[0].at("error").at("data").at("reference");
    CHECK(reference.rfind("ref-", 0) == 0);
    CHECK(bugs.empty());
  }
  switchboard::set_bug_handler(previous);
}

TEST_CASE("a draining dispatcher refuses new calls", "[dispatcher]") {
  CoreFixture f;
  f.dispatcher.set_draining(true);
  CHECK(error_code(f.call(R"({"jsonrpc":"2.0","id":1,"method":"ping"})")) == -32000);
}

TEST_CASE("dispatcher: the plain envelope reader takes the usual requests and leaves everything else to the parser",
          "[dispatcher]") {
  using rpc::read_plain_envelope;
  const auto ping = read_plain_envelope(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  REQUIRE(ping);
  CHECK(ping->id == 1);
  CHECK(ping->id.is_number_unsigned());  // typed as nlohmann types a parsed 1
  CHECK_FALSE(ping->is_notification);
  CHECK(ping->method == "ping");
  CHECK(ping->params.empty());

  const auto spaced = read_plain_envelope(" \t{ \"method\" : \"a.b\" ,\r\n\"params\":{\"x\":[1,{\"y\":\"}\\\"]\"}]}, \"jsonrpc\":\"2.0\", \"id\":\"q-1\" }\n");
  REQUIRE(spaced);
  CHECK(spaced->id == "q-1");
  CHECK(spaced->method == "a.b");
  CHECK(spaced->params == "{\"x\":[1,{\"y\":\"}\\\"]\"}]}");

  const auto notification = read_plain_envelope(R"({"jsonrpc":"2.0","method":"ping","params":[]})");
  REQUIRE(notification);
  CHECK(notification->is_notification);
  CHECK(notification->id.is_null());
  CHECK(notification->params == "[]");
  CHECK(read_plain_envelope(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")->id.is_null());
  CHECK_FALSE(read_plain_envelope(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")->is_notification);
  CHECK(read_plain_envelope(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})")->id.is_number_integer());
  CHECK(read_plain_envelope(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})")->id == 18446744073709551615u);

  for (const char* other : {
           R"({"jsonrpc":"2.0","id":1,"method":"ping","extra":1})",         // an unknown member
           R"({"jsonrpc":"2.0","id":1,"method":"ping","jsonrpc":"1.0"})",   // a member twice
           R"({"jsonrpc":"2.0","id":1,"id":2,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1})",                                  // no method
           R"({"id":1,"method":"ping"})",                                  // no version
           R"({"jsonrpc":"2.1","id":1,"method":"ping"})",
           R"({"jsonrpc":2,"id":1,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"method":5})",
           R"({"jsonrpc":"2.0","id":1,"method":"p\u0069ng"})",             // an escape
           R"({"jsonrpc":"2.0","id":"\u00e9","method":"ping"})",
           "{\"jsonrpc\":\"2.0\",\"id\":\"\xC3\xA9\",\"method\":\"ping\"}",  // not ASCII
           "{\"jsonrpc\":\"2.0\",\"id\":\"a\tb\",\"method\":\"ping\"}",     // a raw control character
           R"({"jsonrpc":"2.0","id":1.0,"method":"ping"})",                // a fraction, an exponent
           R"({"jsonrpc":"2.0","id":1e2,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":01,"method":"ping"})",                 // a leading zero
           R"({"jsonrpc":"2.0","id":-,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"})",  // beyond 64 bits
           R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":true,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":nul,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":nullx,"method":"ping"})",
           R"({"jsonrpc":"2.0","id":[1],"method":"ping"})",
           R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})",
           R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1})",  // params never closed
           R"({"jsonrpc":"2.0","id":1,"method":"ping",})",                 // a trailing comma
           R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)",                // trailing bytes
           R"({"jsonrpc":"2.0","id":1,"method":"ping"}{})",
           "\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",  // a byte order mark
           R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])",                // a batch
           R"({})", R"()", R"(  )", R"({"jsonrpc":"2.0")", R"("x")"}) {
    CAPTURE(other);
    CHECK_FALSE(read_plain_envelope(other));
  }
}

TEST_CASE("dispatcher: a message answers the same through the plain envelope as through the full parse",
          "[dispatcher]") {
  // handle_value() is the general path alone (the message parsed in full, then its members checked); every
  // text here that parses must get byte for byte the answer handle_message() gives it, whichever path that took.
  Dispatcher dispatcher;
  dispatcher.bind<protocol::PingMethod>([](const auto&, auto reply, const auto&) { reply(protocol::PingResult{5}); });
  dispatcher.bind<protocol::InitializeMethod>([](const protocol::InitializeParams& params, auto reply, const auto&) {
    reply(rpc::RpcError{protocol::ErrorCode::ShuttingDown, "hello " + params.client_info.name, nullptr});
  });
  const std::vector<std::string> texts = {
      R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":"1","method":"ping"})",
      R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":-0,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":-12,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":"\u00e9\"","method":"ping"})",
      R"({"jsonrpc":"2.0","id":1,"method":"nope"})",
      R"({"jsonrpc":"2.0","method":"nope"})",
      R"({"jsonrpc":"2.0","method":"ping"})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{}})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[]})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"delay":1}})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":"x"})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","jsonrpc":"1.0"})",
      R"({"jsonrpc":"1.0","id":1,"method":"ping","jsonrpc":"2.0"})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","id":"two"})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","params":[],"params":{}})",
      R"({"jsonrpc":"2.0","id":1,"method":"ping","extra":1})",
      R"({"jsonrpc":"2.0","id":1,"method":5})",
      R"({"id":1,"method":"ping"})",
      R"({"jsonrpc":"2.1","id":1,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}}})",
      R"({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":false}}})",
      R"({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"a}\"]b"}}})",
      R"({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"t"}},"x":{}})",
      " {\"jsonrpc\" : \"2.0\" ,\n\"method\":\"ping\" , \"id\" : 7 }\r\n",
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}])",
  };
  for (const auto& text : texts) {
    CAPTURE(text);
    auto plain = std::make_shared<RecordingPeer>(false);
    auto general = std::make_shared<RecordingPeer>(false);
    dispatcher.handle_message(text, plain);
    dispatcher.handle_value(json::parse(text), general);
    CHECK(plain->raw == general->raw);
  }
  // Params that are not JSON fail the whole message, as they did.
  auto peer = std::make_shared<RecordingPeer>(false);
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":}})", peer);
  dispatcher.handle_message(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\x"}})", peer);
  REQUIRE(peer->responses.size() == 2);
  CHECK(error_code(peer->responses[0]) == -32700);
  CHECK(error_code(peer->responses[1]) == -32700);
}

TEST_CASE("dispatcher: on mutated requests the plain envelope reader reads only what the full parse reads alike",
          "[dispatcher]") {
  // Random edits (a seeded generator, so a failure repeats) of valid requests, with the bytes the reader cares
  // about. Whatever the reader accepts (and the dispatcher would act on: no NUL, params that parse) must parse in
  // full to an object with the same members and values.
  const std::vector<std::string> seeds = {
      R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":"x","method":"a.b","params":{"k":[1,2,{"z":"}]"}]}})",
      R"( {"method":"m","jsonrpc":"2.0","params":[],"id":null} )",
      R"({"jsonrpc":"2.0","id":-12,"method":"ping","params":{"a":"\"}"}})",
  };
  const std::string bytes = std::string("{}[]\",:\\ \t\n0123456789-+.eEnultrfasjopcidmh") + '\x01' + '\x80' + '\xff';
  std::mt19937_64 random(20261202);
  int accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = seeds[random() % seeds.size()];
    for (int edits = 1 + static_cast<int>(random() % 4); edits > 0; --edits) {
      const std::size_t at = random() % (text.size() + 1);
      const char byte = bytes[random() % bytes.size()];
      switch (random() % 3) {
        case 0: text.insert(at, 1, byte); break;
        case 1: if (at < text.size()) text.erase(at, 1); break;
        default: if (at < text.size()) text[at] = byte; break;
      }
    }
    const auto plain = rpc::read_plain_envelope(text);
    if (!plain) continue;
    std::optional<json> params;
    if (!plain->params.empty()) {
      params = json::parse(plain->params, nullptr, /*allow_exceptions=*/false);
      if (params->is_discarded()) continue;  // the dispatcher parses the whole text then
    }
    ++accepted;
    CAPTURE(text);
    const auto full = json::parse(text, nullptr, /*allow_exceptions=*/false);
    REQUIRE(full.is_object());
    for (const auto& [key, value] : full.items()) {
      CHECK((key == "jsonrpc" || key == "id" || key == "method" || key == "params"));
    }
    CHECK(full.value("jsonrpc", json()) == "2.0");
    CHECK(full.value("method", json()) == std::string(plain->method));
    CHECK(full.contains("id") != plain->is_notification);
    if (full.contains("id")) {
      CHECK(full["id"] == plain->id);
      CHECK(full["id"].type() == plain->id.type());
    }
    CHECK(full.contains("params") == params.has_value());
    if (params) CHECK(full["params"] == *params);
  }
  CHECK(accepted > 100);  // the edits leave enough requests intact for this to test something
}

}  // namespace dispatcher_tests
