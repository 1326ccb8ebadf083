#pragma once

#include <string>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

namespace switchboard::http {

// The bytes of a complete response (start line, fields in their order, blank line, body), exactly as Beast's
// serializer would write them, appended to `out` so they go out in one write from one buffer. Beast's own
// serializer walks a chain of type-erased buffer iterators and hands the kernel a dozen pieces per response;
// on a small JSON-RPC answer that walk cost more than the dispatcher (see docs/performance.md). The message must
// be final: Content-Length and Connection already set (prepare_payload(), keep_alive()), no chunked body.
void append_wire_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response, std::string& out);

}  // namespace switchboard::http
