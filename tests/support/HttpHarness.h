#pragma once

#include <future>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "daemon/CoreMethods.h"
#include "http/HttpContext.h"
#include "http/HttpServer.h"
#include "http/SseHub.h"
#include "switchboard/bus/Egress.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/rpc/Dispatcher.h"

namespace switchboard::testing {

// The daemon's HTTP side in-process: the real bus, egress, dispatcher, SSE hub and server on an ephemeral
// loopback port, its io_context on a thread of its own (the daemon's single reactor thread). Tests talk to it
// over real sockets and publish events on the reactor thread through on_reactor().
class HttpHarness {
 public:
  explicit HttpHarness(http::SseLimits limits = {}, std::vector<std::string> cors_origins = {},
                       std::size_t max_body = 1 << 20)
      : m_hub(limits), m_context(m_dispatcher, m_hub) {
    daemon::bind_core_methods(m_dispatcher, {max_body});
    m_egress.add_sink(m_hub);
    m_context.identity_json = R"({"name":"switchboard"})";
    m_context.max_body_bytes = max_body;
    http::HttpServerOptions options;
    options.port = 0;
    options.also_ipv6_loopback = false;
    const auto error = m_server.listen(options);
    if (error) throw std::runtime_error(*error);
    m_context.policy.token = std::string(64, 'a');
    m_context.policy.allowed_hosts = http::loopback_hosts(m_server.port());
    m_context.policy.own_origins = http::loopback_origins(m_server.port());
    m_context.policy.cors_origins = std::move(cors_origins);
    m_server.start();
    m_thread = std::thread([this] { m_io.run(); });
  }
  ~HttpHarness() {
    std::promise<void> stopped;
    boost::asio::post(m_io, [this, &stopped] {
      m_server.stop();
      m_hub.stop_all();
      stopped.set_value();
    });
    stopped.get_future().wait();
    m_work.reset();
    m_thread.join();
    m_egress.remove_sink(m_hub);
  }

  std::uint16_t port() const { return m_server.port(); }
  const std::string& token() const { return m_context.policy.token; }
  std::string bearer() const { return "Authorization: Bearer " + token(); }

  // Runs `work` on the reactor thread and waits for it.
  template <class Work>
  auto on_reactor(Work work) {
    std::packaged_task<decltype(work())()> task(std::move(work));
    auto result = task.get_future();
    boost::asio::post(m_io, [&task] { task(); });
    return result.get();
  }

  void publish_deltas(int count, const std::string& session = "s-1", int first_text = 0) {
    on_reactor([&] {
      for (int i = 0; i < count; ++i) {
        m_bus.publish(session, protocol::MessageDeltaEvent{"t", "m", protocol::DeltaKind::Text, std::to_string(first_text + i)});
      }
    });
  }
  std::size_t sse_clients() { return on_reactor([this] { return m_hub.client_count(); }); }

 private:
  boost::asio::io_context m_io{1};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> m_work{m_io.get_executor()};
  bus::EventBus m_bus;
  bus::EventBus::Installation m_installation{m_bus};
  bus::Egress m_egress{m_bus};
  rpc::Dispatcher m_dispatcher;
  http::SseHub m_hub;
  http::HttpContext m_context;
  http::HttpServer m_server{m_io, m_context};
  std::thread m_thread;
};

}  // namespace switchboard::testing
