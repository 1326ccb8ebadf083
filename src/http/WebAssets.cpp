#include "http/WebAssets.h"

namespace switchboard::http {

std::optional<WebAsset> find_web_asset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const auto& asset : web_assets()) {
    if (asset.path == path) return asset;
  }
  return std::nullopt;
}

}  // namespace switchboard::http
