#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace switchboard::rpc {

// The envelope of a request in its usual shape, read without building a JSON value of the whole message.
struct PlainEnvelope {
  nlohmann::json id;  // null for a notification, as the general path has it
  bool is_notification = true;
  std::string_view method;
  std::string_view params;  // the text of the params object or array; empty when the member is absent
};

// Reads `text` when it is one object whose members are "jsonrpc": "2.0", a "method" string, optionally an "id"
// (a string, an integer or null) and optionally "params" (an object or an array), each at most once, with
// strings of printable ASCII and no escapes. That is almost every request a client sends, and for it the
// general parse (a DOM of the whole message, then a walk over its members) costs more than the call itself.
//
// nullopt means "not this shape", not "invalid": the caller then parses the text in full and reaches its
// verdict (an error, or a call) as it always has. So this accepts nothing the full parse would refuse or read
// differently; the params text is left for the caller to parse, and is valid only if that parse succeeds.
std::optional<PlainEnvelope> read_plain_envelope(std::string_view text);

}  // namespace switchboard::rpc
