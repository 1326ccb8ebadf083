#pragma once

#include <unistd.h>

#include <optional>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

#include "engine/Engine.h"

namespace switchboard::testing {

// The outcome of an engine call that answers through a callback: at once for a session in memory (the reactor is
// not run then), else once the reactor has run the store's answer (at most five seconds).
template <class T, class Call>
engine::Outcome<T> awaited(boost::asio::io_context& io, Call&& call) {
  std::optional<engine::Outcome<T>> outcome;
  call([&outcome](engine::Outcome<T> result) { outcome = std::move(result); });
  for (int waited_ms = 0; !outcome && waited_ms < 5000;) {
    io.restart();
    if (io.poll() == 0) {
      ::usleep(1000);
      ++waited_ms;
    }
  }
  REQUIRE(outcome.has_value());
  return std::move(*outcome);
}

inline engine::Outcome<protocol::SessionInfo> get_session(engine::Engine& engine, boost::asio::io_context& io,
                                                          const std::string& id) {
  return awaited<protocol::SessionInfo>(io, [&](auto done) { engine.get_session(id, done); });
}

inline engine::Outcome<protocol::SessionListResult> list_sessions(engine::Engine& engine, boost::asio::io_context& io,
                                                                  const protocol::SessionListParams& params) {
  return awaited<protocol::SessionListResult>(io, [&](auto done) { engine.list_sessions(params, done); });
}

// session.list's page, which the test requires to succeed.
inline protocol::SessionListResult listed(engine::Engine& engine, boost::asio::io_context& io,
                                          const protocol::SessionListParams& params) {
  auto outcome = list_sessions(engine, io, params);
  REQUIRE(std::holds_alternative<protocol::SessionListResult>(outcome));
  return std::get<protocol::SessionListResult>(std::move(outcome));
}

inline engine::Outcome<protocol::SessionAttachResult> attach(engine::Engine& engine, boost::asio::io_context& io,
                                                             const std::string& id) {
  return awaited<protocol::SessionAttachResult>(io, [&](auto done) { engine.attach(id, done); });
}

inline engine::Outcome<bool> cancel(engine::Engine& engine, boost::asio::io_context& io, const std::string& id) {
  return awaited<bool>(io, [&](auto done) { engine.cancel(id, done); });
}

inline engine::Outcome<protocol::RememberedRule> add_session_rule(engine::Engine& engine, boost::asio::io_context& io,
                                                                  const std::string& id, protocol::PermissionRule rule,
                                                                  bool allow) {
  return awaited<protocol::RememberedRule>(io, [&](auto done) { engine.add_session_rule(id, rule, allow, done); });
}

}  // namespace switchboard::testing
