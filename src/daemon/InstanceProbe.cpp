#include "daemon/InstanceProbe.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace switchboard::daemon {

std::optional<nlohmann::json> fetch_identity(const std::string& host, unsigned short port,
                                             std::chrono::milliseconds timeout) {
  namespace beast = boost::beast;
  namespace http = beast::http;
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  std::optional<nlohmann::json> identity;
  boost::system::error_code error;
  const auto address = boost::asio::ip::make_address(host, error);
  if (error) return std::nullopt;
  const boost::asio::ip::tcp::endpoint endpoint(address, port);
  http::request<http::empty_body> request{http::verb::get, "/.well-known/switchboard", 11};
  request.set(http::field::host, (address.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(port));
  beast::flat_buffer buffer;
  http::response<http::string_body> response;
  stream.expires_after(timeout);
  stream.async_connect(endpoint, [&](const boost::system::error_code& connect_error) {
    if (connect_error) return;
    http::async_write(stream, request, [&](const boost::system::error_code& write_error, std::size_t) {
      if (write_error) return;
      http::async_read(stream, buffer, response, [&](const boost::system::error_code& read_error, std::size_t) {
        if (read_error || response.result() != http::status::ok) return;
        auto parsed = nlohmann::json::parse(response.body(), nullptr, false);
        if (parsed.is_object()) identity = std::move(parsed);
      });
    });
  });
  io.run();
  return identity;
}

}  // namespace switchboard::daemon
