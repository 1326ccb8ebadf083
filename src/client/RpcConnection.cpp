#include "client/RpcConnection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace switchboard::client {
namespace {

// How the daemon frames an event notification (transport/StdioTransport.cpp): the params follow this prefix
// byte for byte, and the line ends with the envelope's closing brace.
constexpr std::string_view kEventPrefix = R"({"jsonrpc":"2.0","method":"event","params":)";
// The daemon caps the lines it reads at 8 MiB by default; what it writes (a tool's output in an event) may be
// larger, so the client reads generously.
constexpr std::size_t kMaxLineBytes = 64 * 1024 * 1024;

}  // namespace

RpcConnection::RpcConnection(boost::asio::io_context& io, int fd, OnEvent on_event, std::function<void()> on_closed)
    : m_io(io),
      m_fd(fd),
      m_on_event(std::move(on_event)),
      m_on_closed(std::move(on_closed)),
      m_framer(kMaxLineBytes, transport::LineFramer::Handler{
                                  [this](std::string_view line) { on_line(line); },
                                  [](std::size_t limit) { spdlog::error("daemon connection: a line from the daemon is over {} bytes; skipped", limit); }}) {}

RpcConnection::~RpcConnection() {
  if (m_reader) m_reader->stop();
  m_writer.reset();
  m_reader.reset();
  if (m_fd >= 0) ::close(m_fd);
}

void RpcConnection::start() {
  m_writer = std::make_shared<transport::FdWriter>(m_io, m_fd);
  m_reader = transport::FdReader::create(
      m_io, m_fd, [this](std::string_view chunk) { m_framer.feed(chunk); }, [this] { on_end(); });
  m_reader->start();
}

void RpcConnection::call(std::string_view method, nlohmann::json params, OnResponse done) {
  if (m_finishing || m_closed) return;
  const std::int64_t id = m_next_id++;
  m_waiting.emplace(id, std::move(done));
  nlohmann::json request{{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
  if (!params.is_null()) request["params"] = std::move(params);
  m_writer->write(request.dump() + "\n");
}

void RpcConnection::finish() {
  if (m_finishing || m_closed) return;
  m_finishing = true;
  // shutdown() acts on the socket itself, so the reader's and writer's duplicates do not keep it open.
  m_writer->when_drained([this] { ::shutdown(m_fd, SHUT_WR); });
}

void RpcConnection::on_line(std::string_view line) {
  if (line.starts_with(kEventPrefix) && line.ends_with('}')) {
    const auto params_text = line.substr(kEventPrefix.size(), line.size() - kEventPrefix.size() - 1);
    const auto params = nlohmann::json::parse(params_text, nullptr, false);
    if (params.is_object()) return m_on_event(params_text, params);
  }
  const auto message = nlohmann::json::parse(line, nullptr, false);
  if (!message.is_object() || !message.contains("id") || !message["id"].is_number_integer()) {
    spdlog::warn("daemon connection: unexpected line from the daemon: {}", line.substr(0, 200));
    return;
  }
  const auto it = m_waiting.find(message["id"].get<std::int64_t>());
  if (it == m_waiting.end()) return;
  auto done = std::move(it->second);
  m_waiting.erase(it);
  done(message);
}

void RpcConnection::on_end() {
  m_framer.finish();
  if (m_closed) return;
  m_closed = true;
  m_waiting.clear();
  if (m_on_closed) m_on_closed();
}

}  // namespace switchboard::client
