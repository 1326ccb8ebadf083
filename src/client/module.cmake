# A client of the daemon (`run`, `acp`, an attaching `stdio`): the attach-or-host decision, the hosted daemon,
# the connection that speaks the stdio protocol, and the stdio relay and handoff.
switchboard_module(client
  SOURCES AttachRelay.cpp DaemonLink.cpp RpcConnection.cpp
  PUBLIC switchboard_daemon switchboard_transport)
