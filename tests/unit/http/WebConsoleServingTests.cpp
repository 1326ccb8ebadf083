#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <string>

#include "http/WebAssets.h"
#include "support/HttpHarness.h"
#include "support/RawHttpClient.h"

namespace web_console_serving_tests {

using switchboard::http::find_web_asset;
using switchboard::http::web_assets;
using switchboard::testing::HttpHarness;
using switchboard::testing::RawHttpClient;

// Each directive of a Content-Security-Policy header, name -> its source list.
std::map<std::string, std::string> directives(const std::string& policy) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < policy.size()) {
    auto end = policy.find(';', start);
    if (end == std::string::npos) end = policy.size();
    auto directive = policy.substr(start, end - start);
    directive.erase(0, directive.find_first_not_of(' '));
    const auto space = directive.find(' ');
    if (!directive.empty()) out[directive.substr(0, space)] = space == std::string::npos ? "" : directive.substr(space + 1);
    start = end + 1;
  }
  return out;
}

TEST_CASE("the console is embedded: index.html, its modules, its stylesheet and the two vendored libraries",
          "[http][console]") {
  for (const auto* path : {"/index.html", "/console.js", "/console.css", "/vendor/marked.js", "/vendor/purify.js"}) {
    CAPTURE(path);
    const auto asset = find_web_asset(path);
    REQUIRE(asset);
    CHECK(asset->bytes.size() > 100);
  }
  CHECK(find_web_asset("/")->path == "/index.html");
  CHECK_FALSE(find_web_asset("/nope.js"));
  CHECK_FALSE(find_web_asset("index.html"));  // paths are absolute, as requests carry them
}

TEST_CASE("every console file is served without a token, with a strict CSP, nosniff, no framing and no referrer",
          "[http][console][security]") {
  HttpHarness h;
  for (const auto& asset : web_assets()) {
    const std::string path(asset.path);
    CAPTURE(path);
    RawHttpClient client(h.port());
    const auto response = client.request("GET", path, {});
    REQUIRE(response.status == 200);
    CHECK(response.body == asset.bytes);
    CHECK(response.headers.at("content-type") == asset.content_type);
    CHECK(response.headers.at("x-content-type-options") == "nosniff");
    CHECK(response.headers.at("referrer-policy") == "no-referrer");
    CHECK(response.headers.at("x-frame-options") == "DENY");
    CHECK(response.headers.count("set-cookie") == 0);
    const auto policy = directives(response.headers.at("content-security-policy"));
    CHECK(policy.at("default-src") == "'self'");
    CHECK(policy.at("script-src") == "'self'");  // no 'unsafe-inline', no 'unsafe-eval', no other host
    CHECK(policy.at("frame-ancestors") == "'none'");
    CHECK(policy.at("object-src") == "'none'");
    for (const auto& [name, sources] : policy) {
      CAPTURE(name);
      CHECK(sources.find("unsafe") == std::string::npos);
      CHECK(sources.find('*') == std::string::npos);
    }
  }
  RawHttpClient root(h.port());
  const auto page = root.request("GET", "/", {});
  REQUIRE(page.status == 200);
  CHECK(page.body == find_web_asset("/index.html")->bytes);
  CHECK(page.body.find(h.token()) == std::string::npos);  // the page never carries the token
}

TEST_CASE("the console's HTML has no inline script or handler for the CSP to refuse", "[http][console][security]") {
  // The CSP forbids inline script; a <script> without src or an on*= attribute would simply not run.
  for (const auto& asset : web_assets()) {
    if (asset.content_type.rfind("text/html", 0) != 0) continue;
    const std::string html(asset.bytes);
    CAPTURE(asset.path);
    const std::regex script_tag("<script\\b[^>]*>", std::regex::icase);
    int scripts = 0;
    for (auto it = std::sregex_iterator(html.begin(), html.end(), script_tag); it != std::sregex_iterator(); ++it) {
      CHECK(it->str().find(" src=") != std::string::npos);
      ++scripts;
    }
    CHECK(scripts > 0);
    CHECK_FALSE(std::regex_search(html, std::regex("\\son[a-z]+\\s*=", std::regex::icase)));
    CHECK(html.find("<style") == std::string::npos);
  }
}

TEST_CASE("console paths take only GET, and the API beside them keeps its token", "[http][console][security]") {
  HttpHarness h;
  RawHttpClient post(h.port());
  CHECK(post.request("POST", "/console.js", {"Content-Type: application/json"}, "{}").status == 405);
  RawHttpClient missing(h.port());
  CHECK(missing.request("GET", "/vendor/nope.js", {}).status == 404);
  RawHttpClient rpc(h.port());
  CHECK(rpc.request("POST", "/rpc", {"Content-Type: application/json"}, R"({"jsonrpc":"2.0","id":1,"method":"ping"})")
            .status == 401);
  RawHttpClient events(h.port());
  CHECK(events.request("GET", "/events", {}).status == 401);
}

}  // namespace web_console_serving_tests
