#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/json/DecodeContext.h"
#include "switchboard/rpc/Reply.h"
#include "switchboard/rpc/RpcError.h"
#include "switchboard/rpc/RpcPeer.h"

namespace switchboard::rpc {

// What a handler knows about the call besides its params.
struct CallContext {
  std::shared_ptr<RpcPeer> peer;
  // The call has no id: whatever the handler answers is dropped, so the client learns nothing. Handlers whose
  // effect the client must learn about (initialize) refuse such calls.
  bool is_notification = false;
};

// Method descriptors generated from schema/methods/ (protocol/generated/Methods.h). Requiring kFromSchema
// means a method that the schema does not declare cannot be bound: it does not compile.
template <class M>
concept SchemaMethod = M::kFromSchema && requires {
  typename M::Params;
  typename M::Result;
  { M::kName } -> std::convertible_to<std::string_view>;
};

// The one JSON-RPC 2.0 dispatcher. Every transport (stdio, HTTP) hands it whole messages, so methods, error
// codes and semantics are identical everywhere.
//
// It parses, validates the envelope, handles batches, decodes params into the generated C++ type (a failure
// becomes -32602 naming the JSON pointer of the bad field) and calls the typed handler. Handlers may answer
// later: a long call never blocks others, and responses may come out of order. Runs on the io_context thread.
class Dispatcher {
 public:
  template <SchemaMethod Method, class Handler>
  void bind(Handler handler) {
    Entry entry;
    entry.allowed_before_initialize = Method::kAllowedBeforeInitialize;
    entry.invoke = [handler = std::move(handler)](const nlohmann::json& params, ReplyOnce reply,
                                                  const CallContext& context) mutable {
      typename Method::Params decoded{};
      json::DecodeContext decode_context;
      if (!decode(params, decoded, decode_context)) {
        reply.fail(RpcError::invalid_params(Method::kName, decode_context.error()));
        return;
      }
      handler(decoded, Reply<typename Method::Result>(std::move(reply)), context);
    };
    add(Method::kName, std::move(entry));
  }

  // Handles one message (a request, a notification or a batch) from `peer`. Responses go to
  // peer->send_response(), possibly after this returns.
  void handle_message(std::string_view text, const std::shared_ptr<RpcPeer>& peer);
  // The same for an already-parsed value (the fuzzer and HTTP reuse this).
  void handle_value(const nlohmann::json& message, const std::shared_ptr<RpcPeer>& peer);

  // While draining, new calls are refused with ShuttingDown.
  void set_draining(bool draining) { m_draining = draining; }

  std::vector<std::string> bound_methods() const;
  std::size_t calls_in_flight() const { return *m_in_flight; }

 private:
  struct Entry {
    bool allowed_before_initialize = false;
    std::function<void(const nlohmann::json&, ReplyOnce, const CallContext&)> invoke;
  };

  void add(std::string_view name, Entry entry);
  static Completion answer_to(const std::shared_ptr<RpcPeer>& peer);
  // Checks the envelope of one message (a batch member, or a whole message) and calls handle_call.
  void handle_single(const nlohmann::json& message, const std::shared_ptr<RpcPeer>& peer, Completion done);
  // One call whose envelope is valid, however it was read: finds the method, applies the dispatcher's rules
  // (draining, initialize, by-name params) and invokes the handler. `params` is null when the call has none.
  void handle_call(nlohmann::json id, bool is_notification, std::string_view method, const nlohmann::json* params,
                   const std::shared_ptr<RpcPeer>& peer, Completion done);

  std::map<std::string, Entry, std::less<>> m_methods;
  bool m_draining = false;
  // Shared with completions, which may run after the dispatcher is gone at shutdown.
  std::shared_ptr<std::size_t> m_in_flight = std::make_shared<std::size_t>(0);
};

}  // namespace switchboard::rpc
