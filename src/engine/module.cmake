# Sessions, their agents and turns, the request broker, the rule book: knows no JSON-RPC and no store.
switchboard_module(engine
  SOURCES
    Engine.cpp
    EngineWorktrees.cpp
    HistoryTranscript.cpp
    McpServerCheck.cpp
    PrestartedAgent.cpp
    RequestBroker.cpp
    RuleBook.cpp
    Session.cpp
    SessionListIndex.cpp
    TurnCheckpoints.cpp
  PUBLIC switchboard_adapter_api switchboard_bus switchboard_checkpoint switchboard_protocol switchboard_worktree
  PRIVATE switchboard_json switchboard_support)
