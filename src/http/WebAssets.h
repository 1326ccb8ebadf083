#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace switchboard::http {

// One file of the web console, embedded in the binary at build time (cmake/EmbedWebAssets.cmake writes the
// table from web/ and the Debian-packaged JavaScript libraries; nothing is read from disk at run time).
struct WebAsset {
  std::string_view path;          // the URL path it is served at, e.g. "/index.html"
  std::string_view content_type;  // the Content-Type header
  std::string_view bytes;
};

// Every embedded file (the generated source defines it).
std::span<const WebAsset> web_assets();

// The asset served at a request path: "/" is the console's index.html; anything not embedded is nullopt.
std::optional<WebAsset> find_web_asset(std::string_view path);

// The headers every console file is served with: a Content-Security-Policy that allows only the daemon's own
// scripts, styles and connections (no inline script, no framing, no plugins, no form posts), and no referrer.
inline constexpr std::string_view kConsoleContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace switchboard::http
