# `switchboard acp`: the Agent Client Protocol served to an editor, as a client of the daemon.
switchboard_module(acp
  SOURCES AcpCommand.cpp AcpErrors.cpp AcpMcpServers.cpp AcpPermissions.cpp AcpPrompt.cpp AcpServer.cpp AcpUpdates.cpp
  PUBLIC switchboard_client switchboard_daemon switchboard_protocol switchboard_transport
  PRIVATE switchboard_process)
