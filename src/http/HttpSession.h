#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "http/HttpContext.h"

namespace switchboard::http {

// One HTTP/1.1 connection: reads requests (bounded header and body), applies the security checks, and routes:
//   GET  /                          the web page (no token: the page carries the token to the API)
//   GET  /.well-known/switchboard   identity (no token)
//   POST /rpc                       JSON-RPC through the shared dispatcher (token)
//   GET  /events                    SSE; the socket is handed to an SseSession (token)
//   OPTIONS *                       CORS preflight for allow-listed origins
// Keep-alive is honoured. While an RPC call is running there is no timeout: a turn may take minutes.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  HttpSession(boost::asio::ip::tcp::socket socket, HttpContext& context);
  ~HttpSession();

  void start();
  // Closes the connection now (shutdown).
  void close();
  // Called by the RPC peer when the dispatcher has answered (or had nothing to answer).
  void finish_rpc(std::optional<std::string> body);

 private:
  void read_request();
  void on_read(const boost::system::error_code& error);
  void handle(Request& request);
  void handle_rpc(Request& request);
  void handle_events(Request& request, std::string_view target);
  void send(Response response, bool close_after = false);
  Response make_response(boost::beast::http::status status, std::string body, std::string_view content_type);
  void refuse(boost::beast::http::status status, std::string_view why);
  void linger_and_close();
  void discard_input(std::size_t discarded);

  boost::beast::tcp_stream m_stream;
  HttpContext& m_context;
  boost::beast::flat_buffer m_buffer;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> m_parser;
  std::string m_remote;
  // Per request: CORS headers to add and whether to keep the connection.
  std::optional<std::string> m_cors_origin;
  std::optional<std::string> m_set_cookie;
  bool m_keep_alive = false;
  unsigned m_version = 11;
  bool m_handed_over = false;
};

}  // namespace switchboard::http
