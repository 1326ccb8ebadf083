#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/steady_timer.hpp>
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
//   GET  /events                    SSE; the socket is handed to an SseSubscriber (token)
//   OPTIONS *                       CORS preflight for allow-listed origins
// Keep-alive is honoured. While an RPC call is running there is no timeout: a turn may take minutes.
//
// Lifetime of a call that answers later: the RPC peer holds the connection (shared_ptr) until the dispatcher has
// answered, so the answer always finds its connection. Meanwhile a read on the socket watches for the client
// going away (EOF or reset): then the socket is closed at once and the buffers released, the call goes on, and
// its answer, when it comes, is dropped; only this small object waits for it. Bytes a client pipelines behind
// the call are kept (bounded) for the next request.
class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  HttpConnection(boost::asio::ip::tcp::socket socket, HttpContext& context);
  ~HttpConnection();

  void start();
  // Closes the connection now (shutdown). A call still running keeps the object, not the socket.
  void close();
  // Called by the RPC peer when the dispatcher has answered (or had nothing to answer).
  void finish_rpc(std::optional<std::string> body);

 private:
  void read_request();
  void on_read(const boost::system::error_code& error);
  void handle(Request& request);
  void handle_rpc(Request& request);
  void handle_events(Request& request, std::string_view target);
  void send(const Response& response, bool close_after = false);
  // The same for a response with only make_response()'s fields, without building a Beast message.
  void send_plain(boost::beast::http::status status, std::string_view body, std::string_view content_type);
  void write_out(bool keep);  // writes m_out; then the next request, or the end of the connection
  Response make_response(boost::beast::http::status status, std::string body, std::string_view content_type);
  void refuse(boost::beast::http::status status, std::string_view why);
  void after_response(bool keep);
  void linger_and_close();
  void discard_input(std::size_t discarded);
  // While a call runs: a read that notices the client leaving (and keeps what it pipelines meanwhile).
  void watch_for_departure();
  void on_watch(const boost::system::error_code& error, std::size_t n);
  void on_client_gone(const boost::system::error_code& error);
  void unregister();
  // The idle deadline: a connection with no request (or whose client does not take its response) for
  // idle_timeout is closed. Restarting it is only a store; the one timer behind it is re-armed when it fires.
  void restart_deadline();
  void clear_deadline();  // no deadline while a call runs, or once the socket belongs to someone else
  void arm_deadline_timer();
  void on_deadline_timer(const boost::system::error_code& error);

  boost::beast::tcp_stream m_stream;
  HttpContext& m_context;
  boost::beast::flat_buffer m_buffer;
  std::string m_out;  // the bytes of the response being written
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> m_parser;
  std::string m_remote;
  boost::asio::steady_timer m_deadline_timer;
  std::chrono::steady_clock::time_point m_deadline = std::chrono::steady_clock::time_point::max();  // max: none
  bool m_deadline_timer_pending = false;
  // Per request: CORS headers to add and whether to keep the connection.
  std::optional<std::string> m_cors_origin;
  bool m_keep_alive = false;
  unsigned m_version = 11;
  bool m_registered = true;    // in m_context.connections; false once closed, gone or handed to SSE
  bool m_closed = false;       // the socket is closed (shutdown, or the client left mid-call)
  bool m_call_running = false; // a POST /rpc waits for the dispatcher's answer
  bool m_watching = false;     // the departure watch's read is outstanding
  enum class AfterWatch { Nothing, ReadNext, Linger };
  AfterWatch m_after_watch = AfterWatch::Nothing;  // what the answered connection does once the watch ends
};

}  // namespace switchboard::http
