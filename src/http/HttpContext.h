#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <unordered_set>

#include "http/HttpSecurity.h"
#include "http/SseHub.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::http {

class HttpConnection;

// What every HTTP connection shares: the one dispatcher, the SSE hub, the security policy and limits.
// Owned by HttpServer; connections hold a reference and never outlive the server's io_context run.
struct HttpContext {
  HttpContext(rpc::Dispatcher& dispatcher_, SseHub& hub_) : dispatcher(dispatcher_), hub(hub_) {}

  rpc::Dispatcher& dispatcher;
  SseHub& hub;
  SecurityPolicy policy;
  std::string identity_json;  // GET /.well-known/switchboard
  std::size_t max_body_bytes = 8 * 1024 * 1024;
  std::size_t max_header_bytes = 16 * 1024;
  std::chrono::milliseconds idle_timeout{30000};  // between requests on a keep-alive connection
  std::size_t max_connections = 1024;
  std::unordered_set<HttpConnection*> connections;  // open connections that are not SSE streams
};

inline constexpr std::string_view kIdentityPath = "/.well-known/switchboard";

}  // namespace switchboard::http
