# The JSON-RPC dispatcher every transport hands its requests to, and typed replies.
switchboard_module(rpc
  SOURCES Dispatcher.cpp PlainEnvelope.cpp Reply.cpp RpcError.cpp
  PUBLIC switchboard_protocol switchboard_json
  PRIVATE switchboard_support)
