#include "daemon/CoreMethods.h"

#include <unistd.h>

#include <algorithm>
#include <iterator>

#include <spdlog/spdlog.h>

#include "switchboard/bus/EventBus.h"
#include "switchboard/protocol/generated/Methods.h"
#include "switchboard/protocol/generated/OpenRpcDocument.h"
#include "switchboard/support/Clock.h"
#include "switchboard/support/RandomId.h"
#include "switchboard/version.h"

namespace switchboard::daemon {
namespace {

using protocol::ErrorCode;

std::vector<std::int64_t> supported_versions() {
  return {std::begin(protocol::kSupportedVersions), std::end(protocol::kSupportedVersions)};
}

void on_initialize(const CoreMethodsConfig& config, const protocol::InitializeParams& params,
                   rpc::Reply<protocol::InitializeResult> reply, const rpc::CallContext& context) {
  auto& peer = *context.peer;
  if (context.is_notification) {
    // No answer can reach the client, so it would not know its clientId or whether its version was accepted:
    // the connection stays as it was, and the refusal (which the dispatcher drops) is logged.
    spdlog::warn("initialize sent as a notification (no id) is ignored; the connection stays uninitialized");
    return reply(rpc::RpcError{ErrorCode::InvalidRequest, "initialize must be a call with an id", nullptr});
  }
  if (peer.initialized()) {
    return reply(rpc::RpcError{ErrorCode::AlreadyInitialized, "initialize was already called on this connection", nullptr});
  }
  const auto versions = supported_versions();
  if (std::find(versions.begin(), versions.end(), params.protocol_version) == versions.end()) {
    std::string list;
    for (const auto v : versions) list += (list.empty() ? "" : ", ") + std::to_string(v);
    return reply(rpc::RpcError{ErrorCode::ProtocolMismatch,
                               "protocol version " + std::to_string(params.protocol_version) +
                                   " is not supported; this daemon speaks " + list,
                               nlohmann::json{{"requested", params.protocol_version}, {"supported", versions}}});
  }
  std::string client_id = random_id("client-", 6);
  const bool answers_permissions = params.capabilities && params.capabilities->answers_permissions.value_or(false);
  peer.mark_initialized(client_id, params);

  protocol::InitializeResult result;
  result.protocol_version = params.protocol_version;
  result.supported_versions = versions;
  result.server_info = protocol::ServerInfo{"switchboard", std::string(kVersion), static_cast<std::int64_t>(::getpid())};
  result.capabilities = protocol::ServerCapabilities{true, static_cast<std::int64_t>(config.max_request_bytes)};
  result.client_id = client_id;
  reply(result);

  bus::EventBus::the().publish_global(
      protocol::ClientAttachedEvent{std::move(client_id), peer.transport(), answers_permissions});
}

}  // namespace

void bind_core_methods(rpc::Dispatcher& dispatcher, CoreMethodsConfig config) {
  // clang-format off
  dispatcher.bind<protocol::InitializeMethod>(
      [config](const auto& params, auto reply, const auto& context) { on_initialize(config, params, std::move(reply), context); });
  dispatcher.bind<protocol::PingMethod>(
      [](const protocol::PingParams&, rpc::Reply<protocol::PingResult> reply, const rpc::CallContext&) { reply({unix_millis_now()}); });
  dispatcher.bind<protocol::RpcDiscoverMethod>(
      [](const protocol::RpcDiscoverParams&, rpc::Reply<nlohmann::json> reply, const rpc::CallContext&) { reply.raw(protocol::openrpc_document_text()); });
  // clang-format on
  dispatcher.bind<protocol::DaemonRotateTokenMethod>(
      [rotate = config.rotate_token](const protocol::DaemonRotateTokenParams&, rpc::Reply<protocol::DaemonRotateTokenResult> reply,
                                     const rpc::CallContext&) {
        auto token = rotate ? rotate() : std::nullopt;
        if (!token) return reply(rpc::RpcError{protocol::ErrorCode::Unsupported, "this daemon serves no HTTP, so it has no token", nullptr});
        reply(protocol::DaemonRotateTokenResult{std::move(*token)});
      });
  dispatcher.bind<protocol::DaemonHttpInfoMethod>(
      [info = config.http_info](const protocol::DaemonHttpInfoParams&, rpc::Reply<protocol::DaemonHttpInfoResult> reply,
                                const rpc::CallContext&) {
        auto result = info ? info() : std::nullopt;
        if (!result) return reply(rpc::RpcError{protocol::ErrorCode::Unsupported, "this daemon serves no HTTP", nullptr});
        reply(std::move(*result));
      });
}

}  // namespace switchboard::daemon
