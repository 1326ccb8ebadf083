#pragma once

#include <cstdio>
#include <string>

#include "support/SourceTree.h"

// Where the official ACP SDK's node_modules are: what scripts/install-acp-sdk prints (it installs the pinned
// version once, into the user's cache, and is offline afterwards), or "" when it could not. Test-only.

namespace switchboard::testing {

inline std::string acp_sdk_modules() {
  static const std::string modules = [] {
    const std::string command = source_path("scripts/install-acp-sdk") + " 2>/dev/null";
    std::FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return std::string();
    char buffer[4096];
    std::string out;
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
    ::pclose(pipe);
    const std::string prefix = "SWITCHBOARD_ACP_SDK_DIR=";
    const auto at = out.find(prefix);
    if (at == std::string::npos) return std::string();
    auto path = out.substr(at + prefix.size());
    while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
    return path;
  }();
  return modules;
}

// The ACP JSON Schema (stable v1) shipped in the SDK.
inline std::string acp_schema_file() { return acp_sdk_modules() + "/@agentclientprotocol/sdk/schema/v1/schema.json"; }

}  // namespace switchboard::testing
