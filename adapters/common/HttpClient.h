#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http/verb.hpp>
#include <nlohmann/json.hpp>

namespace switchboard::adapters {

// An HTTP/1.1 client on the daemon's io_context (Beast), for agents that are local servers (OpenCode's
// `opencode serve`): one kept-alive connection to one host and port, requests sent one at a time in the order
// given, each with its own deadline (connect, write and read together). A connection the server closed while it
// was idle is noticed at the next request, which is sent again once on a fresh connection; a request that fails
// otherwise fails, and the next one connects anew. Callbacks run on the io_context thread, never after the
// client is destroyed (pending requests are then dropped without a call).
struct HttpRequest {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string target = "/";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type;  // set with a body
  std::chrono::milliseconds timeout{30000};
};

struct HttpResponse {
  unsigned status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // The first header of that name (case-insensitive), or empty.
  std::string header(std::string_view name) const;
};

struct HttpFailure {
  std::string message;
  bool timed_out = false;
};

using HttpOutcome = std::variant<HttpResponse, HttpFailure>;

class HttpClient {
 public:
  HttpClient(boost::asio::io_context& io, std::string host, std::uint16_t port);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void send(HttpRequest request, std::function<void(HttpOutcome)> done);

  // A JSON body in and out: a response that is not 2xx, or not JSON, is a failure naming the status and the
  // start of the body. An empty 2xx body is null.
  using JsonOutcome = std::variant<nlohmann::json, HttpFailure>;
  void send_json(boost::beast::http::verb method, std::string target, const nlohmann::json& body,
                 std::function<void(JsonOutcome)> done, std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // How many connections were opened so far (keep-alive reuses one).
  std::uint64_t connections_opened() const;

 private:
  class Impl;
  std::shared_ptr<Impl> m_impl;
};

}  // namespace switchboard::adapters
