#include <catch2/catch.hpp>

#include <sstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http/write.hpp>

#include "http/WireResponse.h"

// HttpConnection writes its responses through append_wire_bytes instead of Beast's serializer, and the plain ones
// (send_plain) through append_plain_response without a Beast message at all. The rule: for every response the
// session can build, the bytes are exactly the ones Beast would have written.

namespace wire_response_tests {

namespace bhttp = boost::beast::http;
using Response = bhttp::response<bhttp::string_body>;

std::string beast_bytes(const Response& response) {
  std::ostringstream out;
  out << response;  // Beast's own serializer
  return out.str();
}

std::string our_bytes(const Response& response) {
  std::string out;
  switchboard::http::append_wire_bytes(response, out);
  return out;
}

}  // namespace wire_response_tests

TEST_CASE("http wire response: byte for byte what Beast's serializer writes, for every status, version, body and header set",
          "[http][wire]") {
  using namespace wire_response_tests;
  const std::vector<bhttp::status> statuses = {
      bhttp::status::ok,           bhttp::status::no_content,         bhttp::status::bad_request,
      bhttp::status::unauthorized, bhttp::status::forbidden,          bhttp::status::not_found,
      bhttp::status::method_not_allowed, bhttp::status::payload_too_large, bhttp::status::unsupported_media_type,
      bhttp::status::request_header_fields_too_large};
  const std::vector<std::string> bodies = {"", "x\n", R"({"jsonrpc":"2.0","id":1,"result":{"ts":1796127390820}})",
                                           std::string(70000, 'b')};
  int compared = 0;
  for (const auto status : statuses) {
    for (const unsigned version : {10u, 11u}) {
      for (const bool keep_alive : {true, false}) {
        for (const auto& body : bodies) {
          // A 204 has no body (Beast refuses to prepare one with a body; the session never builds one).
          if (status == bhttp::status::no_content && !body.empty()) continue;
          for (const bool cors : {false, true}) {
            for (const bool extra : {false, true}) {
              // Built the way HttpConnection::make_response and handle() build theirs.
              Response response{status, version};
              response.set(bhttp::field::server, "switchboard");
              response.set(bhttp::field::content_type, "application/json");
              response.set(bhttp::field::cache_control, "no-store");
              response.set("X-Content-Type-Options", "nosniff");
              if (cors) {
                response.set(bhttp::field::access_control_allow_origin, "http://localhost:5173");
                response.set(bhttp::field::vary, "Origin");
              }
              response.body() = body;
              response.keep_alive(keep_alive);
              response.prepare_payload();
              if (extra) {
                response.set(bhttp::field::access_control_allow_methods, "GET, POST, OPTIONS");
                response.set("Content-Security-Policy", "default-src 'self'");
              }
              CAPTURE(static_cast<unsigned>(status), version, keep_alive, body.size(), cors, extra);
              CHECK(our_bytes(response) == beast_bytes(response));
              if (!extra) {
                // What send_plain() writes for the same response, from its parts.
                std::string plain;
                switchboard::http::append_plain_response(
                    {status, version, keep_alive, "application/json",
                     cors ? std::optional<std::string_view>("http://localhost:5173") : std::nullopt, body},
                    plain);
                CHECK(plain == beast_bytes(response));
              }
              ++compared;
            }
          }
        }
      }
    }
  }
  CHECK(compared == (9 * 4 + 1) * 2 * 2 * 2 * 2);
}

TEST_CASE("http wire response: the plain writer keeps what precedes it and trims the values as Beast's fields do",
          "[http][wire]") {
  using namespace wire_response_tests;
  Response response{bhttp::status::ok, 11};
  response.set(bhttp::field::server, "switchboard");
  response.set(bhttp::field::content_type, " text/plain\t");
  response.set(bhttp::field::cache_control, "no-store");
  response.set("X-Content-Type-Options", "nosniff");
  response.set(bhttp::field::access_control_allow_origin, "\thttp://127.0.0.1:9 ");
  response.set(bhttp::field::vary, "Origin");
  response.body() = "b";
  response.keep_alive(true);
  response.prepare_payload();
  std::string out = "before";
  switchboard::http::append_plain_response({bhttp::status::ok, 11, true, " text/plain\t", "\thttp://127.0.0.1:9 ", "b"}, out);
  CHECK(out == "before" + beast_bytes(response));
}

TEST_CASE("http wire response: a custom reason phrase and bytes already in the buffer are kept", "[http][wire]") {
  using namespace wire_response_tests;
  Response response{bhttp::status::ok, 11};
  response.reason("Fine");
  response.body() = "b";
  response.prepare_payload();
  std::string out = "before";
  switchboard::http::append_wire_bytes(response, out);
  CHECK(out == "before" + beast_bytes(response));
  CHECK(out == "beforeHTTP/1.1 200 Fine\r\nContent-Length: 1\r\n\r\nb");
}
