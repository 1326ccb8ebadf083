// Parsing a response with the OpenRPC document elided, for the fuzz harnesses' oracles.
//
// rpc.discover answers with the whole OpenRPC document (tens of KB of fixed text). Parsing it again in the
// oracle on every run, under ASan and with the parser instrumented for coverage, took ~13 ms per copy: an input
// holding a dozen rpc.discover calls took 200 ms, and such inputs were most of a campaign's time. The document
// is parsed once, at start-up (document_is_valid_json); afterwards each copy of it in a response is replaced
// by a small object before parsing.
//
// Why the replacement keeps the oracle sound: the document and the stand-in are both JSON objects whose text
// begins with `{"`. Wherever a copy sits in the response, the two texts make the response valid or invalid
// alike: where a value may start, both are one complete value; after a value, as an object key, or inside a
// string (where `"` ends the string and a bare word follows), both are a syntax error at their first bytes.
// So the elided text parses if and only if the original does, with the same structure around the stand-in.
//
// Oracle code, compiled without coverage hooks (tests/fuzz/CMakeLists.txt explains why); it parses into
// ordered_json, a type the daemon never uses, so the linker cannot swap its parser for the daemon's.

#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "switchboard/protocol/generated/OpenRpcDocument.h"

namespace switchboard::fuzz {

inline constexpr std::string_view kDocumentStandIn = R"({"fuzz":"openrpc document elided"})";

// Whether the document served by rpc.discover is itself one JSON object (checked once: see above).
inline bool document_is_valid_json() {
  const auto document = nlohmann::ordered_json::parse(protocol::openrpc_document_text(), nullptr, /*allow_exceptions=*/false);
  return document.is_object() && protocol::openrpc_document_text().substr(0, 2) == "{\"";
}

// `text` with every copy of the OpenRPC document replaced by kDocumentStandIn, parsed (discarded if invalid).
inline nlohmann::ordered_json parse_with_document_elided(std::string_view text) {
  const std::string_view document = protocol::openrpc_document_text();
  auto found = text.find(document);
  if (found == std::string_view::npos) return nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string elided;
  elided.reserve(text.size());
  std::size_t from = 0;
  for (; found != std::string_view::npos; found = text.find(document, from)) {
    elided.append(text.substr(from, found - from));
    elided.append(kDocumentStandIn);
    from = found + document.size();
  }
  elided.append(text.substr(from));
  return nlohmann::ordered_json::parse(elided, nullptr, /*allow_exceptions=*/false);
}

}  // namespace switchboard::fuzz
