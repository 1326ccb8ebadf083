#pragma once

#include <string>

namespace switchboard::testing {

// The initialize request a test's stdio client sends before anything else, as one NDJSON line ('\n' included).
inline const std::string kInitializeLine =
    R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"test"}}})"
    "\n";

}  // namespace switchboard::testing
