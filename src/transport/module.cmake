# Descriptors read and written on the reactor, line framing, the stdio transport and the daemon's Unix socket.
switchboard_module(transport
  SOURCES FdReader.cpp FdWriter.cpp LineFramer.cpp LocalSocketServer.cpp StdioHandoff.cpp StdioTransport.cpp
  PUBLIC switchboard_bus switchboard_rpc switchboard_protocol)
