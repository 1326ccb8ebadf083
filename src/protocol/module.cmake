# The contract's types, events, errors and OpenRPC document, generated from schema/ (tools/gen_protocol.py).
switchboard_module(protocol
  SOURCES generated/OpenRpcDocument.cpp generated/Types.cpp
  PUBLIC switchboard_json)
