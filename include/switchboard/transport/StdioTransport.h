#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>

#include "switchboard/bus/Egress.h"
#include "switchboard/protocol/generated/Types.h"
#include "switchboard/rpc/Dispatcher.h"
#include "switchboard/transport/FdReader.h"
#include "switchboard/transport/FdWriter.h"
#include "switchboard/transport/LineFramer.h"

namespace switchboard::transport {

// JSON-RPC 2.0 over NDJSON on a pair of descriptors (stdin/stdout for `switchboard stdio`, or both ends of one
// connection to the daemon's Unix-domain socket: the same protocol, byte for byte).
//
// Input lines go to the shared Dispatcher as they are framed; responses and event notifications share one
// FdWriter, so a line is never interleaved with another. Events reach this client only after it has
// initialized, as `{"jsonrpc":"2.0","method":"event","params":<event>}`, where <event> is the egress's bytes
// verbatim. End of input calls on_input_closed (the daemon then shuts down gracefully).
class StdioTransport : public bus::EventSink {
 public:
  struct Options {
    int input_fd = 0;
    int output_fd = 1;
    std::size_t max_line_bytes = 8 * 1024 * 1024;
    // What the client is reported as (client.attached): the daemon's stdio, or a socket connection.
    protocol::Transport transport = protocol::Transport::Stdio;
  };

  StdioTransport(boost::asio::io_context& io, rpc::Dispatcher& dispatcher, bus::Egress& egress, Options options,
                 std::function<void()> on_input_closed);
  ~StdioTransport() override;

  void start();
  // Stops reading input; output already queued is still written.
  void stop_input();
  // Calls `done` once all queued output has been written (or the reader of our output is gone).
  void when_output_drained(std::function<void()> done);
  // Calls `callback` once when the reader of our output is gone (EPIPE): nothing written from then on arrives.
  void on_output_broken(std::function<void()> callback);

  void on_event(const bus::EncodedEventPtr& event) override;

  // The connected client as the dispatcher sees it.
  const std::shared_ptr<rpc::RpcPeer>& peer() const;

 private:
  class Peer;

  void on_line(std::string_view line);
  void on_overlong(std::size_t limit);

  rpc::Dispatcher& m_dispatcher;
  bus::Egress& m_egress;
  std::shared_ptr<FdWriter> m_writer;
  std::shared_ptr<FdReader> m_reader;
  LineFramer m_framer;
  std::shared_ptr<Peer> m_peer;
  std::shared_ptr<rpc::RpcPeer> m_peer_base;
  std::function<void()> m_on_input_closed;
};

}  // namespace switchboard::transport
