#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <nlohmann/json.hpp>

#include "daemon/CoreMethods.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/transport/FdReader.h"
#include "switchboard/transport/StdioTransport.h"
#include "support/FdIo.h"
#include "support/InitializeRequest.h"
#include "support/Pipe.h"

namespace stdio_transport_tests {

using nlohmann::json;
using switchboard::testing::Pipe;
using switchboard::testing::kInitializeLine;
using switchboard::testing::write_all;
namespace protocol = switchboard::protocol;
using switchboard::transport::StdioTransport;

// Reads everything until EOF on another thread (a client process would do the same).
struct Drain {
  std::string bytes;
  std::thread thread;
  explicit Drain(int fd) : thread([this, fd] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) bytes.append(buf, static_cast<std::size_t>(n));
  }) {}
  std::vector<json> lines() {
    thread.join();
    std::vector<json> out;
    std::size_t start = 0;
    while (start < bytes.size()) {
      const auto end = bytes.find('\n', start);
      REQUIRE(end != std::string::npos);  // every line is terminated
      out.push_back(json::parse(bytes.substr(start, end - start)));
      start = end + 1;
    }
    return out;
  }
};

// An in-process stdio daemon over pipes: the real transport, dispatcher, bus and egress.
struct Harness {
  boost::asio::io_context io{1};
  switchboard::bus::EventBus bus;
  switchboard::bus::EventBus::Installation installation{bus};
  switchboard::bus::Egress egress{bus};
  switchboard::rpc::Dispatcher dispatcher;
  Pipe input;
  Pipe output;
  bool input_closed = false;
  std::unique_ptr<StdioTransport> transport;

  explicit Harness(int input_fd = -1) {
    switchboard::daemon::bind_core_methods(dispatcher, {1 << 20});
    StdioTransport::Options options;
    options.input_fd = input_fd >= 0 ? input_fd : input.read_end();
    options.output_fd = output.write_end();
    transport = std::make_unique<StdioTransport>(io, dispatcher, egress, options, [this] {
      input_closed = true;
      transport->when_output_drained([this] { transport.reset(); });
    });
    transport->start();
    output.close_write();  // the transport holds its own duplicate
  }
};

TEST_CASE("stdio: one publish gives exactly one event line, after initialize only", "[stdio]") {
  Harness h;
  Drain drain(h.output.read_end());
  // Before the handshake, events are not sent to this client.
  h.bus.publish("s-1", protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, "early"});
  REQUIRE(write_all(h.input.write_end(), kInitializeLine));
  std::function<void()> publish_when_ready = [&] {
    if (!h.transport->peer()->initialized()) {
      boost::asio::post(h.io, publish_when_ready);
      return;
    }
    h.bus.publish("s-1", protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, "late"});
    h.input.close_write();  // end of input: the transport drains and closes
  };
  boost::asio::post(h.io, publish_when_ready);
  h.io.run();
  CHECK(h.input_closed);
  const auto lines = drain.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("id") == 0);
  CHECK(lines[1].at("method") == "event");
  CHECK(lines[1].at("params").at("data").at("text") == "late");
  CHECK(lines[1].at("params").at("seq") == 2);  // seq 1 was the early event, which this client never saw
}

TEST_CASE("stdio: 10^5 events keep their order on the wire, interleaved with responses", "[stdio]") {
  Harness h;
  Drain drain(h.output.read_end());
  REQUIRE(write_all(h.input.write_end(), kInitializeLine));
  constexpr int kEvents = 100000;
  int published = 0;
  std::function<void()> publish_batch = [&] {
    if (!h.transport->peer()->initialized()) {
      boost::asio::post(h.io, publish_batch);
      return;
    }
    for (int i = 0; i < 1000 && published < kEvents; ++i, ++published) {
      h.bus.publish("s-" + std::to_string(published % 5),
                    protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, std::to_string(published)});
    }
    if (published == kEvents) {
      REQUIRE(write_all(h.input.write_end(), R"({"jsonrpc":"2.0","id":"last","method":"ping"})" "\n"));
      h.input.close_write();
      return;
    }
    boost::asio::post(h.io, publish_batch);
  };
  boost::asio::post(h.io, publish_batch);
  h.io.run();
  const auto lines = drain.lines();
  // initialize response + events + ping response + the shutdown-free end (no daemon here).
  REQUIRE(lines.size() == kEvents + 2);
  int expected = 0;
  for (const auto& line : lines) {
    if (!line.contains("method")) continue;
    REQUIRE(line.at("params").at("data").at("text") == std::to_string(expected));
    REQUIRE(line.at("params").at("seq") == expected + 1);
    ++expected;
  }
  CHECK(expected == kEvents);
  CHECK(lines.back().at("id") == "last");
}

