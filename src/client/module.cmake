# A client of the daemon (`run`, `acp`, an attaching `stdio`): the attach-or-host decision, the hosted daemon,
# the connection that speaks the stdio protocol, the stdio relay and handoff, and the MCP servers a client hands
# to session.create, checked before it starts anything.
switchboard_module(client
  SOURCES AttachRelay.cpp DaemonLink.cpp McpServerList.cpp RpcConnection.cpp
  PUBLIC switchboard_daemon switchboard_transport)
