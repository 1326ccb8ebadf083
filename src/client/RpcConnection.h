#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "switchboard/transport/FdReader.h"
#include "switchboard/transport/FdWriter.h"
#include "switchboard/transport/LineFramer.h"

namespace switchboard::client {

// The client side of the stdio protocol on one connected socket (the daemon's daemon.sock, or one end of a
// socketpair whose other end a daemon in this process serves): requests out, responses matched to their
// callbacks by id, event notifications handed on with their exact bytes (what SSE and stdio carry). It lives
// on one io_context thread and never blocks it.
//
// Callback order: `on_event` and the response callbacks run in the order the lines arrived; `on_closed` runs
// once, when the daemon closes the connection (or it fails), after every line before it; calls still waiting
// then never get an answer (the owner decides what that means).
class RpcConnection {
 public:
  // `params` is the event notification's params (the event envelope), raw and parsed.
  using OnEvent = std::function<void(std::string_view params_text, const nlohmann::json& params)>;
  // The response object: it has "result" or "error".
  using OnResponse = std::function<void(const nlohmann::json& response)>;

  // Takes `fd` (a connected stream socket).
  RpcConnection(boost::asio::io_context& io, int fd, OnEvent on_event, std::function<void()> on_closed);
  ~RpcConnection();
  RpcConnection(const RpcConnection&) = delete;
  RpcConnection& operator=(const RpcConnection&) = delete;

  void start();
  void call(std::string_view method, nlohmann::json params, OnResponse done);
  // Half-closes once everything written so far has left: the daemon answers what it has, then closes, and
  // `on_closed` runs. Calls made afterwards are not sent.
  void finish();
  bool closed() const { return m_closed; }

 private:
  void on_line(std::string_view line);
  void on_end();

  boost::asio::io_context& m_io;
  int m_fd;
  OnEvent m_on_event;
  std::function<void()> m_on_closed;
  transport::LineFramer m_framer;
  std::shared_ptr<transport::FdReader> m_reader;
  std::shared_ptr<transport::FdWriter> m_writer;
  std::map<std::int64_t, OnResponse> m_waiting;
  std::int64_t m_next_id = 1;
  bool m_finishing = false;
  bool m_closed = false;
};

}  // namespace switchboard::client
