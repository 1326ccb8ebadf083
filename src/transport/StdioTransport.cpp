#include "switchboard/transport/StdioTransport.h"

#include <spdlog/spdlog.h>

#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Events.h"

namespace switchboard::transport {
namespace {

constexpr std::string_view kEventPrefix = R"({"jsonrpc":"2.0","method":"event","params":)";
constexpr std::string_view kEventSuffix = "}\n";

}  // namespace

class StdioTransport::Peer : public rpc::RpcPeer {
 public:
  Peer(std::weak_ptr<FdWriter> writer, protocol::Transport transport)
      : m_writer(std::move(writer)), m_transport(transport) {}

  void send_response(std::string message) override {
    // A reply to a long call may arrive after the transport is gone; it has nowhere to go then.
    if (auto writer = m_writer.lock()) writer->write(message, "\n", {});
  }
  bool requires_initialize() const override { return true; }
  protocol::Transport transport() const override { return m_transport; }

 private:
  std::weak_ptr<FdWriter> m_writer;
  protocol::Transport m_transport;
};

StdioTransport::StdioTransport(boost::asio::io_context& io, rpc::Dispatcher& dispatcher, bus::Egress& egress,
                               Options options, std::function<void()> on_input_closed)
    : m_dispatcher(dispatcher),
      m_egress(egress),
      m_writer(std::make_shared<FdWriter>(io, options.output_fd)),
      m_framer(options.max_line_bytes,
               LineFramer::Handler{[this](std::string_view line) { on_line(line); },
                                   [this](std::size_t limit) { on_overlong(limit); }}),
      m_peer(std::make_shared<Peer>(m_writer, options.transport)),
      m_peer_base(m_peer),
      m_on_input_closed(std::move(on_input_closed)) {
  m_reader = FdReader::create(
      io, options.input_fd, [this](std::string_view chunk) { m_framer.feed(chunk); },
      [this] {
        m_framer.finish();
        if (m_on_input_closed) m_on_input_closed();
      });
  m_egress.add_sink(*this);
}

StdioTransport::~StdioTransport() {
  m_egress.remove_sink(*this);
  m_reader->stop();
  // Closed now, not when the last pending handler lets the writer go: a client that stopped reading would
  // otherwise keep its descriptor open (and, handed over, keep its parent from seeing the end).
  m_writer->close();
}

void StdioTransport::start() { m_reader->start(); }

void StdioTransport::stop_input() { m_reader->stop(); }

void StdioTransport::when_output_drained(std::function<void()> done) { m_writer->when_drained(std::move(done)); }

void StdioTransport::on_output_broken(std::function<void()> callback) { m_writer->on_broken(std::move(callback)); }

const std::shared_ptr<rpc::RpcPeer>& StdioTransport::peer() const { return m_peer_base; }

void StdioTransport::on_line(std::string_view line) {
  // Blank lines (keep-alives some clients send) carry no message.
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  m_dispatcher.handle_message(line, m_peer_base);
}

void StdioTransport::on_overlong(std::size_t limit) {
  spdlog::warn("stdio: skipped a request line longer than {} bytes", limit);
  m_peer->send_response(rpc::render_error(
      nullptr, rpc::RpcError{protocol::ErrorCode::RequestTooLarge,
                             "request line exceeds " + std::to_string(limit) + " bytes; it was skipped",
                             nlohmann::json{{"limit", limit}}}));
}

void StdioTransport::on_event(const bus::EncodedEventPtr& event) {
  if (!m_peer->initialized()) return;  // events are versioned: only after the handshake
  m_writer->write(kEventPrefix, event->json, kEventSuffix);
}

}  // namespace switchboard::transport