TEST_CASE("stdio: a regular file and /dev/null work as input", "[stdio]") {
  SECTION("regular file") {
    char path[] = "/tmp/switchboard-stdio-XXXXXX";
    const int fd = ::mkstemp(path);
    REQUIRE(fd >= 0);
    ::unlink(path);
    REQUIRE(write_all(fd, kInitializeLine + R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));  // no final newline
    REQUIRE(::lseek(fd, 0, SEEK_SET) == 0);
    Harness h(fd);
    Drain drain(h.output.read_end());
    h.io.run();
    ::close(fd);
    CHECK(h.input_closed);
    const auto lines = drain.lines();
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].at("id") == 1);
  }
  SECTION("/dev/null") {
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    Harness h(fd);
    Drain drain(h.output.read_end());
    h.io.run();
    ::close(fd);
    CHECK(h.input_closed);
    CHECK(drain.lines().empty());
  }
}

TEST_CASE("stdio: an over-long line is answered and skipped, the stream recovers", "[stdio]") {
  boost::asio::io_context io{1};
  switchboard::bus::EventBus bus;
  switchboard::bus::Egress egress(bus);
  switchboard::rpc::Dispatcher dispatcher;
  switchboard::daemon::bind_core_methods(dispatcher, {1024});
  Pipe input;
  Pipe output;
  StdioTransport::Options options{input.read_end(), output.write_end(), 1024};
  std::unique_ptr<StdioTransport> transport;
  transport = std::make_unique<StdioTransport>(io, dispatcher, egress, options,
                                               [&] { transport->when_output_drained([&] { transport.reset(); }); });
  transport->start();
  output.close_write();
  Drain drain(output.read_end());
  std::thread writer([&] {
    REQUIRE(write_all(input.write_end(), R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")" + std::string(5000, 'x') + "\"}}\n"));
    REQUIRE(write_all(input.write_end(), R"({"jsonrpc":"2.0","id":2,"method":"ping"})" "\n"));
    input.close_write();
  });
  io.run();
  writer.join();
  const auto lines = drain.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].at("error").at("code") == -32004);
  CHECK(lines[0].at("id").is_null());
  CHECK(lines[0].at("error").at("data").at("limit") == 1024);
  CHECK(lines[1].at("id") == 2);
}

// The writer of a pipe learns that nobody reads any more (EPIPE) as soon as the reader is stopped, with a read
// in flight and without the reactor running again: a handed-over stdin or a child's pipe is let go at once.
// SIGPIPE ignored while it lives (a write to a pipe nobody reads is then EPIPE, not the end of the test binary).
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &m_previous);
  }
  ~SigpipeIgnored() { ::sigaction(SIGPIPE, &m_previous, nullptr); }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  struct sigaction m_previous {};
};

TEST_CASE("fd reader: stop closes its duplicate at once, even with a read in flight", "[stdio]") {
  const SigpipeIgnored sigpipe_ignored;
  boost::asio::io_context io{1};
  Pipe pipe;
  std::string seen;
  auto reader = switchboard::transport::FdReader::create(
      io, pipe.read_end(), [&](std::string_view chunk) { seen.append(chunk); }, [] {});
  pipe.close_read();  // the reader's duplicate is now the only read end
  reader->start();
  REQUIRE(write_all(pipe.write_end(), "one\n"));
  io.run_one();  // the read completes and the next one is in flight
  CHECK(seen == "one\n");
  CHECK(::write(pipe.write_end(), "x", 1) == 1);  // still read by someone
  reader->stop();
  errno = 0;
  CHECK(::write(pipe.write_end(), "y", 1) == -1);
  CHECK(errno == EPIPE);
  io.run();  // the aborted read completes quietly
  CHECK(seen == "one\n");
}

}  // namespace stdio_transport_tests
