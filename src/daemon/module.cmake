# The protocol's own methods (initialize, ping, rpc.discover): a library of their own, which any dispatcher can
# serve without the rest of the daemon (the fuzzers do).
switchboard_module(core_methods
  SOURCES CoreMethods.cpp
  PUBLIC switchboard_rpc
  PRIVATE switchboard_bus switchboard_protocol switchboard_support)

# The daemon: owns and wires everything of one daemon process (Daemon.h), binds the methods, the data
# directory, logging, the settings turned into its options.
switchboard_module(daemon
  SOURCES
    Daemon.cpp
    DaemonWiring.cpp
    DataDirectory.cpp
    EngineMethods.cpp
    EventLogMethods.cpp
    InstanceProbe.cpp
    Logging.cpp
    LoggingSinks.cpp
    Methods.cpp
    SearchMethods.cpp
    SessionMarkdown.cpp
    StoredSessions.cpp
  PUBLIC
    switchboard_bus switchboard_checkpoint switchboard_config switchboard_core_methods switchboard_engine switchboard_http
    switchboard_process switchboard_protocol switchboard_rpc switchboard_store switchboard_transport
  PRIVATE switchboard_json switchboard_support)
