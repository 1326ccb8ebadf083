#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::engine {

// Any callback a client's reply hangs on (`Done` of T): called at most once with what it is given,
// or, when it is destroyed uncalled (the session it waited in was deleted), with `dropped`, posted.
template <class T>
std::function<void(T)> answered_or(boost::asio::io_context& io, std::function<void(T)> done, T dropped) {
  struct State {
    State(boost::asio::io_context& context, std::function<void(T)> then, T fallback)
        : io(context), done(std::move(then)), dropped(std::move(fallback)) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    ~State() {
      if (!done) return;
      boost::asio::post(io, [done = std::move(done), dropped = std::move(dropped)] { done(dropped); });
    }
    boost::asio::io_context& io;
    std::function<void(T)> done;
    T dropped;
  };
  auto state = std::make_shared<State>(io, std::move(done), std::move(dropped));
  return [state](T value) {
    if (!state->done) return;
    auto once = std::exchange(state->done, nullptr);
    once(std::move(value));
  };
}

// The completion the engine hands an adapter for an operation a client waits for (set_model, set_mode, an
// answer): it passes the adapter's answer on once, and if the adapter drops it unanswered (destroyed with it
// pending) the caller still gets `dropped`, posted to the io_context. A reply is never lost with an adapter.
inline adapters::Completion answered_once(boost::asio::io_context& io, adapters::Completion done, adapters::AdapterError dropped) {
  return answered_or<std::optional<adapters::AdapterError>>(io, std::move(done), std::move(dropped));
}

}  // namespace switchboard::engine
