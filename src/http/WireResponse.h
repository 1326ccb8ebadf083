#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace switchboard::http {

// The bytes of a complete response (start line, fields in their order, blank line, body), exactly as Beast's
// serializer would write them, appended to `out` so they go out in one write from one buffer. Beast's own
// serializer walks a chain of type-erased buffer iterators and hands the kernel a dozen pieces per response;
// on a small JSON-RPC answer that walk cost more than the dispatcher (see docs/performance.md). The message must
// be final: Content-Length and Connection already set (prepare_payload(), keep_alive()), no chunked body.
void append_wire_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response, std::string& out);

// A response with only the fields every answer of HttpConnection carries: what HttpConnection::make_response builds.
struct PlainResponse {
  boost::beast::http::status status;
  unsigned version;  // 10 or 11, as Beast numbers them
  bool keep_alive;
  std::string_view content_type;
  std::optional<std::string_view> cors_origin;  // adds Access-Control-Allow-Origin and Vary: Origin
  std::string_view body;
};

// The bytes append_wire_bytes() gives for that response once built as a Beast message, written straight from
// the parts: building the message first costs an allocation per field and a walk over them, on every answer
// to POST /rpc. The test in HttpWireResponseTests holds the two to the same bytes.
void append_plain_response(const PlainResponse& response, std::string& out);

}  // namespace switchboard::http
