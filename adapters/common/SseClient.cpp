#include "common/SseClient.h"

#include <array>
#include <optional>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace switchboard::adapters {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

// One connection's life, shared with the operations in flight; close() marks it dead and closes the socket.
class SseClient::Stream : public std::enable_shared_from_this<Stream> {
 public:
  Stream(boost::asio::io_context& io, Options options, Handlers handlers, std::string& last_event_id)
      : m_stream(io),
        m_options(std::move(options)),
        m_handlers(std::move(handlers)),
        m_last_event_id(last_event_id),
        m_parser_events({[this](SseEvent event) {
                           if (m_dead) return;  // closed (or the client destroyed) by an earlier event's handler
                           m_last_event_id = event.last_event_id;
                           if (m_handlers.on_event) m_handlers.on_event(std::move(event));
                         },
                         [this](std::chrono::milliseconds retry) {
                           if (!m_dead && m_handlers.on_retry) m_handlers.on_retry(retry);
                         },
                         {}}) {}

  void start(const std::string& host, std::uint16_t port) {
    beast::error_code not_an_address;
    const auto address = boost::asio::ip::make_address(host, not_an_address);
    if (not_an_address) return closed("not an IP address: " + host);
    m_request = http::request<http::empty_body>(http::verb::get, m_options.target, 11);
    m_request.set(http::field::host, host + ":" + std::to_string(port));
    m_request.set(http::field::accept, "text/event-stream");
    m_request.set(http::field::cache_control, "no-cache");
    for (const auto& [name, value] : m_options.headers) m_request.set(name, value);
    m_stream.expires_after(m_options.connect_timeout);
    m_stream.async_connect(tcp::endpoint(address, port), [self = shared_from_this()](const beast::error_code& connected) {
      if (self->m_dead) return;
      if (connected) return self->closed("cannot connect: " + connected.message());
      http::async_write(self->m_stream, self->m_request, [self](const beast::error_code& written, std::size_t) {
        if (self->m_dead) return;
        if (written) return self->closed("cannot send the request: " + written.message());
        self->m_parser.body_limit(boost::none);  // a stream has no end we could bound
        http::async_read_header(self->m_stream, self->m_buffer, self->m_parser,
                                [self](const beast::error_code& read, std::size_t) { self->on_header(read); });
      });
    });
  }

  void kill() {
    m_dead = true;
    beast::error_code ignored;
    m_stream.socket().close(ignored);
  }

 private:
  void on_header(const beast::error_code& error) {
    if (m_dead) return;
    if (error) return closed("no response: " + error.message());
    const auto& header = m_parser.get();
    const auto type = header[http::field::content_type];
    if (header.result() != http::status::ok || !type.starts_with("text/event-stream")) {
      return closed("HTTP " + std::to_string(header.result_int()) + " " + std::string(type.data(), type.size()) +
                    " is not an event stream");
    }
    if (m_handlers.on_open) m_handlers.on_open();
    if (m_dead) return;
    read_some();
  }

  void read_some() {
    if (m_options.idle_timeout.count() > 0) {
      m_stream.expires_after(m_options.idle_timeout);
    } else {
      m_stream.expires_never();
    }
    m_parser.get().body().data = m_chunk.data();
    m_parser.get().body().size = m_chunk.size();
    http::async_read_some(m_stream, m_buffer, m_parser, [self = shared_from_this()](beast::error_code error, std::size_t) {
      if (self->m_dead) return;
      if (error == http::error::need_buffer) error = {};
      const auto got = self->m_chunk.size() - self->m_parser.get().body().size;
      if (got > 0) self->m_parser_events.feed(std::string_view(self->m_chunk.data(), got));
      if (self->m_dead) return;
      if (error == beast::error::timeout) return self->closed("no data for " + std::to_string(self->m_options.idle_timeout.count()) + " ms");
      if (error) return self->closed("the stream broke: " + error.message());
      if (self->m_parser.is_done()) return self->closed("the server ended the stream");
      self->read_some();
    });
  }

  void closed(std::string reason) {
    if (m_dead) return;
    m_dead = true;
    m_parser_events.finish();
    beast::error_code ignored;
    m_stream.socket().close(ignored);
    if (m_handlers.on_closed) m_handlers.on_closed(std::move(reason));
  }

  beast::tcp_stream m_stream;
  Options m_options;
  Handlers m_handlers;
  std::string& m_last_event_id;  // the client's: it outlives the stream's callbacks (they stop at kill())
  beast::flat_buffer m_buffer;
  http::request<http::empty_body> m_request;
  http::response_parser<http::buffer_body> m_parser;
  std::array<char, 16 * 1024> m_chunk{};
  SseParser m_parser_events;
  bool m_dead = false;
};

SseClient::SseClient(boost::asio::io_context& io, std::string host, std::uint16_t port)
    : m_io(io), m_host(std::move(host)), m_port(port) {}

SseClient::~SseClient() { close(); }

void SseClient::open(Options options, Handlers handlers) {
  close();
  m_stream = std::make_shared<Stream>(m_io, std::move(options), std::move(handlers), m_last_event_id);
  m_stream->start(m_host, m_port);
}

void SseClient::close() {
  if (m_stream) m_stream->kill();
  m_stream.reset();
}

const std::string& SseClient::last_event_id() const { return m_last_event_id; }

}  // namespace switchboard::adapters
